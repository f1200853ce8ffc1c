/**
 * Every lifetime, length, attempt cap and rate limit of the service, in one place: the sign-in's
 * here, the rest in defaults/ by subject, all re-exported below so every module imports this file.
 * Units are in the names. docs/security.md lists the same numbers (test/app/documented-limits.test.ts
 * holds them together).
 */

export * from './defaults/branding.js';
export * from './defaults/running.js';
export * from './defaults/upstream.js';

/** Email OTP lifetime: NIST SP 800-63B allows up to 10 minutes; 5 is the common choice. */
export const OTP_TTL_SECONDS = 5 * 60;
/** Digits of an email OTP (spec: "6 digits"). */
export const OTP_DIGITS = 6;
/** Wrong guesses per OTP challenge; counted before checking, then the challenge is dead. */
export const OTP_MAX_ATTEMPTS = 5;

/** After the email OTP is verified, the device must be registered within this time. */
export const REGISTRATION_TTL_SECONDS = 10 * 60;

/** Consecutive failed OTP checks per account before a lock-out (NIST SP 800-63B 5.2.2). */
export const ACCOUNT_MAX_FAILURES = 100;
/** Lock-out length once ACCOUNT_MAX_FAILURES is reached. */
export const ACCOUNT_LOCKOUT_SECONDS = 15 * 60;

/**
 * Spacing of repeated sends of one purpose to one recipient (a resend): one per 30 s. The next
 * step of the same sign-in (the email OTP, then the email MFA code) is another purpose.
 */
export const SEND_SPACING_PER_PURPOSE = [{ max: 1, windowSeconds: 30 }] as const;
/** OTP sends per recipient, all purposes together: ten per hour (Logto, Hanko). */
export const SEND_PER_RECIPIENT = [{ max: 10, windowSeconds: 60 * 60 }] as const;
/** OTP sends per client IP address: generous for NATs, tight enough to stop mail bombing. */
export const SEND_PER_IP = [{ max: 30, windowSeconds: 60 * 60 }] as const;

/** Device challenge (nonce the device signs) lifetime. */
export const DEVICE_CHALLENGE_TTL_SECONDS = 60;
/** A device's last-use time is written at most this often (it only needs day precision for expiry). */
export const DEVICE_LAST_USED_RESOLUTION_SECONDS = 60;
/**
 * A device unused for this long stops being trusted (its next login falls back to the email
 * OTP). 180 days: about the longest a lost or sold laptop should keep a way in, yet long
 * enough that a device used twice a year stays remembered. SERVICE_IDP_DEVICE_IDLE_DAYS overrides.
 * Remembered browsers only: a passkey needs user verification at every use and does not expire
 * when idle (docs/security.md, "Why passkeys do not expire when idle").
 */
export const DEVICE_IDLE_EXPIRY_DAYS = 180;
/** Lifetime of the "this wasn't me" link in a new-device mail: a week covers a holiday without mail. */
export const DEVICE_NOTICE_LINK_TTL_SECONDS = 7 * 24 * 60 * 60;
/** Longest approximate place (from the operator's SERVICE_IDP_PLACE_HEADER) shown in a new-device mail. */
export const DEVICE_PLACE_MAX_LENGTH = 64;

/** An MFA step (login challenge or enrollment confirmation) must finish within this time. */
export const MFA_SESSION_TTL_SECONDS = 10 * 60;
/** Wrong MFA codes per MFA session, counted before checking (same rule as the email OTP). */
export const MFA_MAX_ATTEMPTS = 5;
/** Default length of remember_me: MFA is skipped on that device for this long. */
export const MFA_REMEMBER_DAYS = 30;

/**
 * Recovery codes (look-up secrets, NIST SP 800-63B 5.1.2) issued at MFA enrollment and at each
 * regeneration: ten, as GitHub and Google issue, enough for years of lost phones. Each works once.
 */
export const RECOVERY_CODE_COUNT = 10;
/**
 * Characters of a recovery code, drawn from RECOVERY_CODE_ALPHABET (32 symbols, 5 bits each):
 * 50 bits. NIST SP 800-63B 5.1.2.1 asks at least 20 bits when guesses are rate limited (they
 * are: MFA_MAX_ATTEMPTS per MFA session, ACCOUNT_MAX_FAILURES per account) and 64 when not;
 * the HMAC under the server key keeps a stolen database from testing guesses offline.
 */
export const RECOVERY_CODE_LENGTH = 10;
/** Crockford base32: no I, L, O or U, so nothing reads as another character; typed I, L, O count as 1, 1, 0. */
export const RECOVERY_CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** Shown in groups of this many characters joined by a hyphen (XXXXX-XXXXX), for reading aloud and typing. */
export const RECOVERY_CODE_GROUP_LENGTH = 5;

/** TOTP (RFC 6238, security baseline in DESIGN.md). */
/** Length of a time step: RFC 6238 5.2 recommends 30 s, and every authenticator app assumes it. */
export const TOTP_PERIOD_SECONDS = 30;
/** Digits of a TOTP code: 6, the authenticator-app default (RFC 4226 5.3 asks for at least 6). */
export const TOTP_DIGITS = 6;
/** Steps accepted either side of the current one, for clock drift and typing time (RFC 6238 5.2: at most one). */
export const TOTP_WINDOW_STEPS = 1;
/** Secret length: 160 bits, the RFC 4226 4 recommendation for HMAC-SHA-1. */
export const TOTP_SECRET_BYTES = 20;

/**
 * Each attempt to hand an SMS to the provider; with the transports' 2 retries (200 and 400 ms
 * apart) the worst case is about 9.6 s, inside the browser library's 15 s request timeout.
 */
export const SMS_ATTEMPT_TIMEOUT_MS = 3000;

/** Lifetime of a delegation response envelope (requests may live up to 300 s, the envelope's cap). */
export const DELEGATION_RESPONSE_TTL_SECONDS = 60;

/**
 * Passkeys (factors/passkey/). A ceremony's challenge lives 5 minutes, WebAuthn L3's recommended
 * timeout when user verification is required (15.1: 300 000 ms), and is spent once; the
 * browser's own prompt times out with it.
 */
export const PASSKEY_CEREMONY_TTL_SECONDS = 5 * 60;
/**
 * COSE algorithms accepted for a new passkey, in the order offered: ES256 (every platform
 * authenticator), EdDSA (some security keys), RS256 (Windows Hello). WebAuthn L3 5.4 asks RPs
 * to list at least -7 and -257.
 */
export const PASSKEY_ALGORITHMS = [-7, -8, -257] as const;
/** Passkeys one user may hold per application: each is a row and a way in; a family's devices fit. */
export const PASSKEYS_PER_USER_MAX = 20;
/** A passkey's name when the page gives none (the user can rename it like any device). */
export const PASSKEY_DEFAULT_NAME = 'Passkey';
/**
 * Passkey sign-in options (`/v1/passkeys/authentication/options`) per client IP address. The
 * route is unauthenticated and each page load with passkey autofill asks once: a minute's
 * budget covers a busy NAT's users; the hour's bounds a flood of challenges to verify.
 */
export const PASSKEY_OPTIONS_PER_IP = [
  { max: 60, windowSeconds: 60 },
  { max: 600, windowSeconds: 60 * 60 },
] as const;
/**
 * Passkey sign-in attempts (`/v1/passkeys/authentication`) per client IP address, success or
 * not. Each verifies a signature and may write a spent challenge; half the options budget,
 * since a person needs one attempt per options request at most.
 */
export const PASSKEY_SIGN_IN_PER_IP = [
  { max: 30, windowSeconds: 60 },
  { max: 300, windowSeconds: 60 * 60 },
] as const;

/** Authorization code: RFC 9700 and oidc-provider use 60 s at most. */
export const AUTH_CODE_TTL_SECONDS = 60;
/** Random bytes in codes, device tokens and challenges: 256 bits, above RFC 6749's 128. */
export const TOKEN_BYTES = 32;

/** Redirect URIs one client may register: enough for environments and native apps. */
export const CLIENT_REDIRECT_URIS_MAX = 20;
/** Longest redirect URI accepted (registration and /authorize); browsers handle URLs far longer. */
export const REDIRECT_URI_MAX_LENGTH = 2000;

/**
 * A pending authorization request (oidc/): the hosted sign-in must finish within this time.
 * 15 minutes covers an email OTP (5) and an MFA step (10); oidc-provider allows an hour.
 */
export const AUTHORIZATION_REQUEST_TTL_SECONDS = 15 * 60;
/**
 * A pushed authorization request (RFC 9126, oidc/pushed-requests.ts): its request_uri works once
 * within this time. The client sends the browser on at once; RFC 9126 7.3 asks for a short life.
 */
export const PUSHED_REQUEST_TTL_SECONDS = 60;
/** Longest state, nonce or login_hint accepted at /authorize (OIDC sets none; this caps storage). */
export const AUTHORIZE_PARAMETER_MAX_LENGTH = 1000;
/**
 * The service's sign-in session (the SSO cookie): ends after this long without use by any app
 * (a working day), and in any case this long after sign-in (a week). Either way the next app
 * asks for a sign-in, which a remembered device answers with its key.
 */
export const SESSION_IDLE_TIMEOUT_SECONDS = 8 * 60 * 60;
export const SESSION_ABSOLUTE_LIFETIME_SECONDS = 7 * 24 * 60 * 60;

/**
 * The operator console's session (console/, /admin): shorter than the SSO session because it
 * can change every user. It ends after 15 minutes without a console call (OWASP ASVS 3.3.2's
 * level-2 idle limit for high-value applications) and in any case 8 hours after sign-in (a
 * working day); then the console sends the operator through the hosted sign-in again, with
 * a second factor. The sign-in's PKCE verifier and state wait at most the authorization
 * request's life in their own cookie.
 */
export const CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS = 15 * 60;
export const CONSOLE_SESSION_ABSOLUTE_LIFETIME_SECONDS = 8 * 60 * 60;
/** A console session's last use is written at most this often (each call reads it). */
export const CONSOLE_SESSION_TOUCH_RESOLUTION_SECONDS = 30;
/** The account center's session (account/): a signed cookie that lives this long from the sign-in behind it. */
export const ACCOUNT_SESSION_LIFETIME_SECONDS = 15 * 60;
/**
 * The account center's sensitive actions (revoke, sign out everywhere else, export, delete)
 * need a sign-in at most this old (as OIDC's max_age); an older one is sent through
 * /authorize again with prompt=login.
 */
export const ACCOUNT_RECENT_SIGN_IN_SECONDS = 5 * 60;

/** The console's dashboard (GET /admin/v1/dashboard): the window's hours by default and at most, cut into this many buckets. */
export const DASHBOARD_HOURS_DEFAULT = 24;
export const DASHBOARD_HOURS_MAX = 24 * 30;
export const DASHBOARD_BUCKETS = 24;

/** ID token and access token lifetime. */
export const ID_TOKEN_TTL_SECONDS = 10 * 60;
export const ACCESS_TOKEN_TTL_SECONDS = 10 * 60;
/**
 * Lifetime of a back-channel logout token (OIDC Back-Channel Logout 1.0 2.4 asks for a short
 * one): it is signed at each delivery attempt, so this bounds only the time on the wire and the
 * relying party's clock skew, never the retry schedule.
 */
export const LOGOUT_TOKEN_TTL_SECONDS = 2 * 60;
/**
 * How long the signed-out page waits for the apps' front-channel logout frames before it goes
 * on to the app's post_logout_redirect_uri (OIDC Front-Channel Logout 1.0 leaves it open): an
 * app whose page hangs delays the user this long at most.
 */
export const FRONTCHANNEL_LOGOUT_WAIT_MS = 3000;

/**
 * Refresh tokens (scope offline_access, oidc/): each one is used once and replaced (rotation,
 * RFC 9700 4.14.2). One unused for 14 days dies (oidc-provider's default refresh token life);
 * whatever the use, the family ends 30 days after the sign-in, when the user signs in again.
 * Both stay well inside the device idle expiry, and the device's revocation ends them sooner.
 */
export const REFRESH_TOKEN_IDLE_TTL_SECONDS = 14 * 24 * 60 * 60;
export const REFRESH_TOKEN_ABSOLUTE_LIFETIME_SECONDS = 30 * 24 * 60 * 60;
/**
 * DPoP (RFC 9449, dpop/): a proof is accepted when its `iat` is at most this old (11.1: the
 * window bounds how long a captured proof could be replayed elsewhere, and how long its `jti`
 * must be remembered to refuse it here) …
 */
export const DPOP_PROOF_MAX_AGE_SECONDS = 60;
/** … or at most this far in the future (a client's clock a little ahead of ours). */
export const DPOP_PROOF_MAX_FUTURE_SECONDS = 5;
/**
 * Server nonces (RFC 9449 8, 9): every node derives the nonce of a window of this many seconds
 * from the server secret, and accepts the current window's and the previous one's, so a nonce
 * lives between one and two windows and no node needs a table or to ask another.
 */
export const DPOP_NONCE_WINDOW_SECONDS = 5 * 60;
/** The longest DPoP header read (a proof with an RSA-4096 key is under 2 kB). */
export const DPOP_PROOF_MAX_LENGTH = 4000;
/**
 * Device Bound Session Credentials (oidc/dbsc.ts): the short-lived cookie a bound service session
 * (by DBSC, or by the hosted page's key where there is no DBSC) needs beside its long one. A copy
 * of both stops working this long after the last renewal (which needs the key): the window a
 * thief with the cookies has.
 */
export const DBSC_COOKIE_TTL_SECONDS = 5 * 60;
/** A DBSC challenge (registration, refresh, or the page key's renewal) must be answered within this long, once. */
export const DBSC_CHALLENGE_TTL_SECONDS = 2 * 60;
/** Longest refresh or revoked token the token and revocation endpoints read (ours are far shorter). */
export const TOKEN_PARAMETER_MAX_LENGTH = 4000;

/** How long a node may serve a signing-key set before re-reading it from storage. */
export const KEY_CACHE_SECONDS = 30;
/** RSA modulus length of signing keys (RFC 8725 asks for at least 2048). */
export const SIGNING_KEY_BITS = 2048;

/**
 * Browser caching of /sdk/v1/service-web.js. The path is versioned by protocol (v1), not by
 * release, so a fix must reach browsers: an hour, then revalidated with the ETag (served stale
 * meanwhile for a day). The content-addressed copy never changes: a year, immutable.
 */
export const SDK_SCRIPT_MAX_AGE_SECONDS = 60 * 60;
export const SDK_SCRIPT_STALE_WHILE_REVALIDATE_SECONDS = 24 * 60 * 60;
export const SDK_PINNED_SCRIPT_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/**
 * Audit events are kept this long, then swept: 180 days, the device idle expiry, so the trail
 * covers a remembered device's whole trusted life. SERVICE_IDP_EVENT_RETENTION_DAYS overrides.
 */
export const EVENT_RETENTION_DAYS = 180;
/** An event keeps this much of the User-Agent header (enough to tell browsers apart). */
export const EVENT_USER_AGENT_MAX_LENGTH = 512;
/** Operators' listings (users, events): rows per page when none is asked for, and at most. */
export const PAGE_SIZE_DEFAULT = 50;
export const PAGE_SIZE_MAX = 1000;

/** An admin key's name: enough to say whose it is and what for. */
export const ADMIN_KEY_NAME_MAX_LENGTH = 100;
/** An admin key's last-use time is written at most this often (operators read it in minutes). */
export const ADMIN_KEY_LAST_USED_RESOLUTION_SECONDS = 60;
