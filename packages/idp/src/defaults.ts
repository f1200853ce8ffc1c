/**
 * Every lifetime, length, attempt cap and rate limit of the service, in one place, by subject:
 * sign-in first, then upstream providers, what users see, and how the service runs.
 * Units are in the names. docs/security.md lists the same numbers (test/app/documented-limits.test.ts
 * holds them together).
 */

// ---- Sign-in ----

/** Email OTP lifetime: NIST SP 800-63B allows up to 10 minutes; 5 is the common choice. */
export const OTP_TTL_SECONDS = 5 * 60;
/** Digits of an email OTP (spec: "6 digits"). */
export const OTP_DIGITS = 6;
/** Wrong guesses per OTP challenge; counted before checking, then the challenge is dead. */
export const OTP_MAX_ATTEMPTS = 5;

/** After the email OTP is verified, a new device's sign-in must finish (its device registered) within this time. */
export const NEW_DEVICE_SIGN_IN_TTL_SECONDS = 10 * 60;

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
/**
 * OTP sends per client network (an IPv4 address's /24, an IPv6 address's /48): a bot that
 * spreads over one network's addresses passes SEND_PER_IP; four times an address's budget
 * leaves an office or a carrier's NAT room.
 */
export const SEND_PER_SUBNET = [{ max: 120, windowSeconds: 60 * 60 }] as const;

/**
 * Send budgets (otp/send-budgets.ts): what the whole service, and each application, may send
 * per minute, hour and day, whoever asks. The per-address and per-network limits stop one
 * sender; a botnet with many addresses on many networks passes them, and each code it triggers
 * costs the operator reputation (mail) or money (SMS). A spent budget refuses with "try again
 * later", and the operator hears of it once per window (send_budget.exhausted, its webhook,
 * and service_idp_codes_refused_total). An application's budget is below the service's, so one
 * application's flood leaves room for the others. SERVICE_IDP_MAIL_BUDGET, SERVICE_IDP_SMS_BUDGET,
 * SERVICE_IDP_APP_MAIL_BUDGET and SERVICE_IDP_APP_SMS_BUDGET set others.
 */
export const MAIL_BUDGET_SERVICE = [
  { max: 600, windowSeconds: 60 },
  { max: 10_000, windowSeconds: 60 * 60 },
  { max: 100_000, windowSeconds: 24 * 60 * 60 },
] as const;
/** Mails one application's sign-ins may trigger: half the service's. */
export const MAIL_BUDGET_PER_APPLICATION = [
  { max: 300, windowSeconds: 60 },
  { max: 5_000, windowSeconds: 60 * 60 },
  { max: 50_000, windowSeconds: 24 * 60 * 60 },
] as const;
/** SMS the whole service may send: each one is billed, and pumping fraud triggers them by the thousand. */
export const SMS_BUDGET_SERVICE = [
  { max: 30, windowSeconds: 60 },
  { max: 300, windowSeconds: 60 * 60 },
  { max: 2_000, windowSeconds: 24 * 60 * 60 },
] as const;
/** SMS one application's sign-ins may trigger: half the service's. */
export const SMS_BUDGET_PER_APPLICATION = [
  { max: 15, windowSeconds: 60 },
  { max: 150, windowSeconds: 60 * 60 },
  { max: 1_000, windowSeconds: 24 * 60 * 60 },
] as const;

/**
 * Send challenge (otp/send-challenge.ts): below the hard limits above, a code-sending request
 * from a browser must first solve a proof of work once its address, its network (/24, /48) or
 * the whole service has asked for more codes than these in the window. Every request for a code
 * counts, answered or not. A normal user stays far below; a bot pays CPU for each code past
 * them. SERVICE_IDP_CHALLENGE_PER_IP, …_PER_SUBNET, …_MAIL and …_SMS set others.
 */
export const SEND_CHALLENGE_AFTER_PER_IP = [{ max: 15, windowSeconds: 60 * 60 }] as const;
/** Code requests per client network (an IPv4 /24, an IPv6 /48) before a challenge: half SEND_PER_SUBNET. */
export const SEND_CHALLENGE_AFTER_PER_SUBNET = [{ max: 60, windowSeconds: 60 * 60 }] as const;
/** Mail code requests, service-wide, before every browser must solve a challenge: half MAIL_BUDGET_SERVICE. */
export const SEND_CHALLENGE_AFTER_MAIL_SERVICE = [
  { max: 300, windowSeconds: 60 },
  { max: 5_000, windowSeconds: 60 * 60 },
  { max: 50_000, windowSeconds: 24 * 60 * 60 },
] as const;
/** SMS code requests, service-wide, before every browser must solve a challenge: half SMS_BUDGET_SERVICE. */
export const SEND_CHALLENGE_AFTER_SMS_SERVICE = [
  { max: 15, windowSeconds: 60 },
  { max: 150, windowSeconds: 60 * 60 },
  { max: 1_000, windowSeconds: 24 * 60 * 60 },
] as const;
/**
 * SMS pumping defences (otp/send-rules.ts). Pumping fraud sends codes to ranges of numbers an
 * accomplice is paid for (premium, shared-cost, or numbers in one expensive block), so besides
 * the country allowlist and the refused number types, the service counts SMS per number block:
 * the country calling code and the first SMS_PREFIX_NATIONAL_DIGITS digits of the national
 * number (`+44 7911 …`, `+1 415 5…`). A real user base spreads over many blocks; a pumping
 * run walks one. SERVICE_IDP_SMS_PER_PREFIX sets other limits.
 */
export const SMS_PREFIX_NATIONAL_DIGITS = 4;
/** SMS to one number block (SMS_PREFIX_NATIONAL_DIGITS): a busy office's block fits; a pumping run is cut after a handful. */
export const SMS_PER_PREFIX = [
  { max: 10, windowSeconds: 60 * 60 },
  { max: 50, windowSeconds: 24 * 60 * 60 },
] as const;
/**
 * Number types (libphonenumber-js `getType()`, full metadata) no code is ever sent to: the
 * caller pays the line's owner, the scheme pumping fraud lives on. An invalid or unallocated
 * number (no type, `isValid()` false) is refused as well.
 */
export const SMS_REFUSED_NUMBER_TYPES = ['PREMIUM_RATE', 'SHARED_COST'] as const;
/**
 * The SMS cost cap's window (SERVICE_IDP_SMS_DAILY_COST_CAP): a day, counted from the first SMS
 * of the window as every throttle window is (throttle/service.ts), not a calendar day.
 */
export const SMS_COST_WINDOW_SECONDS = 24 * 60 * 60;
/**
 * Prices and the cap are counted in 1/SMS_PRICE_SCALE of the operator's currency unit (prices
 * take at most four decimals, e.g. 0.0075), so the counters stay integers. A cap is at most
 * SMS_COST_CAP_MAX units and a price at most SMS_PRICE_MAX: the day's count (rate_counters.count,
 * 32 bits) then holds the cap plus 20,000 SMS past it, far beyond what the SMS budgets let through.
 */
export const SMS_PRICE_SCALE = 10_000;
export const SMS_COST_CAP_MAX = 10_000;
export const SMS_PRICE_MAX = 10;
/** Countries an application's SMS allowlist may name, and mail domains its address rule may name: an operator's list, not a data set. */
export const CLIENT_SMS_COUNTRIES_MAX = 250;
export const CLIENT_MAIL_DOMAINS_MAX = 50;

/** A send challenge's lifetime: time to solve it and retry; its solution is refused after. */
export const SEND_CHALLENGE_TTL_SECONDS = 5 * 60;
/**
 * The work of a send challenge: the SHA-256 preimages a solver tries, drawn uniformly between
 * these (well under a second in a browser, far less in a bot's native code: the
 * challenge prices a flood, the budgets bound it).
 */
export const SEND_CHALLENGE_COUNTER_MIN = 2_000;
export const SEND_CHALLENGE_COUNTER_MAX = 20_000;
/**
 * The operator's CAPTCHA in place of the proof of work (otp/send-captcha.ts): its siteverify call
 * must answer within this (SERVICE_IDP_CAPTCHA_TIMEOUT_MS), or the send fails closed. A token is
 * remembered as spent this long: Turnstile's tokens live 300 s, hCaptcha's 120 s.
 */
export const CAPTCHA_VERIFY_TIMEOUT_MS = 3000;
export const CAPTCHA_TOKEN_TTL_SECONDS = 5 * 60;

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

/**
 * Clients that register themselves (RFC 7591, client-registration/registration.ts). Registrations per IP:
 * an agent registers once per install, so 10 an hour is generous and a flood of clients is not.
 */
export const CLIENT_REGISTRATIONS_PER_IP = [
  { max: 10, windowSeconds: 60 * 60 },
  { max: 30, windowSeconds: 24 * 60 * 60 },
] as const;
/** A registration request's body (its metadata is a name and a few URIs); larger ones are refused before parsing. */
export const CLIENT_REGISTRATION_BODY_MAX_BYTES = 8 * 1024;
/** A registered client left unused (no token request) this many days is deleted by the sweep (SERVICE_IDP_REGISTERED_CLIENT_UNUSED_DAYS). */
export const REGISTERED_CLIENT_UNUSED_DAYS = 30;
/** A registered client's last use is written at most this often (not at every token request). */
export const REGISTERED_CLIENT_TOUCH_MS = 60 * 60 * 1000;
/**
 * Client ID Metadata Documents (clients/metadata-document.ts, SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS):
 * a document larger than this is refused (the draft's 5 kB: a name, a logo and a few URIs).
 */
export const CLIENT_METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
/** The whole fetch (connection, TLS, answer) of a metadata document must take less than this, or the client is refused. */
export const CLIENT_METADATA_DOCUMENT_TIMEOUT_MS = 3000;
/**
 * A fetched document is used for its Cache-Control max-age, but at least the minimum (a
 * document saying no-store is not fetched at every request) and at most the maximum (a change
 * of its redirect URIs takes effect within a day).
 */
export const CLIENT_METADATA_DOCUMENT_CACHE_MIN_SECONDS = 60;
export const CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS = 24 * 60 * 60;
/** Documents kept per process (the oldest goes first when full). */
export const CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES = 1000;
/**
 * A document that was fetched and refused (redirect, too large, too slow, invalid) is not fetched
 * again for this long: repeated requests naming it do not make the service hammer its host.
 */
export const CLIENT_METADATA_DOCUMENT_REFUSED_CACHE_SECONDS = 30;
/** A client_id URL longer than this is not fetched (authorize-request.ts reads client_ids of 200 characters at most). */
export const CLIENT_METADATA_DOCUMENT_URL_MAX_LENGTH = 200;
/** How long an initial access token (`clients registration-token`) is good for unless `--ttl-hours` says otherwise. */
export const INITIAL_ACCESS_TOKEN_TTL_HOURS = 24;
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
 * A client assertion (private_key_jwt, RFC 7523 3): its `exp` at most this far ahead, so its
 * `jti` is kept (single use) only that long; clients make a new one per request.
 */
export const CLIENT_ASSERTION_MAX_LIFETIME_SECONDS = 5 * 60;
/** A machine client's JWKS fetched from its jwks_uri: how long to wait for it, and to keep it before fetching again. */
export const CLIENT_JWKS_FETCH_TIMEOUT_MS = 5_000;
export const CLIENT_JWKS_CACHE_SECONDS = 10 * 60;
/** The public keys a machine client may register for private_key_jwt (a JWKS holds its current and next key). */
export const CLIENT_JWKS_KEYS_MAX = 10;
/** RFC 8707: the APIs one authorization request may name with `resource` (each a separate access token). */
export const RESOURCES_PER_REQUEST_MAX = 5;
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
/** The account center's session (account-center/): a signed cookie that lives this long from the sign-in behind it. */
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

// ---- Authorization: APIs, roles and permissions (apis/, docs/authorization.md) ----

/**
 * An API's identifier (the access token's audience, RFC 8707's `resource`): an absolute URI,
 * longer than any real one yet short enough to sit in every token.
 */
export const API_IDENTIFIER_MAX_LENGTH = 500;
/** An API's or a role's display name. */
export const API_NAME_MAX_LENGTH = 100;
/** A permission's name (a scope token, RFC 6749 3.3, such as `read:notes`). */
export const API_PERMISSION_MAX_LENGTH = 100;
/** Permissions of one API: each may travel in a token's `scope`, which must stay small. */
export const API_PERMISSIONS_MAX = 100;
/** APIs per service. */
export const APIS_MAX = 1000;
/** A role's name (it may travel in a token's `roles` claim). */
export const ROLE_NAME_MAX_LENGTH = 100;
/** Permissions one role grants, over all its APIs. */
export const ROLE_PERMISSIONS_MAX = 1000;
/** Roles per service. */
export const ROLES_MAX = 1000;
/** Roles one user holds. */
export const USER_ROLES_MAX = 100;

// ---- Upstream identity providers ----

/**
 * Upstream identity providers (factors/upstream/). A sign-in at the provider must come back
 * within this time: the state, nonce and PKCE verifier live in a sealed cookie this long
 * (a person typing a password and a second factor at the provider; 10 min as oidc-provider's
 * interaction and Auth.js's state cookie).
 */
export const UPSTREAM_FLOW_TTL_SECONDS = 600;
/** The emailed code that proves an existing account before an upstream identity is linked to it: as long as any sign-in code. */
export const UPSTREAM_LINK_TTL_SECONDS = 600;
/**
 * An application's page that asked to remember the browser finishes the sign-in with its device
 * key within this time (the ticket in its return URL's fragment: posted as the page loads).
 */
export const UPSTREAM_DEVICE_TICKET_TTL_SECONDS = 120;
/** Discovery documents and key sets of upstream providers are kept this long per node (openid-client fetches keys as needed). */
export const UPSTREAM_METADATA_CACHE_SECONDS = 3600;
/** A request to an upstream provider (discovery, token, user info) gives up after this long. */
export const UPSTREAM_TIMEOUT_SECONDS = 10;
/** Connections per service (each is a button, a discovery cache and a secret). */
export const CONNECTIONS_MAX = 50;
/** Apple's client secret (an ES256 JWT) lives this long; one is made per token request. */
export const APPLE_CLIENT_SECRET_TTL_SECONDS = 300;
/** Starts of an upstream sign-in per IP (each costs a discovery at most and a redirect): as the passkey options. */
export const UPSTREAM_START_PER_IP = [{ max: 60, windowSeconds: 60 }] as const;

// ---- What users see: languages and branding ----

/** How long the language switcher's cookie keeps a browser's choice (a year: a preference, no secret). */
export const LOCALE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/**
 * Branding (branding/). A logo is stored in the database (base64) and served from
 * `/branding/logos/<sha256>.<ext>`: a few hundred pixels wide is plenty for a sign-in page
 * and a mail header, so 128 KiB keeps every page and mail light and the table small.
 */
export const LOGO_MAX_BYTES = 128 * 1024;
/** Content-addressed branding assets (logo, per-application stylesheet) never change: a year, immutable. */
export const BRANDING_ASSET_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;
/** The product name, an application's display name and its mail sender name: characters. */
export const BRAND_NAME_MAX_LENGTH = 100;
export const MAIL_SENDER_NAME_MAX_LENGTH = 64;
/**
 * WCAG 2.1 AA: text (the button label on the accent) at least 4.5:1 (SC 1.4.3); the accent as
 * a non-text boundary (the primary button's fill, focus ring, selected field) at least 3:1
 * against the page background of both themes (SC 1.4.11).
 */
export const ACCENT_TEXT_CONTRAST_MIN = 4.5;
export const ACCENT_SURFACE_CONTRAST_MIN = 3;
/** The design system's page backgrounds (packages/hosted/src/signin.css --bg), light and dark. */
export const PAGE_BACKGROUND_LIGHT = '#ffffff';
export const PAGE_BACKGROUND_DARK = '#17171a';
/** The two label colours a button on the accent may take: the one with more contrast is picked. */
export const ACCENT_TEXT_LIGHT = '#ffffff';
export const ACCENT_TEXT_DARK = '#111111';

// ---- How the service runs: webhooks, sweeps, the database pool, the HTTP listener and its caches, SQLite checkpoints ----

/**
 * Event webhooks (webhooks/): each delivery attempt is one POST that must answer 2xx within
 * this time. 10 s: receivers should queue and answer at once (Standard Webhooks advice); a
 * slow one only delays its own endpoint's queue.
 */
export const WEBHOOK_REQUEST_TIMEOUT_MS = 10_000;
/**
 * A node's claim on a delivery lasts this long: longer than one attempt (the timeout) plus the
 * write that records its outcome, so a live node never loses its claim; a node killed mid
 * delivery hands it to another node after at most this long.
 */
export const WEBHOOK_LEASE_MS = 30_000;
/** Each node looks for due deliveries this often (and at once after recording a subscribed event). */
export const WEBHOOK_POLL_INTERVAL_MS = 1000;
/** Deliveries one node has in flight at most: a bound on its concurrent requests (a slow receiver holds only its own). */
export const WEBHOOK_CLAIM_BATCH = 20;
/**
 * Retries back off exponentially from the first delay, doubling up to the cap: 5, 10, 20, 40,
 * 80, 160 s, then every 300 s. The cap keeps a receiver that was down for an hour no more
 * than five minutes behind once it is back.
 */
export const WEBHOOK_RETRY_FIRST_DELAY_SECONDS = 5;
export const WEBHOOK_RETRY_MAX_DELAY_SECONDS = 5 * 60;
/**
 * A delivery is retried for this long after its event, then given up (the next event of the
 * same user then goes): a day covers a receiver's outage through a night or a redeploy.
 */
export const WEBHOOK_RETRY_WINDOW_HOURS = 24;
/**
 * An endpoint that has failed every attempt for this long (no 2xx in between) is disabled,
 * so a receiver that is gone stops costing requests; the operator sees why and re-enables it.
 * Three days: longer than the retry window, so a weekend outage never needs an operator.
 */
export const WEBHOOK_DISABLE_AFTER_FAILING_HOURS = 72;
/**
 * Nodes keep the endpoints' subscriptions in memory for this long, so an event nobody
 * subscribes to costs no extra statement; a change made on another node (or by the CLI)
 * reaches a node within this time, a change made on the node itself at once.
 */
export const WEBHOOK_SUBSCRIPTION_CACHE_MS = 5000;
/** Random bytes of a signing secret: 24 (192 bits), within Standard Webhooks' 24 to 64. */
export const WEBHOOK_SECRET_BYTES = 24;
/** Endpoints per service: deliveries fan out per endpoint, so keep the fan-out small. */
export const WEBHOOK_ENDPOINTS_MAX = 20;
/** The console's list of an endpoint's deliveries shows at most this many, newest first. */
export const WEBHOOK_DELIVERIES_LISTED = 100;
/** An endpoint URL, like a redirect URI. */
export const WEBHOOK_URL_MAX_LENGTH = 2000;
/** The last error kept on an endpoint (a status line or network error code, never a body). */
export const WEBHOOK_ERROR_MAX_LENGTH = 200;

/** Rows past their expiry are deleted this often. */
export const SWEEP_INTERVAL_SECONDS = 60;

/**
 * The sweep deletes at most this many rows of a table per statement, letting other work run
 * between statements: one statement over a minute of logins at 300/s (36,000 codes and
 * challenges) held SQLite's event loop for 86 ms (docs/performance.md, the soak).
 */
export const SWEEP_BATCH_ROWS = 1000;

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
/** The operator console's own listener (--console-port) binds here unless SERVICE_IDP_CONSOLE_HOST says otherwise. */
export const CONSOLE_LISTENER_HOST = '127.0.0.1';
export const BODY_LIMIT_BYTES = 16 * 1024;

/**
 * Entries of the in-process cache of immutable rows: client/user pairs already recorded as
 * signed in (a pair goes with its client or its user, whose ids are never reused). Users are
 * not cached: operators disable and delete them (users/). The bound only caps memory (the
 * cache empties when full).
 */
export const IMMUTABLE_ROW_CACHE_ENTRIES = 50_000;

/**
 * The browser scope's CORS check knows every client's origins from a per-node cache; an origin
 * it does not know makes the request wait for a reload, and reloads run at most this often: a
 * client registered a moment ago (by the CLI, the admin API or another node) is answered within
 * this time, and a flood of made-up origins costs one read per interval.
 */
export const ORIGINS_RELOAD_INTERVAL_MS = 1000;

/**
 * The device-challenge request may take its client from a per-process cache of client records
 * (by publishable key) this young, instead of reading it: a challenge is a nonce bound to the
 * client's id and is worth nothing until an authenticate request, which reads the client
 * afresh, spends it. A client deleted or changed on this node leaves the cache at once; on
 * another node (or by the CLI) within this time, during which that node still hands out
 * challenges for it and nothing more (docs/security.md).
 */
export const BROWSER_CLIENT_CACHE_MS = 5000;
/** Entries of that cache (client records; the oldest goes first when full). */
export const BROWSER_CLIENT_CACHE_ENTRIES = 1000;

/** SQLite: a worker thread checkpoints the WAL this often (storage/database.ts). */
export const SQLITE_CHECKPOINT_INTERVAL_MS = 200;
/** SQLite: the main connection checkpoints itself only past this many WAL pages (4 KiB each). */
export const SQLITE_BACKSTOP_CHECKPOINT_PAGES = 20_000;

/** Domains one organization may claim (verified or pending). */
export const ORGANIZATION_DOMAINS_MAX = 20;
/** A DNS look-up for a domain's verification record gives up after this long (each of two tries). */
export const DOMAIN_DNS_TIMEOUT_MS = 3000;
/** Domain verification attempts per organization per hour (each is a DNS look-up the service makes). */
export const DOMAIN_VERIFY_PER_ORGANIZATION = [{ max: 30, windowSeconds: 60 * 60 }] as const;
/** The sign-in's table of domains routed to an organization's provider is read again after this long (another node's change shows by then). */
export const DOMAIN_ROUTES_CACHE_MS = 10_000;
/** Organization roles in the template (every organization has them). */
export const ORGANIZATION_ROLES_MAX = 50;
/** An invitation's link works this long (a resend makes a new link and the old one stops working). */
export const ORGANIZATION_INVITATION_TTL_HOURS = 72;
/** Invitations sent (and resent) per organization per hour: each is a mail. */
export const ORGANIZATION_INVITATIONS_PER_ORGANIZATION = [{ max: 100, windowSeconds: 60 * 60 }] as const;
/** An organization's name, and an external (SCIM) id. */
export const ORGANIZATION_NAME_MAX_LENGTH = 100;
/**
 * Organizations one user may create in the account center (SERVICE_IDP_ORGANIZATIONS_PER_USER):
 * a person runs a few companies or teams, not dozens; the cap keeps one account from filling the
 * service with organizations (each with invitations that send mail). Deleted ones free a place.
 */
export const ORGANIZATIONS_PER_USER = 5;
/**
 * RFC 8628 (device-authorization/): a device code and its user code live 10 minutes (the user
 * walks to a phone, signs in, compares the code); the device polls every 5 seconds, 5 more after
 * each slow_down (3.5). 8 letters of 20 consonants (6.1: 20^8 ≈ 2.6·10^10) against at most
 * DEVICE_USER_CODE_ATTEMPTS tries per address and per browser leave a guesser no chance within
 * a code's life.
 */
export const DEVICE_CODE_TTL_SECONDS = 10 * 60;
export const DEVICE_POLL_INTERVAL_SECONDS = 5;
export const DEVICE_SLOW_DOWN_SECONDS = 5;
export const DEVICE_USER_CODE_ATTEMPTS = [
  { max: 10, windowSeconds: 10 * 60 },
  { max: 50, windowSeconds: 24 * 60 * 60 },
] as const;
/** Device authorization requests per address (each writes a row): enough for a household's devices. */
export const DEVICE_AUTHORIZATIONS_PER_IP = [{ max: 30, windowSeconds: 10 * 60 }] as const;
/** The longest `device_name` a device may declare (shown on the confirmation page, marked as not verified). */
export const DEVICE_NAME_MAX_LENGTH = 64;
