import { Paths } from 'service-protocol';

/**
 * Paths used by this library. The MFA step-up paths are not in the protocol package yet (the
 * service does not implement them); they live here until the protocol names them.
 */
export const ClientPaths = {
  client: Paths.client,
  deviceChallenge: Paths.deviceChallenge,
  authenticate: Paths.authenticate,
  verifyEmailOtp: Paths.verifyEmailOtp,
  verifyDevice: Paths.verifyDevice,
  initiateMfa: '/v1/mfa/initiate',
  verifyMfa: '/v1/mfa/verify',
} as const;
