/**
 * The MFA code step: a 6-digit code (email, SMS or authenticator app; at an enrollment, with
 * the TOTP setup), or at a login one of the user's recovery codes instead.
 */
import type { MfaMethod } from 'service-web';
import { complete } from './complete.js';
import { failureText, t } from './i18n.js';
import { $, input, onSubmit, say, show } from './page.js';
import { showQr } from './qr.js';
import { client, signIn } from './state.js';

let mfaLabel = '';
let recoveryMode = false;

/**
 * Switches the MFA field between the method's 6-digit code and a recovery code (login only:
 * a new method is never confirmed by one). A recovery code never remembers the device.
 */
export function useRecoveryCode(on: boolean): void {
  recoveryMode = on;
  const field = input('mfa-code');
  Object.assign(field, {
    value: '',
    inputMode: on ? 'text' : 'numeric',
    maxLength: on ? 11 : 6,
    autocomplete: on ? 'off' : 'one-time-code',
  });
  if (on) field.removeAttribute('pattern');
  else field.setAttribute('pattern', '[0-9]{6}');
  $('mfa-label').textContent = on ? t('hosted.mfa.label.recovery') : mfaLabel;
  // After a passkey the device is the passkey itself: nothing to remember on this browser.
  $('mfa-remember-field').hidden = on || signIn.passkeyFirst;
  $('use-recovery').textContent = on ? t('hosted.mfa.useCode') : t('hosted.mfa.useRecovery');
  field.focus();
}

/** Shows the code step for `method`; at an enrollment (`enrolling`) with verifyDevice's TOTP setup. */
export function showMfa(method: MfaMethod, enrolling: boolean, setup?: { otpauthUri?: string; secret?: string }): void {
  const totp = enrolling && method === 'totp';
  $('totp-setup').hidden = !totp;
  if (setup?.otpauthUri) {
    $<HTMLAnchorElement>('totp-link').href = setup.otpauthUri;
    if (totp) void showQr($('totp-qr'), setup.otpauthUri);
  }
  $('totp-secret').textContent = setup?.secret ?? '';
  mfaLabel = t(method === 'totp' ? 'hosted.mfa.label.totp' : method === 'sms' ? 'hosted.mfa.label.sms' : 'hosted.mfa.label.email');
  $('use-recovery').hidden = enrolling;
  show('mfa-step');
  useRecoveryCode(false);
}

export function setUpMfa(): void {
  $('use-recovery').addEventListener('click', () => useRecoveryCode(!recoveryMode));
  onSubmit('mfa-step', async () => {
    const result = await client.verifyMfa({
      userid: signIn.email,
      otp: input('mfa-code').value.trim(),
      remember_me: !recoveryMode && input('mfa-remember').checked,
      ...(signIn.sessionId ? { sessionId: signIn.sessionId } : {}),
    });
    if (result.status !== 'SUCCESS') return say(failureText(result));
    await complete(result);
  });
}
