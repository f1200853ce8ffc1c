/**
 * The email code step: the 6-digit code mailed after OTP_NEEDED, then verifyDevice. Help when
 * the code does not come: "Resend the code" (disabled, with a countdown, through the service's
 * resend spacing: the same send limits apply and a refusal is said), "Use another address"
 * (back to the first step), and a hint. A pasted code may hold spaces.
 */
import { solvingChallenge } from './challenge.js';
import { afterDevice } from './enroll.js';
import { failureText, t } from './i18n.js';
import { $, input, onSubmit, say, show } from './page.js';
import { resendCountdown, resendSeconds } from './resend.js';
import { client, signIn } from './state.js';

const countdown = resendCountdown('otp-resend');

export function showOtp(): void {
  $('otp-email').textContent = signIn.email;
  input('otp').value = '';
  show('otp-step');
  countdown.wait(resendSeconds());
}

export function setUpOtp(): void {
  onSubmit('otp-step', async () => {
    const otp = input('otp').value.replace(/\s+/g, '');
    const verified = await client.verifyEmailOtp({ userid: signIn.email, otp });
    if (verified.status !== 'SUCCESS') return say(failureText(verified));
    await afterDevice(await solvingChallenge((challengeSolution) => client.verifyDevice({ userid: signIn.email, challengeSolution })));
  });
  $('otp-resend').addEventListener('click', async () => {
    $<HTMLButtonElement>('otp-resend').disabled = true;
    say('');
    const result = await solvingChallenge((challengeSolution) =>
      client.authenticate(signIn.email, {
        rememberDevice: input('remember').checked,
        ...(signIn.pkce ? { code_challenge: signIn.pkce.codeChallenge, code_challenge_method: 'S256' } : {}),
        ...(challengeSolution ? { challengeSolution } : {}),
      }),
    );
    if (result.status === 'OTP_NEEDED') {
      say(t('hosted.otp.resent'));
      countdown.wait(resendSeconds());
      input('otp').focus();
      return;
    }
    say(failureText(result));
    countdown.wait('retryAfter' in result && typeof result.retryAfter === 'number' ? result.retryAfter : 1);
  });
  $('otp-other').addEventListener('click', () => {
    countdown.stop();
    say('');
    show('email-step');
    input('email').select();
  });
}
