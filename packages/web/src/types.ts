import type { CaptchaChallenge, DeviceInfo, MfaMethod, SendChallenge } from 'service-protocol';

export type { CaptchaChallenge, DeviceInfo, SendChallenge };

/** Options of {@link ServiceClient.init}. */
export interface InitOptions {
  /** Device-proof scheme; only 'v1' exists. Default 'v1'. */
  cryptoVersion?: string;
  /** Timeout of each request in milliseconds. Default 15000. */
  timeoutMs?: number;
  /**
   * The service's own hosted sign-in pages only: the pending authorization request the page
   * serves (its `/signin?request=…`). Every call then sends it in the
   * `x-service-authorization-request` header, so that the service applies the requesting app's
   * name and MFA policy, and carries this browser's cookies for the service's own origin
   * (`credentials: 'same-origin'`, where the request's binding cookie is; without the option
   * the client sends no cookie at all). An application's page leaves it out: the service reads
   * it for its hosted client only, and does not allow the header cross-origin (CORS).
   *
   * @example
   * ```ts
   * const request = new URLSearchParams(location.search).get('request') ?? '';
   * await client.init(publishableKey, location.origin, { authorizationRequest: request });
   * ```
   */
  authorizationRequest?: string;
}

/** Options of {@link ServiceClient.authenticate}; names follow the spec. */
export interface AuthenticateOptions {
  /** Register a device key after the email OTP so that the next login skips it. */
  rememberDevice?: boolean;
  /** PKCE S256 challenge (RFC 7636), see createPkcePair. */
  code_challenge?: string;
  /** Only 'S256' is accepted; defaults to 'S256' when code_challenge is set. */
  code_challenge_method?: string;
  /** After CHALLENGE_REQUIRED: what solveChallenge returned for its `challenge`, sent with this retry. */
  challengeSolution?: string;
}

/** Statuses that report a failure; every operation can return them. */
export type FailureStatus =
  | 'INVALID_EMAIL'
  | 'NOT_INITIALIZED'
  | 'INVALID_API_KEY'
  | 'INVALID_REQUEST'
  | 'INVALID_OTP'
  | 'OTP_EXPIRED'
  | 'SESSION_EXPIRED'
  | 'RATE_LIMITED'
  | 'CHALLENGE_REQUIRED'
  | 'ACCOUNT_LOCKED'
  | 'DEVICE_KEY_UNAVAILABLE'
  | 'MFA_UNAVAILABLE'
  | 'NETWORK_ERROR'
  | 'TIMEOUT'
  | 'SERVICE_ERROR';

/** What every operation returns when it fails. It never throws. */
export interface FailureResult {
  status: FailureStatus;
  message: string;
  /** Present (false) on the operations whose result has a `success` field. */
  success?: false;
  /** Seconds until a rate-limited or locked request may be retried. */
  retryAfter?: number;
  /** Wrong guesses still allowed on the current OTP challenge (INVALID_OTP). */
  attemptsRemaining?: number;
  /**
   * CHALLENGE_REQUIRED: what the service asks before it sends a code (many codes were asked
   * lately); nothing was sent. By its `kind`: the proof of work (`'pow'`), solved with
   * solveChallenge; or the operator's CAPTCHA (`'turnstile'`, `'hcaptcha'`): render the
   * provider's widget with `siteKey` (and Turnstile's `action`), and its token is the solution.
   * Then call the same operation again with the solution as `challengeSolution`.
   */
  challenge?: SendChallenge | CaptchaChallenge;
}

/** Result of {@link ServiceClient.init}. */
export type InitializationResult = { status: 'INITIALIZED'; message: string; success: true } | (FailureResult & { success: false });

/**
 * MFA_REQUIRED: the user has MFA, so this login must pass it. Returned by authenticate (a known
 * device) and by verifyDevice (a new device). Call initiateMfa with `sessionId`, then verifyMfa
 * (for `method: 'passkey'`, service-web/passkeys `verifyMfa` instead: nothing is sent).
 *
 * @example
 * ```ts
 * if (r.status === 'MFA_REQUIRED') {
 *   await ServiceInitializer.initiateMfa({ userid, sessionId: r.sessionId });
 *   showOtpForm(r.method); // 'email' | 'sms' | 'totp' ('passkey': passkeys.verifyMfa)
 * }
 * ```
 */
export interface MfaRequiredResult {
  status: 'MFA_REQUIRED';
  message: string;
  /** The MFA session; the client also remembers it for verifyMfa. */
  sessionId: string;
  /** The user's MFA method. */
  method: MfaMethod;
  /** service-web/passkeys signIn() only: the passkey's user, the `userid` for initiateMfa and verifyMfa (a sign-in without an address). */
  userid?: string;
}

/** Result of {@link ServiceClient.authenticate}; the fields present depend on `status`. */
export type AuthenticationResult =
  | {
      status: 'SUCCESS';
      message: string;
      success: true;
      code: string;
      /** The issuer that issued `code` (RFC 9207 `iss`): pass it on with the code to a client that checks it (openid-client). */
      iss: string;
    }
  | { status: 'OTP_NEEDED'; message: string; deviceToken: string; code?: string }
  /** The address's organization signs in with its own provider: call service-web/upstream's signInWith(connection). No code was sent. */
  | { status: 'UPSTREAM_REQUIRED'; message: string; connection: string }
  | MfaRequiredResult
  | FailureResult;

/** Result of {@link ServiceClient.verifyEmailOtp}. */
export type VerifyEmailOtpResult =
  | {
      status: 'SUCCESS';
      message: string;
      /** The user already has a second factor: call verifyDevice without mfaMethod (it answers MFA_REQUIRED); offer no enrollment. */
      mfaEnrolled: boolean;
    }
  | FailureResult;

/** Argument of {@link ServiceClient.verifyDevice}. */
export interface VerifyDeviceInput {
  userid: string;
  /** Enrolls the user in this MFA method; send it after MFA_ENROLLMENT_NEEDED. */
  mfaMethod?: MfaMethod;
  /**
   * The phone number for mfaMethod 'sms' (required then, refused otherwise), in E.164 form:
   * `+` and 7 to 15 digits. Spaces, dashes, dots and parentheses are removed before the check,
   * so `+1 (415) 555-0123` is sent as `+14155550123`.
   */
  phoneNumber?: string;
  /** After CHALLENGE_REQUIRED: what solveChallenge returned for its `challenge`, sent with this retry. */
  challengeSolution?: string;
}

/**
 * verifyDevice's SUCCESS: the new device is verified and `code` is the authorization code.
 * (DEVICE_REGISTERED, the spec's other name for this outcome, is passed through the same way.)
 */
export interface VerifyDeviceSuccessResult {
  status: 'SUCCESS' | 'DEVICE_REGISTERED';
  message: string;
  code: string;
  /** The issuer that issued `code` (RFC 9207 `iss`), as authenticate's SUCCESS. */
  iss: string;
  /** True when a device key was stored, so the next authenticate skips the email OTP. */
  deviceRemembered: boolean;
  /**
   * Present once, when this step enrolled the user in email MFA: the single-use recovery codes
   * (XXXXX-XXXXX) to show the user now, with "save these": the service never shows them again.
   */
  recoveryCodes?: string[];
}

/**
 * MFA_ENROLLMENT_NEEDED: the client requires MFA and the user has none. The device step stays
 * open: let the user pick one of `methods` and call verifyDevice again with it.
 *
 * @example
 * ```ts
 * if (r.status === 'MFA_ENROLLMENT_NEEDED') {
 *   const mfaMethod = await askUser(r.methods); // e.g. 'totp'
 *   r = await ServiceInitializer.verifyDevice({ userid, mfaMethod });
 * }
 * ```
 */
export interface MfaEnrollmentNeededResult {
  status: 'MFA_ENROLLMENT_NEEDED';
  message: string;
  /** The methods the user may enroll in. */
  methods: MfaMethod[];
}

/**
 * FINALIZE_REGISTRATION_NEEDED: the chosen MFA method must be confirmed with its first code.
 * For TOTP, show `otpauthUri` as a QR code (and `secret` for manual entry) once, then ask for
 * the app's code; for SMS and email the code was just sent. Then call verifyMfa (no initiateMfa).
 * Do not log or store `otpauthUri` or `secret`: they are the user's second factor.
 *
 * @example
 * ```ts
 * if (r.status === 'FINALIZE_REGISTRATION_NEEDED') {
 *   if (r.otpauthUri) showQrCode(r.otpauthUri);
 *   const otp = await askForCode();
 *   const done = await ServiceInitializer.verifyMfa({ userid, otp });
 *   if (done.status === 'SUCCESS') await sendToBackend(done.code);
 * }
 * ```
 */
export interface FinalizeRegistrationResult {
  status: 'FINALIZE_REGISTRATION_NEEDED';
  message: string;
  /** The method being enrolled. */
  method: MfaMethod;
  /** The MFA session; the client remembers it, pass it to verifyMfa only from another client. */
  sessionId: string;
  /** TOTP only: the `otpauth://totp/...` URI an authenticator app reads from a QR code. */
  otpauthUri?: string;
  /** TOTP only: the base32 secret, for typing into an authenticator app by hand. */
  secret?: string;
}

/** Result of {@link ServiceClient.verifyDevice}; the fields present depend on `status`. */
export type VerifyDeviceResult =
  | VerifyDeviceSuccessResult
  | MfaEnrollmentNeededResult
  | FinalizeRegistrationResult
  | MfaRequiredResult
  | FailureResult;

/** Argument of {@link ServiceClient.initiateMfa}. */
export interface InitiateMfaInput {
  userid: string;
  /** From authenticate's or verifyDevice's MFA_REQUIRED. */
  sessionId: string;
  /** After CHALLENGE_REQUIRED: what solveChallenge returned for its `challenge`, sent with this retry. */
  challengeSolution?: string;
}

/** initiateMfa's MFA_INITIATED: the code was sent (email, SMS) or is expected from the app (TOTP). */
export interface MfaInitiatedResult {
  status: 'MFA_INITIATED';
  message: string;
  /** Where the code comes from. */
  method: MfaMethod;
}

/** Result of {@link ServiceClient.initiateMfa}. */
export type InitiateMfaResult = MfaInitiatedResult | FailureResult;

/** Argument of {@link ServiceClient.verifyMfa}. */
export interface VerifyMfaInput {
  userid: string;
  /** The 6-digit code, or at a sign-in step one of the user's recovery codes (XXXXX-XXXXX) when the method is lost. */
  otp: string;
  /** Skip MFA on this (remembered) device for the service's remember period (not with a recovery code). */
  remember_me?: boolean;
  /** With the method's own code: replace the user's recovery codes; the new set comes back in `recoveryCodes`. */
  regenerateRecoveryCodes?: boolean;
  /**
   * The MFA session. Optional: by default the one remembered from this client's authenticate,
   * verifyDevice or initiateMfa for `userid`; when given, it wins.
   */
  sessionId?: string;
}

/** verifyMfa's SUCCESS: `code` is the authorization code. */
export interface VerifyMfaSuccessResult {
  status: 'SUCCESS';
  message: string;
  success: true;
  code: string;
  /** The issuer that issued `code` (RFC 9207 `iss`), as authenticate's SUCCESS. */
  iss: string;
  /**
   * Present when this step finished a new-device login (verifyDevice answered
   * FINALIZE_REGISTRATION_NEEDED or MFA_REQUIRED on this client): true when its device key was
   * stored, so the next authenticate skips the email OTP.
   */
  deviceRemembered?: boolean;
  /**
   * Present once, when this step confirmed an MFA enrollment or `regenerateRecoveryCodes` was
   * asked: the single-use recovery codes to show the user now; the service never shows them again.
   */
  recoveryCodes?: string[];
}

/** Result of {@link ServiceClient.verifyMfa}. */
export type VerifyMfaResult = VerifyMfaSuccessResult | (FailureResult & { success: false });

/** Result of {@link ServiceClient.listDevices}: the user's trusted devices for this application. */
export type ListDevicesResult = { status: 'SUCCESS'; message: string; devices: DeviceInfo[] } | FailureResult;

/** Result of renameDevice, revokeDevice and revokeOtherDevices; `revoked` counts the devices signed out. */
export type DeviceChangeResult = { status: 'SUCCESS'; message: string; revoked?: number } | FailureResult;
