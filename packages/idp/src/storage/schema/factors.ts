/**
 * Part of Database (../schema.ts, which lists the exceptions to one owner per table): passkeys,
 * MFA methods and steps, recovery codes. Each table's owner is named beside it.
 */
export interface FactorTables {
  /** factors/passkey/: passkeys (WebAuthn discoverable credentials), listed with the user's devices */
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
  /** sign-in/ (the MFA step): each user's confirmed MFA method */
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
  /** sign-in/ (the MFA step): one MFA step (a login challenge or the confirmation of an enrollment) */
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
  /** sign-in/ (the MFA step): devices that skip MFA until expires_at (remember_me), bound to the method's version */
  mfa_remembered: {
    device_id: string;
    user_id: string;
    method_version: string;
    expires_at: number;
  };
  /**
   * factors/recovery-code/: the user's current set of single-use recovery codes, as keyed hashes. They
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
}
