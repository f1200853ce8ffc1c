/**
 * Part of Database (../schema.ts, which lists the exceptions to one owner per table): codes,
 * OIDC requests, sessions and refresh tokens, and the one replay table. Each table's owner is named beside it.
 */
export interface SignInTables {
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
    /** The SSO session the code was issued in (oidc/): the ID token's `sid`; null outside one. */
    sid: string | null;
    /** RFC 8707: the APIs (identifiers, space-separated) the sign-in may get access tokens for; null: none. */
    resources: string | null;
    /** The organization the app asked for (`organization` at /authorize); null: none. */
    organization_id: string | null;
  };
  /** authorization-codes/: access tokens revoked before their expiry (code reuse). */
  revoked_access_tokens: {
    jti: string;
    expires_at: number;
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
    /** `form_post` (OAuth 2.0 Form Post Response Mode), or null: the code goes back in the query. */
    response_mode: string | null;
    /** RFC 8707: the APIs (identifiers, space-separated) the sign-in may get access tokens for; null: none. */
    resources: string | null;
    /** The organization the app asked for (`organization` at /authorize); null: none. */
    organization_id: string | null;
    created_at: number;
    expires_at: number;
    consumed_at: number | null;
    /** A finished sign-in held while the hosted page shows its recovery codes (all null otherwise). */
    held_user_id: string | null;
    held_device_id: string | null;
    held_amr: string | null; // JSON array
    held_auth_time: number | null;
    /** 1: the held sign-in waits on the consent page (oidc/consent.ts); only its Allow or Deny finishes the request. */
    consent_pending: number | null;
    /** The SSO session the held sign-in is in (its code's `sid`), for a request held for consent; null otherwise. */
    held_sid: string | null;
  };
  /** device-authorization/: a device authorization request (RFC 8628), single use, short-lived */
  device_authorizations: {
    /** Keyed hash of the device code. */
    id: string;
    /** Keyed hash of the normalized user code (8 letters, no dash). */
    user_code_hash: string;
    client_id: string;
    /** The scope asked (space-separated): what approval grants. */
    scope: string;
    /** RFC 8707: the APIs (identifiers, space-separated) asked for; null: none. */
    resources: string | null;
    /** What the device said it is (`device_name`), shown as declared, not verified; null: nothing. */
    device_name: string | null;
    /** The address the device authorization request came from, shown on the confirmation page. */
    requester_ip: string;
    created_at: number;
    expires_at: number;
    /** Seconds the device must wait between polls; raised by 5 at each slow_down (RFC 8628 3.5). */
    interval_seconds: number;
    last_polled_at: number | null;
    /** pending, approved, denied, or consumed (its tokens issued). */
    status: string;
    decided_at: number | null;
    /** The sign-in that approved it (all null until approved). */
    user_id: string | null;
    device_id: string | null;
    amr: string | null; // JSON array
    auth_time: number | null;
    sid: string | null;
  };
  /** oidc/consent-store.ts: what a user granted a third-party client (one row per user and client) */
  consents: {
    user_id: string;
    client_id: string;
    /** The OIDC scope values granted (space-separated: openid email, offline_access). */
    scope: string;
    /** JSON array of [API identifier, permission] pairs granted. */
    permissions: string;
    created_at: number;
    updated_at: number;
  };
  /** oidc/pushed-requests.ts: a pushed authorization request (RFC 9126), single use, short-lived */
  pushed_authorization_requests: {
    /** Keyed hash of the request_uri's random part. */
    id: string;
    client_id: string;
    /** The request's parameters as the client pushed them (a JSON object of strings). */
    params: string;
    created_at: number;
    expires_at: number;
    consumed_at: number | null;
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
    /** oidc/dbsc.ts: the public JWK of the browser key the session is bound to (W3C DBSC), null when unbound. */
    dbsc_jwk: string | null;
    /** The DBSC session identifier the browser names at refresh (random, public). */
    dbsc_id: string | null;
    /**
     * OIDC `sid` (Front-/Back-Channel Logout): random and public, neither the cookie nor its hash.
     * A new sign-in of the same user in the same browser keeps it; null for sessions from before it.
     */
    sid: string | null;
  };
  /** oidc/: the clients that got a code in an SSO session, by its sid: each gets a logout token when it ends. */
  session_clients: {
    sid: string;
    client_id: string;
    user_id: string;
    created_at: number;
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
    /** A public client's family: the JWK thumbprint of the DPoP key its code exchange proved; every refresh proves it again (RFC 9449 5). */
    dpop_jkt: string | null;
    /** The SSO session of the code exchange that started it: its ID tokens keep the `sid`. */
    sid: string | null;
    /** RFC 8707: the APIs (identifiers, space-separated) the sign-in may get access tokens for; null: none. */
    resources: string | null;
    /** The organization the app asked for (`organization` at /authorize); null: none. */
    organization_id: string | null;
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
}
