/**
 * The hosted sign-in page (served at /signin/signin.js): service-web against the service's own
 * first-party client, as any application uses it. Every call names the pending authorization
 * request (init's `authorizationRequest`), so the service applies the requesting app's MFA
 * policy; the code it ends with is traded for the app's code at /signin/complete.
 * docs/protocol.md ("Sign-in with redirects").
 */
import { setUpEmail } from './email.js';
import { setUpEnroll } from './enroll.js';
import { failureText } from './i18n.js';
import { setUpMfa } from './mfa.js';
import { setUpOtp } from './otp.js';
import { config, say, show } from './page.js';
import { setUpPasskeyMfa } from './passkey-mfa.js';
import { setUpPasskeyOffer } from './passkey-offer.js';
import { offerPasskeys, setUpPasskeySignIn } from './passkey-sign-in.js';
import { setUpRecoveryCodes } from './recovery-codes.js';
import { client, passkeys, signIn } from './state.js';
import { showUpstreamButtons, upstreamReturn } from './upstream.js';

setUpEmail();
setUpPasskeySignIn();
setUpOtp();
setUpEnroll();
setUpMfa();
setUpPasskeyMfa();
setUpRecoveryCodes();
setUpPasskeyOffer();

async function start(): Promise<void> {
  const options = { authorizationRequest: config.request };
  const [ready, support] = await Promise.all([client.init(config.publishableKey, config.issuer, options), passkeys.support()]);
  if (ready.status !== 'INITIALIZED') return say(failureText(ready));
  // Back from an upstream provider: its result decides the step.
  if (await upstreamReturn()) return;
  show('email-step');
  void showUpstreamButtons();
  if (!support.passkeys) return;
  const passkeysReady = await passkeys.init(config.publishableKey, config.issuer, options);
  signIn.passkeysUsable = passkeysReady.status === 'INITIALIZED';
  await offerPasskeys(support.conditionalUi);
}

void start();
