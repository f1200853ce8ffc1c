/** The email code step: the 6-digit code mailed after OTP_NEEDED, then verifyDevice. */
import { afterDevice } from './enroll.js';
import { failureText } from './i18n.js';
import { $, input, onSubmit, say, show } from './page.js';
import { client, signIn } from './state.js';

export function showOtp(): void {
  $('otp-email').textContent = signIn.email;
  show('otp-step');
}

export function setUpOtp(): void {
  onSubmit('otp-step', async () => {
    const verified = await client.verifyEmailOtp({ userid: signIn.email, otp: input('otp').value.trim() });
    if (verified.status !== 'SUCCESS') return say(failureText(verified));
    await afterDevice(await client.verifyDevice({ userid: signIn.email }));
  });
}
