/**
 * Table shapes. Times are Unix epoch milliseconds in BIGINT columns; booleans are 0/1
 * integers, so the same SQL runs on SQLite and PostgreSQL. Each table belongs to one
 * module (named beside it); no other module reads or writes it, with these deliberate
 * exceptions, each one statement or one transaction that would otherwise cost round trips
 * or leave a half-done change:
 * - login/store.ts, the trusted-device login: one read of clients, devices, users,
 *   mfa_methods and mfa_remembered, and one write that spends the challenge in spent_tokens
 *   (the statement spent-tokens/ builds, spendQuery) and, only if that went in, stamps
 *   devices and inserts auth_codes, events and webhook_deliveries;
 * - authorization-codes/store.ts, the code exchange's one statement: it also reads clients
 *   and users and records the pair in client_users;
 * - clients/store.ts and users/store.ts, deleting a client or a user: the rows bound to it,
 *   in the other modules' tables, in one transaction;
 * - oidc/store.ts, ending the sign-in sessions of a user's passkeys: a sub-select of passkeys.
 */
import type { Kysely } from 'kysely';

export interface Database {
  /** clients/ */
  clients: {
    id: string;
    name: string;
    publishable_key_hash: string;
    secret_key_hash: string;
    origins: string; // JSON array of origins
    mfa_policy: string;
    /** RS256 (default), ES256 or EdDSA: how this client's ID tokens are signed. */
    id_token_signed_response_alg: string;
    created_at: number;
    /** JSON array of redirect URIs, matched exactly by the authorization endpoint (oidc/). */
    redirect_uris: string;
    /** RFC 6749 2.1: 'confidential' (has a secret key) or 'public' (none; PKCE required). */
    client_type: string;
    /** JSON array of URIs the end-session endpoint may return to (OIDC RP-Initiated Logout 1.0 3.1), matched exactly. */
    post_logout_redirect_uris: string;
    /** 1: a passkey sign-in (user verification required) also passes this app's MFA; 0: the user's MFA step follows it. */
    passkey_satisfies_mfa: number;
  };
  /** accounts/ */
  users: {
    id: string;
    email: string;
    created_at: number;
    /** Set by an operator (users/): the account is invisible to every sign-in path until enabled. */
    disabled_at: number | null;
  };
  /** accounts/: consecutive failures per account, across challenges */
  account_failures: {
    user_key: string;
    failures: number;
    locked_until: number | null;
  };
  /** devices/ */
  devices: {
    id: string;
    user_id: string;
    client_id: string;
    public_jwk: string;
    crypto_version: string;
    created_at: number;
    last_used_at: number | null;
    /** Revoked by the user, the application's backend or the "this wasn't me" link. */
    removed_at: number | null;
    /** The user's name for it; null shows "browser on os". */
    name: string | null;
    /** Parsed from the User-Agent at registration (the raw header is not kept). */
    browser: string | null;
    os: string | null;
  };
  /**
   * spent-tokens/: the one replay table. Single-use tokens already spent (device challenges,
   * "this wasn't me" links, passkey challenges, delegation request ids), kept until they would
   * have expired; a spend is one atomic insert of `purpose:keyed hash` (the primary key).
   */
  spent_tokens: {
    id: string;
    /** device-challenge, device-notice, passkey-challenge or delegation-request (SpentPurpose). */
    purpose: string;
    expires_at: number;
    consumed_at: number;
  };
  /** registration/: one email-OTP verification and the device registration it leads to */
  registrations: {
    id: string;
    client_id: string;
    email: string;
    otp_hash: string;
    attempts: number;
    remember_device: number;
    crypto_version: string;
    code_challenge: string | null;
    created_at: number;
    otp_expires_at: number;
    verified_at: number | null;
    expires_at: number;
    completed_at: number | null;
  };
  /** authorization-codes/ */
  auth_codes: {
    id: string;
    client_id: string;
    user_id: string;
    code_challenge: string | null;
    amr: string; // JSON array
    auth_time: number;
    /** The remembered device that signed in or was registered (the ID token's device_id). */
    device_id: string | null;
    expires_at: number;
    consumed_at: number | null;
    /** The access token the redemption issued: revoked if the code is presented again. */
    access_token_jti: string | null;
    /** Set when issued by the authorization endpoint: the token request must repeat it (RFC 6749 4.1.3). */
    redirect_uri: string | null;
    /** OIDC Core 3.1.2.1: echoed in the ID token. */
    nonce: string | null;
    /** The granted scope of a code from /authorize (`openid email`, maybe `offline_access`); null: `openid email`. */
    scope: string | null;
  };
  /** oidc/: an authorization request waiting for the hosted sign-in (single use, short-lived) */
  authorization_requests: {
    /** Keyed hash of the request id the hosted page carries. */
    id: string;
    /** Keyed hash of the cookie that binds the request to the browser that made it. */
    browser_binding_hash: string;
    client_id: string;
    redirect_uri: string;
    state: string | null;
    nonce: string | null;
    code_challenge: string | null;
    prompt: string | null;
    max_age_seconds: number | null;
    login_hint: string | null;
    /** The scope granted if the sign-in succeeds (space-separated). */
    scope: string | null;
    created_at: number;
    expires_at: number;
    consumed_at: number | null;
    /** A finished sign-in held while the hosted page shows its recovery codes (all null otherwise). */
    held_user_id: string | null;
    held_device_id: string | null;
    held_amr: string | null; // JSON array
    held_auth_time: number | null;
  };
  /** oidc/: the service's own sign-in session (the SSO cookie), bound to a remembered device */
  sign_in_sessions: {
    /** Keyed hash of the cookie value. */
    id: string;
    user_id: string;
    device_id: string;
    amr: string; // JSON array
    auth_time: number;
    last_used_at: number;
    /** Absolute end; the idle end is last_used_at plus the idle timeout. */
    expires_at: number;
    ended_at: number | null;
  };
  /**
   * oidc/: one sign-in's grant of offline access (RFC 9700 4.14.2): its tokens rotate on every
   * use, and a reused one revokes the whole family. The id is the access token jti of the code
   * exchange that started it (a replayed code revokes the family by it).
   */
  refresh_token_families: {
    id: string;
    client_id: string;
    user_id: string;
    /** The remembered device the sign-in used: revoking or expiring it ends the family. */
    device_id: string;
    scope: string;
    amr: string; // JSON array
    auth_time: number;
    created_at: number;
    /** Absolute end (REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS after the sign-in's code exchange). */
    expires_at: number;
    revoked_at: number | null;
    /** reuse, revocation, code_replay, user_disabled */
    revoked_reason: string | null;
  };
  /** oidc/: each refresh token of a family, by the keyed hash of its value; used once (`used_at`). */
  refresh_tokens: {
    id: string;
    family_id: string;
    /** The access token issued with this refresh token: revoked with the family. */
    access_token_jti: string;
    created_at: number;
    /** This token's idle end (REFRESH_TOKEN_IDLE_TTL_SECONDS), never past the family's. */
    expires_at: number;
    /** Kept until the family ends, so a used token presented again is recognised as reuse. */
    family_expires_at: number;
    used_at: number | null;
  };
  /** authorization-codes/: access tokens revoked before their expiry (code reuse). */
  revoked_access_tokens: {
    jti: string;
    expires_at: number;
  };
  /** throttle/ */
  rate_counters: {
    key: string;
    window_start: number;
    count: number;
    expires_at: number;
  };
  /** keys/ */
  signing_keys: {
    kid: string;
    alg: string;
    public_jwk: string;
    private_jwk_sealed: string;
    created_at: number;
    retired_at: number | null;
  };
  /** webauthn/: passkeys (WebAuthn discoverable credentials), listed with the user's devices */
  passkeys: {
    /** `dev_…`, the id the device list, rename and revoke use. */
    id: string;
    user_id: string;
    client_id: string;
    /** The relying party id the passkey was created for; an assertion must be for the same. */
    rp_id: string;
    /** base64url credential id (unique: an authenticator's second registration is refused). */
    credential_id: string;
    /** base64url COSE public key (RFC 9053). */
    public_key: string;
    /** base64url user handle given to the authenticator (user.id); an assertion's must match. */
    user_handle: string;
    /** The authenticator's signature counter at the last use (0: the authenticator keeps none). */
    sign_count: number;
    /** JSON array of transports the browser reported (hints for later ceremonies only). */
    transports: string;
    /** WebAuthn BE flag at registration: the passkey may be synced (multi-device). Fixed for its life. */
    backup_eligible: number;
    /** WebAuthn BS flag at the last use: the passkey is backed up (synced) now. */
    backed_up: number;
    /** The authenticator's model (AAGUID); all zeros with attestation none from many authenticators. */
    aaguid: string;
    name: string;
    created_at: number;
    last_used_at: number | null;
    /** Revoked by the user, the application's backend or an operator. */
    removed_at: number | null;
  };
  /** mfa/: each user's confirmed MFA method */
  mfa_methods: {
    user_id: string;
    method: string;
    phone: string | null;
    totp_secret_sealed: string | null;
    /** Newest TOTP time step accepted: an older or equal one is refused (RFC 6238 5.2). */
    last_totp_step: number | null;
    /** Changes whenever the method changes; remembered devices are bound to it. */
    version: string;
    confirmed_at: number;
  };
  /** mfa/: one MFA step (a login challenge or the confirmation of an enrollment) */
  mfa_sessions: {
    id: string;
    /** 'login' | 'enroll' | 'change-current' (proving the factor in force) | 'change' (confirming the new one) */
    purpose: string;
    client_id: string;
    user_id: string;
    method: string;
    phone: string | null;
    totp_secret_sealed: string | null;
    /** The remembered device being logged in with, or the one registered once this step passes. */
    device_id: string | null;
    pending_device: string | null; // JSON {publicJwk, cryptoVersion}
    code_challenge: string | null;
    amr: string; // JSON array: the factors already passed
    auth_time: number;
    otp_hash: string | null;
    otp_expires_at: number | null;
    attempts: number;
    created_at: number;
    initiated_at: number | null;
    verified_at: number | null;
    expires_at: number;
    /** 'change-current' only: JSON {method, phone} of the method asked for. */
    change_to: string | null;
  };
  /** mfa/: devices that skip MFA until expires_at (remember_me), bound to the method's version */
  mfa_remembered: {
    device_id: string;
    user_id: string;
    method_version: string;
    expires_at: number;
  };
  /**
   * recovery-codes/: the user's current set of single-use recovery codes, as keyed hashes. They
   * do not expire (NIST SP 800-63B 5.1.2 look-up secrets): a regeneration or an MFA reset removes the set.
   */
  recovery_codes: {
    id: string;
    user_id: string;
    /** HMAC under the server key of `user_id:code` (the code normalised, without its hyphen). */
    code_hash: string;
    created_at: number;
    /** Set once, atomically, when the code is used. */
    used_at: number | null;
  };
  /** clients/: which users have signed in to which client (delegation may act only on those) */
  client_users: {
    client_id: string;
    user_id: string;
    first_signed_in_at: number;
  };
  /** delegation/: the service's own Ed25519 and X25519 key pairs (one row, id 'idp') */
  delegation_idp_keys: {
    id: string;
    signing_private_sealed: string;
    signing_public_pem: string;
    encryption_private_sealed: string;
    encryption_public_pem: string;
    created_at: number;
  };
  /** delegation/: each service provider's public keys */
  delegation_sp_keys: {
    client_id: string;
    verify_public_pem: string;
    encryption_public_pem: string;
    created_at: number;
  };
  /** sms/: the development SMS outbox */
  sms_outbox: {
    id: string;
    recipient: string;
    body: string;
    created_at: number;
  };
  /** events/: the append-only audit trail; never a secret or a code */
  events: {
    id: string;
    type: string;
    at: number;
    user_id: string | null;
    client_id: string | null;
    device_id: string | null;
    ip: string | null;
    user_agent: string | null;
    /** Who acted when not the user: 'cli', or an admin key's id. */
    actor: string | null;
    /** JSON object of non-secret facts (a reason code, a count). */
    detail: string | null;
  };
  /** admin/: keys of the admin API, stored as keyed hashes */
  admin_keys: {
    id: string;
    name: string;
    key_hash: string;
    created_at: number;
    last_used_at: number | null;
    revoked_at: number | null;
  };
  /** webhooks/: endpoints operators registered for event webhooks */
  webhook_endpoints: {
    id: string;
    url: string;
    /** 'all', or event types separated by commas. */
    event_types: string;
    /** The Standard Webhooks signing secret (whsec_…), sealed under the server secret (crypto/seal.ts). */
    secret_sealed: string;
    created_at: number;
    disabled_at: number | null;
    /** Why it is disabled: 'operator', or 'failing' when the service gave up on it. */
    disabled_reason: string | null;
    /** Failed attempts since the last 2xx. */
    failure_count: number;
    /** The first failure since the last 2xx; null while healthy. */
    failing_since: number | null;
    last_error: string | null;
    last_error_at: number | null;
    last_delivered_at: number | null;
  };
  /** webhooks/: the outbox, one row per (event, subscribed endpoint), written with the event */
  webhook_deliveries: {
    /** The message id sent as webhook-id, the same for every attempt. */
    id: string;
    endpoint_id: string;
    event_id: string;
    /** The event's user: deliveries of one user go to an endpoint in event order. */
    user_id: string | null;
    /** The JSON body sent: {type, timestamp, data}, fixed when the event was recorded. */
    payload: string;
    created_at: number;
    attempts: number;
    next_attempt_at: number;
    /** A node's claim: no other node takes the row before this time. */
    lease_until: number;
    lease_owner: string | null;
    /** Delivered (2xx) or given up; swept afterwards. */
    done_at: number | null;
    delivered: number;
    last_error: string | null;
  };
  /** mail/: the development mailbox */
  mailbox: {
    id: string;
    recipient: string;
    subject: string;
    text_body: string;
    html_body: string;
    created_at: number;
  };
}

export type Db = Kysely<Database>;
