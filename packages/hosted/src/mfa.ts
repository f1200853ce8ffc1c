/**
 * The MFA code step: a 6-digit code (email, SMS or authenticator app; at an enrollment, with
 * the TOTP setup), or at a login one of the user's recovery codes instead. A code the service
 * sends (email, SMS) can be sent again: "Resend the code" counts down through the resend spacing
 * as the email code step's does (resend.ts), and the service's send limits apply alike: a login
 * asks initiateMfa again. An enrollment's confirmation SMS is not resent (/v1/mfa/initiate
 * refuses enrollment sessions, docs/protocol.md); an enrolled email needs no confirmation code.
 */
import type { MfaMethod } from 'service-web';
import { solvingChallenge } from './challenge.js';
import { complete } from './complete.js';
import { failureText, t } from './i18n.js';
import { $, input, onSubmit, say, show } from './page.js';
import { showQr } from './qr.js';
import { resendCountdown, resendSeconds } from './resend.js';
import { client, signIn } from './state.js';

let mfaLabel = '';
let recoveryMode = false;
/** The step shown: its method, and whether it confirms a new one. */
let step: { method: MfaMethod; enrolling: boolean } = { method: 'email', enrolling: false };
const countdown = resendCountdown('mfa-resend');
/** Whether the step's code is one the service sends, so can send again. */
const resendable = () => !step.enrolling && (step.method === 'email' || step.method === 'sms');

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
  $('mfa-resend').hidden = on || !resendable();
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
  step = { method, enrolling };
  show('mfa-step');
  useRecoveryCode(false);
  if (resendable()) countdown.wait(resendSeconds());
  else countdown.stop();
}

/** Sends the login step's code again: true when it went out. */
async function resend(): Promise<boolean> {
  const again = await solvingChallenge((challengeSolution) =>
    client.initiateMfa({ userid: signIn.email, sessionId: signIn.sessionId ?? '', challengeSolution }),
  );
  return again.status === 'MFA_INITIATED' || failed(again);
}

/** Says a refused resend and counts down what the service asked to wait (else a second). */
function failed(result: { status: string; retryAfter?: number }): false {
  say(failureText(result));
  countdown.wait(typeof result.retryAfter === 'number' ? result.retryAfter : 1);
  return false;
}

export function setUpMfa(): void {
  $('use-recovery').addEventListener('click', () => useRecoveryCode(!recoveryMode));
  $('mfa-resend').addEventListener('click', async () => {
    $<HTMLButtonElement>('mfa-resend').disabled = true;
    say('');
    if (!(await resend())) return;
    say(t('hosted.otp.resent'));
    countdown.wait(resendSeconds());
    input('mfa-code').focus();
  });
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
