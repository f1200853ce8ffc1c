/**
 * The passkey offer step ("Sign in faster next time with a passkey") on a held sign-in: creation
 * options for the held user, the browser's ceremony (service-web/passkeys' WebAuthn JSON), the
 * new credential to the service. Whatever happens (added, cancelled, refused), the sign-in then
 * continues to the app: the offer never stands in the way.
 */
import { passkeyAttestationJson, passkeyCreationOptions } from 'service-web/passkeys';
import { continueSignIn, post, Routes } from './hosted-api.js';
import { t } from './i18n.js';
import { $, config, onSubmit, say, show, somethingWentWrong } from './page.js';

export const showPasskeyOffer = () => show('passkey-step');

async function addPasskey(): Promise<void> {
  const asked = await post(Routes.signInPasskeyOptions, { request: config.request });
  if (!asked) return;
  const credential = await navigator.credentials.create({ publicKey: passkeyCreationOptions(asked.options) });
  if (!credential) return;
  const added = await post(Routes.signInPasskey, {
    request: config.request,
    credential: passkeyAttestationJson(credential as PublicKeyCredential),
  });
  if (added) say(t('hosted.status.passkeyAdded'));
}

export function setUpPasskeyOffer(): void {
  const notNow = $<HTMLButtonElement>('passkey-not-now');
  onSubmit('passkey-step', async () => {
    notNow.disabled = true;
    try {
      await addPasskey();
    } catch {
      // Cancelled, or no authenticator: no passkey this time.
    }
    try {
      await continueSignIn();
    } finally {
      notNow.disabled = false;
    }
  });

  notNow.addEventListener('click', async () => {
    const buttons = $('passkey-step').querySelectorAll('button');
    for (const button of buttons) button.disabled = true;
    say('');
    try {
      await continueSignIn();
    } catch {
      say(somethingWentWrong());
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  });
}
