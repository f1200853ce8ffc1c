/**
 * Every lifetime, length, attempt cap and rate limit of the service, in one place.
 * Units are in the names. docs/security.md lists the same numbers; change both together.
 */

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
/** Longest state, nonce or login_hint accepted at /authorize (OIDC sets none; this caps storage). */
export const AUTHORIZE_PARAMETER_MAX_LENGTH = 1000;
/**
 * The service's sign-in session (the SSO cookie): ends after this long without use by any app
 * (a working day), and in any case this long after sign-in (a week). Either way the next app
 * asks for a sign-in, which a remembered device answers with its key.
 */
export const SESSION_IDLE_TIMEOUT_SECONDS = 8 * 60 * 60;
export const SESSION_ABSOLUTE_LIFETIME_SECONDS = 7 * 24 * 60 * 60;

/** ID token and access token lifetime. */
export const ID_TOKEN_TTL_SECONDS = 10 * 60;
export const ACCESS_TOKEN_TTL_SECONDS = 10 * 60;

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

/** Rows past their expiry are deleted this often. */
export const SWEEP_INTERVAL_SECONDS = 60;

/** PostgreSQL connections per node: enough for a node's concurrency, small enough for N nodes. */
export const DB_POOL_SIZE = 10;
/** PostgreSQL statement_timeout: every query here is a key lookup; a slow one means trouble. */
export const DB_STATEMENT_TIMEOUT_MS = 5000;
/** A node fails fast while PostgreSQL is unreachable: a request waits at most this long for a connection, then 503. */
export const DB_CONNECT_TIMEOUT_MS = 2000;
/** An idle pooled connection is closed after this long (the pool opens new ones on demand). */
export const DB_IDLE_TIMEOUT_MS = 30_000;

/** HTTP */
export const DEFAULT_PORT = 8080;
export const DEFAULT_HOST = '127.0.0.1';
export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Entries of the in-process cache of immutable rows: client/user pairs already recorded as
 * signed in (a pair goes with its client or its user, whose ids are never reused). Users are
 * not cached: operators disable and delete them (users/). The bound only caps memory (the
 * cache empties when full).
 */
export const IMMUTABLE_ROW_CACHE_ENTRIES = 50_000;

/** SQLite: a worker thread checkpoints the WAL this often (storage/database.ts). */
export const SQLITE_CHECKPOINT_INTERVAL_MS = 200;
/** SQLite: the main connection checkpoints itself only past this many WAL pages (4 KiB each). */
export const SQLITE_BACKSTOP_CHECKPOINT_PAGES = 20_000;
