/**
 * The renewal interstitial (served at /signin/renew.js; oidc/session-renewal.ts): /authorize
 * showed it because this browser's session is bound to the page's session key and its short
 * cookie is gone. With the key, its proof over the page's challenge renews the short cookie;
 * without it (the cookies were copied here), the session cookies are dropped in this browser.
 * Either way the authorization request goes on: signed in, or at the sign-in page.
 */
import type { SessionRenewRequest } from 'service-protocol';
import { sessionProof } from './session-key.js';

/** Paths.signInSessionRenew, by value (the whole Paths object would be bundled for one string). */
const RENEW = '/signin/session/renew';

const post = (body: SessionRenewRequest) =>
  fetch(RENEW, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
    (response) => response.ok,
    () => false,
  );

async function renew(): Promise<void> {
  const data = document.getElementById('renewal')?.dataset ?? {};
  const proof = data.challenge ? await sessionProof(data.challenge) : undefined;
  const renewed = proof !== undefined && (await post({ proof }));
  // Not renewed: drop this browser's session cookies, or /authorize would show this page again.
  if (!renewed && !(await post({}))) return;
  location.replace(data.continue ?? '/');
}

void renew();
