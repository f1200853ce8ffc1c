/**
 * After the email code: verifyDevice's answers, the second-factor enrollment step (choose a
 * method: a code by email or SMS, an authenticator app, a passkey), and the start of the MFA
 * step a login needs.
 */
import type { MfaMethod, VerifyDeviceInput, VerifyDeviceResult } from 'service-web';
import { solvingChallenge } from './challenge.js';
import { complete } from './complete.js';
import { failureText, t } from './i18n.js';
import { showMfa } from './mfa.js';
import { $, input, onSubmit, say, show } from './page.js';
import { passkeyMfaRecovery, showPasskeyMfa } from './passkey-mfa.js';
import { client, signIn } from './state.js';

/** The MFA step of a login (MFA_REQUIRED): a code sent (or the app's), or the passkey. */
export async function startMfa(sessionId: string, method: MfaMethod): Promise<void> {
  signIn.sessionId = sessionId;
  if (method === 'passkey') return signIn.passkeysUsable ? showPasskeyMfa(false) : passkeyMfaRecovery();
  const started = await solvingChallenge((challengeSolution) => client.initiateMfa({ userid: signIn.email, sessionId, challengeSolution }));
  if (started.status !== 'MFA_INITIATED') return say(failureText(started));
  showMfa(method, false);
}

function showEnrollment(methods: readonly MfaMethod[]): void {
  const list = $('enroll-methods');
  list.replaceChildren();
  for (const [index, method] of methods.filter((m) => m !== 'passkey' || signIn.passkeysUsable).entries()) {
    const label = document.createElement('label');
    label.className = 'check';
    const radio = Object.assign(document.createElement('input'), { type: 'radio', name: 'method', value: method, checked: index === 0 });
    radio.addEventListener('change', () => {
      $('phone-field').hidden = method !== 'sms';
    });
    // Every factor's label is its `hosted.method.<method>` message (packages/idp factors/module.ts); none: its name.
    const text = t(`hosted.method.${method}`);
    label.append(radio, ` ${text === `hosted.method.${method}` ? method : text}`);
    list.append(label);
  }
  $('phone-field').hidden = methods[0] !== 'sms';
  show('enroll-step');
}

/** The answers of verifyDevice (after the email code, or after choosing a method to enroll). */
export async function afterDevice(result: VerifyDeviceResult): Promise<void> {
  switch (result.status) {
    case 'SUCCESS':
    case 'DEVICE_REGISTERED':
      return complete(result);
    case 'MFA_REQUIRED':
      return startMfa(result.sessionId, result.method);
    case 'MFA_ENROLLMENT_NEEDED':
      return showEnrollment(result.methods);
    case 'FINALIZE_REGISTRATION_NEEDED':
      signIn.sessionId = result.sessionId;
      if (result.method === 'passkey') return showPasskeyMfa(true);
      return showMfa(result.method, true, result);
    default:
      return say(failureText(result));
  }
}

export function setUpEnroll(): void {
  onSubmit('enroll-step', async () => {
    const method = document.querySelector<HTMLInputElement>('input[name="method"]:checked')?.value as MfaMethod | undefined;
    const step: VerifyDeviceInput = { userid: signIn.email, ...(method ? { mfaMethod: method } : {}) };
    if (method === 'sms') step.phoneNumber = input('phone').value.trim();
    await afterDevice(await solvingChallenge((challengeSolution) => client.verifyDevice({ ...step, challengeSolution })));
  });
}
