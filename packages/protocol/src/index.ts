/**
 * The wire contract between service-web, service-oauth-client and service-idp.
 *
 * Everything that crosses the network is named here once: paths, headers, request and
 * response bodies, statuses and error codes. `docs/protocol.md` is the prose version of
 * this file; the two must agree.
 */

export * from './account.js';
export * from './admin.js';
export * from './bodies.js';
export * from './delegation.js';
export * from './device-proof.js';
export * from './devices.js';
export * from './email.js';
export * from './errors.js';
export * from './hosted.js';
export * from './oidc.js';
export * from './passkeys.js';
export * from './phone.js';
export * from './statuses.js';
export * from './upstream.js';

/** Version of the browser wire interface. A breaking change gets a new path prefix. */
export const PROTOCOL_VERSION = 'v1';

/** Header that carries the publishable key on every browser request. */
export const PUBLISHABLE_KEY_HEADER = 'x-service-key';

/**
 * Header of the service's own hosted sign-in pages: the pending authorization request
 * (`/signin?request=…`) a browser call serves, so that the hosted client takes that app's name
 * and MFA policy (docs/protocol.md, "Sign-in with redirects"). service-web sends it when
 * init() gets `authorizationRequest`.
 */
export const AUTHORIZATION_REQUEST_HEADER = 'x-service-authorization-request';

/**
 * Header of a code-sending request retried after `428 ERR_CHALLENGE_REQUIRED`: the solved
 * proof of work, as service-web's solveChallenge returns it (docs/protocol.md, "Send
 * challenge"). The same header on every endpoint that sends a code.
 */
export const CHALLENGE_SOLUTION_HEADER = 'x-service-challenge-solution';

/** Every browser endpoint lives under this prefix, and only there does the service answer CORS. */
export const BROWSER_PREFIX = '/v1';

/** Browser endpoints, relative to BROWSER_PREFIX. */
export const BrowserPaths = {
  client: '/client',
  deviceChallenge: '/device-challenges',
  authenticate: '/authenticate',
  verifyEmailOtp: '/email-otp/verify',
  verifyDevice: '/devices',
  mfaInitiate: '/mfa/initiate',
  mfaVerify: '/mfa/verify',
  /** Device management, each authenticated by a fresh device proof of the calling device (devices.ts). */
  listDevices: '/devices/list',
  renameDevice: '/devices/rename',
  revokeDevice: '/devices/revoke',
  revokeOtherDevices: '/devices/revoke-others',
} as const;

/**
 * Paths served by service-idp, relative to its base URL. Plain string literals, not built from
 * BROWSER_PREFIX and BrowserPaths, so that bundlers can drop this object from service-web (which
 * uses BrowserPaths): esbuild keeps an object whose values it cannot prove side-effect free.
 * `satisfies` keeps the browser paths equal to BROWSER_PREFIX + BrowserPaths.
 */
export const Paths = {
  client: '/v1/client',
  deviceChallenge: '/v1/device-challenges',
  authenticate: '/v1/authenticate',
  verifyEmailOtp: '/v1/email-otp/verify',
  verifyDevice: '/v1/devices',
  mfaInitiate: '/v1/mfa/initiate',
  mfaVerify: '/v1/mfa/verify',
  listDevices: '/v1/devices/list',
  renameDevice: '/v1/devices/rename',
  revokeDevice: '/v1/devices/revoke',
  revokeOtherDevices: '/v1/devices/revoke-others',
  /** Passkeys (passkeys.ts PasskeyPaths), under BROWSER_PREFIX like every browser endpoint. */
  passkeyRegistrationOptions: '/v1/passkeys/registration/options',
  passkeyRegistration: '/v1/passkeys/registration',
  passkeyAuthenticationOptions: '/v1/passkeys/authentication/options',
  passkeyAuthentication: '/v1/passkeys/authentication',
  passkeyMfaEnrollmentOptions: '/v1/passkeys/mfa/enrollment/options',
  passkeyMfaEnrollment: '/v1/passkeys/mfa/enrollment',
  passkeyMfaOptions: '/v1/passkeys/mfa/options',
  passkeyMfaVerify: '/v1/passkeys/mfa/verify',
  /** The plain page a new-device mail links to ("this wasn't me"): GET shows, POST revokes. */
  deviceNotice: '/devices/not-me',
  /** Delegation: a nested JWT (signed, then encrypted) in, one out; docs/delegation.md. */
  delegation: '/v1/delegation',
  /** OIDC Core 3.1.2: the authorization endpoint (GET and POST form) and its hosted sign-in pages. */
  authorize: '/authorize',
  signIn: '/signin',
  signInComplete: '/signin/complete',
  /** Finishes a sign-in held by /signin/complete while the page showed its recovery codes. */
  signInContinue: '/signin/continue',
  /**
   * The hosted pages' "Add a passkey" offer on a held sign-in (after /signin/complete with
   * `hold`): creation options, then the new credential; /signin/continue then finishes.
   */
  signInPasskeyOptions: '/signin/passkey/options',
  signInPasskey: '/signin/passkey',
  /**
   * The fallback of Device Bound Session Credentials (browsers without DBSC): the renewal
   * interstitial at /authorize posts a proof of the hosted page's WebCrypto key here.
   */
  signInSessionRenew: '/signin/session/renew',
  /** The language switcher of every hosted page (a form POST): sets this browser's language, and the signed-in user's. */
  locale: '/locale',
  token: '/oauth/token',
  /** RFC 7009 token revocation (refresh and access tokens). */
  revocation: '/oauth/revoke',
  /** RFC 7662 token introspection, for the client a token was issued to and its API's resource server. */
  introspection: '/oauth/introspect',
  /** RFC 7591 dynamic client registration (when the operator allows it); RFC 7592 management at /oauth/register/<client_id>. */
  registration: '/oauth/register',
  /** RFC 8628 3.1: the device authorization endpoint (a device without a browser starts the device grant here). */
  deviceAuthorization: '/oauth/device_authorization',
  /** RFC 8628 3.3: the verification page, where the user enters the device's user code and approves it. */
  deviceVerification: '/device',
  /** RFC 9126: pushed authorization requests. */
  pushedAuthorizationRequest: '/oauth/par',
  /** OpenID Connect RP-Initiated Logout 1.0: the end-session endpoint (GET and POST form). */
  endSession: '/logout',
  userinfo: '/oauth/userinfo',
  jwks: '/.well-known/jwks.json',
  discovery: '/.well-known/openid-configuration',
  /** RFC 8414 3: the OAuth authorization server metadata, the same document as discovery's. */
  authorizationServerMetadata: '/.well-known/oauth-authorization-server',
  sdkScript: '/sdk/v1/service-web.js',
  devMail: '/dev/mail',
  devSms: '/dev/sms',
  health: '/healthz',
  /** Readiness: 200 while the database answers, 503 otherwise. */
  ready: '/readyz',
  /** An application's logo, by content hash: `/branding/logos/<sha256>.<png|jpg|webp>`, cached for a year. */
  brandingLogos: '/branding/logos',
  /** The stylesheet of an accent colour: `/branding/accent/<rrggbb>.css` (custom properties only), cached for a year. */
  brandingAccent: '/branding/accent',
} as const satisfies { [K in keyof typeof BrowserPaths]: `${typeof BROWSER_PREFIX}${(typeof BrowserPaths)[K]}` } & Record<string, string>;

/** Six decimal digits (spec: "OTP format: 6 digits"). */
export const OTP_PATTERN = /^[0-9]{6}$/;

/**
 * A recovery code as a person types it: 10 Crockford base32 characters (no U), any case,
 * grouped 5-5 by an optional hyphen or space. Told from a 6-digit code by its shape, so
 * verifyMfa (and a change's current-factor step) take either in `otp`.
 */
export const RECOVERY_CODE_PATTERN = /^[0-9a-tv-z]{5}[- ]?[0-9a-tv-z]{5}$/i;

/** RFC 7636 4.1: 43 to 128 characters of the unreserved set. */
export const PKCE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge is a base64url SHA-256 digest without padding: exactly 43 characters. */
export const PKCE_CHALLENGE_PATTERN = /^[A-Za-z0-9\-_]{43}$/;
