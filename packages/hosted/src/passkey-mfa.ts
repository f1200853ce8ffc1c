/**
 * A passkey as the second factor: the MFA step of a login (verifyMfa) or, at a new device's
 * enrollment, the new passkey that becomes the method (enrollMfa), both service-web/passkeys
 * ceremonies bound to the MFA session. A login without the passkey (or without WebAuthn) goes
 * through the code step with a recovery code.
 */
import { PasskeyStatus } from 'service-web/passkeys';
import { complete } from './complete.js';
import { failureText, t } from './i18n.js';
import { showMfa, useRecoveryCode } from './mfa.js';
import { $, input, onSubmit, say, show } from './page.js';
import { passkeys, signIn } from './state.js';

/** The statuses of a ceremony that ended in the browser (nothing the service said). */
const CEREMONY_ENDED: readonly string[] = [
  PasskeyStatus.PASSKEY_CANCELLED,
  PasskeyStatus.NO_AUTHENTICATOR,
  PasskeyStatus.PASSKEY_EXISTS,
  PasskeyStatus.PASSKEY_NOT_SUPPORTED,
];

export function showPasskeyMfa(enrolling: boolean): void {
  $('passkey-mfa-prompt').textContent = t(enrolling ? 'hosted.passkeyMfa.enrollPrompt' : 'hosted.passkeyMfa.prompt');
  $('passkey-mfa-button').textContent = t(enrolling ? 'hosted.passkeyMfa.create' : 'hosted.passkeyMfa.use');
  $('passkey-mfa-recovery').hidden = enrolling;
  $('passkey-mfa-remember-field').hidden = enrolling;
  $('passkey-mfa-step').dataset.enrolling = enrolling ? 'true' : '';
  show('passkey-mfa-step');
}

/** The code field in recovery-code mode: the way through a passkey step without the passkey (or without WebAuthn). */
export function passkeyMfaRecovery(): void {
  showMfa('passkey', false);
  useRecoveryCode(true);
  $('use-recovery').hidden = true; // no 6-digit code for a passkey: back is a new sign-in
}

export function setUpPasskeyMfa(): void {
  $('passkey-mfa-recovery').addEventListener('click', passkeyMfaRecovery);
  onSubmit('passkey-mfa-step', async () => {
    const enrolling = $('passkey-mfa-step').dataset.enrolling === 'true';
    const step = {
      userid: signIn.email,
      sessionId: signIn.sessionId ?? '',
      remember_me: !enrolling && input('passkey-mfa-remember').checked,
    };
    const result = enrolling ? await passkeys.enrollMfa(step) : await passkeys.verifyMfa(step);
    if (result.status === 'SUCCESS') return complete(result);
    say(CEREMONY_ENDED.includes(result.status) ? t('hosted.status.noPasskeyUsed') : failureText(result));
  });
}
