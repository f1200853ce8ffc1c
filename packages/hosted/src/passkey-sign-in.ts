/**
 * Sign-in with a passkey on the email step (service-web/passkeys against the service's own
 * client; same origin, so the relying party id is this host or SERVICE_IDP_PASSKEY_RP_ID):
 * the "Sign in with a passkey" button, and the email field's autofill where the browser has
 * conditional UI. Discoverable credentials: no address is needed. The sign-in ends, like the
 * others, in a hosted code traded at /signin/complete.
 */
import { createPkcePair } from 'service-web';
import { type PasskeySignInResult, PasskeyStatus } from 'service-web/passkeys';
import { complete } from './complete.js';
import { startMfa } from './enroll.js';
import { failureText, t } from './i18n.js';
import { $, input, say, showing, somethingWentWrong } from './page.js';
import { passkeys, signIn } from './state.js';

let autofill: AbortController | undefined;

/** Withdraws the autofill's pending request (the user went on with the address instead). */
export function stopAutofill(): void {
  autofill?.abort();
  autofill = undefined;
}

/** One ceremony: `conditional` offers the passkeys in the email field's autofill. */
async function passkeySignIn(conditional: boolean, signal?: AbortSignal): Promise<void> {
  const pkce = await createPkcePair();
  const options = { code_challenge: pkce.codeChallenge, code_challenge_method: 'S256', ...(signal ? { signal } : {}) };
  const result = conditional ? await passkeys.autofill(options) : await passkeys.signIn(options);
  if (result.status !== 'SUCCESS' && result.status !== 'MFA_REQUIRED') return passkeyFailed(result, signal);
  signIn.pkce = pkce;
  signIn.passkeyFirst = true; // nothing to remember, no passkey to offer after a passkey
  if (result.status === 'SUCCESS') return complete(result);
  // The app does not count a passkey as MFA: its second factor, as after an email sign-in.
  signIn.email = result.userid;
  await startMfa(result.sessionId, result.method);
}

/** Says why a ceremony failed; a withdrawn autofill says nothing. */
function passkeyFailed(result: Exclude<PasskeySignInResult, { status: 'SUCCESS' | 'MFA_REQUIRED' }>, signal?: AbortSignal): void {
  if (!signal?.aborted) say(failureMessage(result));
}

function failureMessage(result: { status: string; message: string }): string {
  switch (result.status) {
    case PasskeyStatus.PASSKEY_CANCELLED:
      return t('hosted.status.noPasskeyChosen');
    case PasskeyStatus.NO_AUTHENTICATOR:
    case PasskeyStatus.PASSKEY_EXISTS:
    case PasskeyStatus.PASSKEY_NOT_SUPPORTED:
    case 'TIMEOUT':
    case 'SERVICE_ERROR':
      return somethingWentWrong();
    default:
      // What the service said (a refused passkey, an expired sign-in), in the page's language.
      return failureText(result);
  }
}

function startAutofill(): void {
  autofill = new AbortController();
  passkeySignIn(true, autofill.signal).catch(() => say(somethingWentWrong()));
}

/** Offers passkeys where this browser can use them: the button, and the autofill where it has conditional UI. */
export async function offerPasskeys(conditionalUi: boolean): Promise<void> {
  if (!signIn.passkeysUsable) return;
  $('passkey-sign-in').hidden = false;
  if (!conditionalUi) return;
  input('email').setAttribute('autocomplete', 'username webauthn');
  startAutofill();
}

export function setUpPasskeySignIn(): void {
  const button = $<HTMLButtonElement>('passkey-sign-in');
  button.addEventListener('click', async () => {
    button.disabled = true;
    say('');
    // One ceremony at a time: the autofill's request is withdrawn, and offered again after.
    const hadAutofill = autofill !== undefined;
    stopAutofill();
    try {
      await passkeySignIn(false);
    } catch {
      say(somethingWentWrong());
    } finally {
      button.disabled = false;
      if (hadAutofill && showing('email-step')) startAutofill();
    }
  });
}
