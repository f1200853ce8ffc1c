/**
 * The account page's script (served at /account/account-passkey.js; the pages are server-rendered
 * by service-idp's account-center/page.ts and factor-page.ts and work without it, which only shows the
 * buttons). The texts it shows come from the page (data-*), in the page's language.
 * - "Add a passkey": asks the account session for a registration grant (creation options bound
 *   to this session: POST /account/passkeys/options with the session's CSRF token), lets the
 *   browser make the passkey, sends it back (POST /account/passkeys) and reloads the page.
 * - "Use your passkey" on a step whose factor in force is a passkey (a proof before an action, a
 *   change's first step): asks for request options bound to the step's MFA session
 *   (POST /account/proof/passkey), lets the browser sign them, and posts the step's own form with
 *   the assertion in its `assertion` field, so that the same form completes the action.
 */
import type { PasskeyMfaOptionsResponse, PasskeyRegistrationOptionsResponse } from 'service-protocol';
import { passkeyAssertionJson, passkeyAttestationJson, passkeyCreationOptions, passkeyRequestOptions } from 'service-web/passkeys';

const post = (path: string, csrf: string, body: unknown) =>
  fetch(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-account-csrf': csrf },
    body: JSON.stringify(body),
    credentials: 'same-origin',
  });

/** The status line of a button's block. */
const sayIn = (root: HTMLElement) => (text: string | undefined) => {
  const status = root.querySelector('[role="status"]');
  if (status) status.textContent = text ?? '';
};

async function add(root: HTMLElement): Promise<void> {
  const data = root.dataset;
  const csrf = data.csrf ?? '';
  const say = sayIn(root);
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

async function prove(root: HTMLElement): Promise<void> {
  const data = root.dataset;
  const say = sayIn(root);
  const form = document.querySelector<HTMLFormElement>('form[data-step]');
  const field = form?.elements.namedItem('assertion');
  if (!form || !(field instanceof HTMLInputElement)) return;
  say(data.working);
  try {
    const answer = await post('/account/proof/passkey', data.csrf ?? '', { session: data.session, action: data.action });
    if (answer.status === 403) return say(data.again);
    if (!answer.ok) return say(data.failed);
    const { options } = (await answer.json()) as PasskeyMfaOptionsResponse;
    const got = await navigator.credentials.get({ publicKey: passkeyRequestOptions(options) });
    if (!got) return say(data.failed);
    field.value = JSON.stringify(passkeyAssertionJson(got as PublicKeyCredential));
    const code = form.elements.namedItem('code');
    if (code instanceof HTMLInputElement) code.value = ''; // the passkey proves the step, not a code
    form.submit();
  } catch {
    say(data.failed);
  }
}

/** Shows a block's button (hidden without the script or WebAuthn) and runs `run` on a click, one at a time. */
function wire(id: string, run: (root: HTMLElement) => Promise<void>): void {
  const root = document.getElementById(id);
  const button = root?.querySelector('button');
  if (!root || !button || typeof PublicKeyCredential !== 'function') return;
  root.hidden = false;
  button.addEventListener('click', () => {
    button.disabled = true;
    void run(root).finally(() => {
      button.disabled = false;
    });
  });
}

wire('add-passkey', add);
wire('passkey-proof', prove);
