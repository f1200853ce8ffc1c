/**
 * The recovery codes step: shown once, at an MFA enrollment, while the service holds the
 * sign-in; "I have saved them" goes on to the passkey offer or to the app.
 */
import { continueSignIn } from './hosted-api.js';
import { $, onSubmit, show } from './page.js';
import { showPasskeyOffer } from './passkey-offer.js';
import { signIn } from './state.js';

export function showRecoveryCodes(codes: readonly string[]): void {
  $('recovery-codes').replaceChildren(...codes.map((code) => Object.assign(document.createElement('li'), { textContent: code })));
  show('codes-step');
}

/** After the recovery codes (if any): the passkey offer, or straight on to the app. */
export function afterHold(): Promise<void> | void {
  return signIn.offerPasskey ? showPasskeyOffer() : continueSignIn();
}

export function setUpRecoveryCodes(): void {
  onSubmit('codes-step', async () => afterHold());
}
