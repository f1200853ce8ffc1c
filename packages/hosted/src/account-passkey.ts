/**
 * "Add a passkey" on the account page (served at /account/account-passkey.js; the page is
 * server-rendered by service-idp's account/page.ts and works without this script, which only
 * shows the button). The script asks the account session for a registration grant (creation
 * options bound to this session: POST /account/passkeys/options with the session's CSRF token),
 * lets the browser make the passkey, sends it back (POST /account/passkeys) and reloads the page,
 * which then lists it. The texts it shows come from the page (data-*), in the page's language.
 */
import type { PasskeyRegistrationOptionsResponse } from 'service-protocol';
import { passkeyAttestationJson, passkeyCreationOptions } from 'service-web/passkeys';

const root = document.getElementById('add-passkey');
const button = root?.querySelector('button');
const status = root?.querySelector('[role="status"]');

const post = (path: string, csrf: string, body: unknown) =>
  fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-account-csrf': csrf },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });

async function add(data: DOMStringMap): Promise<void> {
  const csrf = data.csrf ?? '';
  const say = (text: string | undefined) => {
    if (status) status.textContent = text ?? '';
  };
  say(data.working);
  try {
    const answer = await post('/account/passkeys/options', csrf, {});
    if (answer.status === 403) return say(data.again);
    if (!answer.ok) return say(data.failed);
    const { options } = (await answer.json()) as PasskeyRegistrationOptionsResponse;
    const made = await navigator.credentials.create({ publicKey: passkeyCreationOptions(options) });
    if (!made) return say(data.failed);
    const added = await post('/account/passkeys', csrf, { credential: passkeyAttestationJson(made as PublicKeyCredential) });
    if (!added.ok) return say(added.status === 403 ? data.again : data.failed);
    say(data.added);
    location.reload();
  } catch {
    // The user closed the browser's dialog, or the authenticator refused.
    say(data.failed);
  }
}

if (root && button && typeof PublicKeyCredential === 'function') {
  root.hidden = false;
  button.addEventListener('click', () => {
    button.disabled = true;
    void add(root.dataset).finally(() => {
      button.disabled = false;
    });
  });
}
