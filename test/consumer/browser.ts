/**
 * The browser half of an integrator's app, as a bundler sees it: service-web signs the user in
 * and hands the authorization code (and PKCE verifier) to the backend. esbuild bundles this
 * file, and the test runs the bundle in Chromium on a page of the client's origin.
 */
import { createPkcePair, MfaMethod, ServiceClient, Status, type VerifyDeviceResult } from 'service-web';

export interface BrowserSignIn {
  code: string;
  codeVerifier: string;
  deviceRemembered: boolean | undefined;
}

/** Signs `email` in with the one-time code the service returns in test mode. */
export async function signIn(serviceUrl: string, publishableKey: string, email: string): Promise<BrowserSignIn> {
  const sdk = new ServiceClient();
  const init = await sdk.init(publishableKey, serviceUrl);
  if (!init.success) throw new Error(`init: ${init.status} ${init.message}`);
  const pkce = await createPkcePair();
  const started = await sdk.authenticate(email, {
    rememberDevice: true,
    code_challenge: pkce.codeChallenge,
    code_challenge_method: 'S256',
  });
  if (started.status !== Status.OTP_NEEDED || started.code === undefined)
    throw new Error(`authenticate: ${started.status} ${started.message}`);
  const verified = await sdk.verifyEmailOtp({ userid: email, otp: started.code });
  if (verified.status !== Status.SUCCESS) throw new Error(`verifyEmailOtp: ${verified.status} ${verified.message}`);
  const device: VerifyDeviceResult = await sdk.verifyDevice({ userid: email });
  if (device.status === Status.MFA_ENROLLMENT_NEEDED)
    throw new Error(`MFA is optional for this client; offered ${device.methods.join(', ')} (${MfaMethod.TOTP})`);
  if (device.status !== Status.SUCCESS && device.status !== Status.DEVICE_REGISTERED)
    throw new Error(`verifyDevice: ${device.status} ${device.message}`);
  return { code: device.code, codeVerifier: pkce.codeVerifier, deviceRemembered: device.deviceRemembered };
}
