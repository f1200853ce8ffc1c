/**
 * Part of Database (../schema.ts, which lists the exceptions to one owner per table): clients,
 * users, devices and new-device sign-ins (registrations). Each table's owner is named beside it.
 */
export interface AccountTables {
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
    /** RFC 6749 2.1: 'confidential' (has a secret key), 'public' (none; PKCE required) or 'machine' (client_credentials only). */
    client_type: string;
    /** JSON array of URIs the end-session endpoint may return to (OIDC RP-Initiated Logout 1.0 3.1), matched exactly. */
    post_logout_redirect_uris: string;
    /** 1: a passkey sign-in (user verification required) also passes this app's MFA; 0: the user's MFA step follows it. */
    passkey_satisfies_mfa: number;
    /** 1: every token request must carry a DPoP proof (RFC 9449 5.2 dpop_bound_access_tokens); 0 (default): optional. */
    dpop_bound_access_tokens: number;
    /** OIDC Back-Channel Logout 1.0 2.2: where logout tokens are POSTed; null: none. */
    backchannel_logout_uri: string | null;
    /** 1: every logout token for this client carries `sid`. */
    backchannel_logout_session_required: number;
    /** OIDC Front-Channel Logout 1.0 2: the page the signed-out page frames; null: none. */
    frontchannel_logout_uri: string | null;
    /** 1: the framed URI gets `iss` and `sid`. */
    frontchannel_logout_session_required: number;
    /** 1: every authorization request must be pushed first (RFC 9126 require_pushed_authorization_requests); 0 (default): optional. */
    require_pushed_authorization_requests: number;
    /** A machine client's public keys for private_key_jwt (RFC 7523), a JSON Web Key Set; null: none inline. */
    jwks: string | null;
    /** Where a machine client publishes its JWKS for private_key_jwt; null: none. */
    jwks_uri: string | null;
    /** JSON array of ISO 3166 country codes this application's SMS may go to; null: the service's list (otp/send-rules.ts). */
    sms_countries: string | null;
    /** JSON array of the mail domains this application's codes may go to; null: any domain (otp/send-rules.ts). */
    mail_domains: string | null;
    /** 1: a third-party application: the user consents to what it asks (oidc/consent.ts); 0 (default): first-party, no consent page. */
    third_party: number;
    /** 1: the client registered itself (RFC 7591, client-registration/registration.ts); 0: an operator's. */
    registered: number;
    /** The keyed hash of a registered client's registration access token (RFC 7592); null for an operator's client. */
    registration_token_hash: string | null;
    /** A registered client's last token request (the sweep of unused ones); null: none yet. */
    last_used_at: number | null;
    /** 1: the client may use the device authorization grant (RFC 8628, device-authorization/); 0 (default): not. */
    device_code_grant: number;
  };
  /** client-registration/registration.ts: initial access tokens (RFC 7591 3) an operator made, by keyed hash; one registration each */
  client_registration_tokens: {
    token_hash: string;
    created_at: number;
    expires_at: number;
  };
  /** users/: enabled-store.ts for the sign-in paths, store.ts for operators */
  users: {
    id: string;
    email: string;
    created_at: number;
    /** Set by an operator (users/): the account is invisible to every sign-in path until enabled. */
    disabled_at: number | null;
    /** The language the user chose on a hosted page while signed in (i18n/); null: none saved. */
    locale: string | null;
    /** The id a provisioning system (SCIM) knows the user by, set by an operator (users/); unique. */
    external_id: string | null;
  };
  /** users/enabled-store.ts: consecutive failures per account, across challenges */
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
  /** clients/: which users have signed in to which client (delegation may act only on those) */
  client_users: {
    client_id: string;
    user_id: string;
    first_signed_in_at: number;
  };
  /** factors/email-code/new-device-store.ts: one new-device sign-in (the mailed code, then the device key it registers) */
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
}
