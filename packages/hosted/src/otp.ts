/**
 * The email code step: the 6-digit code mailed after OTP_NEEDED, then verifyDevice. Help when
 * the code does not come: "Resend the code" (disabled, with a countdown, through the service's
 * resend spacing: the same send limits apply and a refusal is said), "Use another address"
 * (back to the first step), and a hint. A pasted code may hold spaces.
 */
import { afterDevice } from './enroll.js';
import { failureText, t } from './i18n.js';
import { $, input, onSubmit, say, show } from './page.js';
import { client, signIn } from './state.js';

/** The resend spacing in force, from the page's meta tag (the service's SERVICE_IDP_SEND_SPACING_SECONDS). */
const resendSeconds = (): number =>
  Number(document.querySelector<HTMLMetaElement>('meta[name="service-sign-in"]')?.dataset.resendSeconds) || 30;

let countdown: ReturnType<typeof setInterval> | undefined;

/** Disables "Resend the code" for `seconds`, saying how long is left, then enables it. */
function waitToResend(seconds: number): void {
  const button = $<HTMLButtonElement>('otp-resend');
  if (countdown) clearInterval(countdown);
  let left = seconds;
  const tick = () => {
    if (left <= 0) {
      if (countdown) clearInterval(countdown);
      countdown = undefined;
      button.disabled = false;
      button.textContent = t('hosted.otp.resend');
      return;
    }
    button.disabled = true;
    button.textContent = t('hosted.otp.resendIn', { seconds: left });
    left -= 1;
  };
  tick();
  countdown = setInterval(tick, 1000);
}

export function showOtp(): void {
  $('otp-email').textContent = signIn.email;
  input('otp').value = '';
  show('otp-step');
  waitToResend(resendSeconds());
}

export function setUpOtp(): void {
  onSubmit('otp-step', async () => {
    const otp = input('otp').value.replace(/\s+/g, '');
    const verified = await client.verifyEmailOtp({ userid: signIn.email, otp });
    if (verified.status !== 'SUCCESS') return say(failureText(verified));
    await afterDevice(await client.verifyDevice({ userid: signIn.email }));
  });
  $('otp-resend').addEventListener('click', async () => {
    $<HTMLButtonElement>('otp-resend').disabled = true;
    say('');
    const result = await client.authenticate(signIn.email, {
      rememberDevice: input('remember').checked,
      ...(signIn.pkce ? { code_challenge: signIn.pkce.codeChallenge, code_challenge_method: 'S256' } : {}),
    });
    if (result.status === 'OTP_NEEDED') {
      say(t('hosted.otp.resent'));
      waitToResend(resendSeconds());
      input('otp').focus();
      return;
    }
    say(failureText(result));
    waitToResend('retryAfter' in result && typeof result.retryAfter === 'number' ? result.retryAfter : 1);
  });
  $('otp-other').addEventListener('click', () => {
    if (countdown) clearInterval(countdown);
    say('');
    show('email-step');
    input('email').select();
  });
}
