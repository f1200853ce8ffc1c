/**
 * The first step: the address (authenticate, whose remembered device may sign in at once), and
 * beside it the passkeys (passkey-sign-in.ts).
 */
import { createPkcePair } from 'service-web';
import { solvingChallenge } from './challenge.js';
import { complete } from './complete.js';
import { startMfa } from './enroll.js';
import { failureText } from './i18n.js';
import { showOtp } from './otp.js';
import { input, onSubmit, say } from './page.js';
import { stopAutofill } from './passkey-sign-in.js';
import { client, signIn } from './state.js';
import { leaveFor } from './upstream.js';

export function setUpEmail(): void {
  onSubmit('email-step', async () => {
    signIn.passkeyFirst = false;
    stopAutofill();
    signIn.email = input('email').value.trim();
    signIn.pkce = await createPkcePair();
    const pkce = signIn.pkce;
    const result = await solvingChallenge((challengeSolution) =>
      client.authenticate(signIn.email, {
        rememberDevice: input('remember').checked,
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
        ...(challengeSolution ? { challengeSolution } : {}),
      }),
    );
    if (result.status === 'SUCCESS') return complete(result);
    if (result.status === 'MFA_REQUIRED') return startMfa(result.sessionId, result.method);
    // The address's organization signs in with its own provider: straight there, with no button to choose.
    if (result.status === 'UPSTREAM_REQUIRED') return leaveFor(result.connection);
    if (result.status !== 'OTP_NEEDED') return say(failureText(result));
    showOtp();
  });
}
