/**
 * "Continue with …": the connections the requesting app shows, as buttons under the address
 * field (service-web/upstream). A button leaves for the provider, which sends the browser back
 * to this page with the result in its fragment: a code (finished at /signin/complete like every
 * step), the MFA step, or the link step (an account has the address: its emailed code links
 * it). The PKCE pair survives the trip in sessionStorage; the browser's device key (session-key.ts)
 * goes with the start, so the sign-in registers it and opens the SSO session as the emailed code does. The visible strings are the
 * catalogue's (hosted.upstream.*), beside the others.
 */
import { createPkcePair, type MfaMethod } from 'service-web';
import { ServiceUpstream, type UpstreamResult } from 'service-web/upstream';
import { complete } from './complete.js';
import { startMfa } from './enroll.js';
import { failureText, t } from './i18n.js';
import { $, config, input, onSubmit, say, show } from './page.js';
import { upstreamDeviceKey } from './session-key.js';
import { signIn } from './state.js';

const upstream = new ServiceUpstream();
const PKCE_KEY = 'service-hosted-upstream-pkce';
let link = '';

/** A result of the provider's return or of the link step: on to the next step. */
async function goOn(result: Exclude<UpstreamResult, { status: 'LINK_NEEDED' }> | UpstreamResult): Promise<void> {
  if (result.status === 'SUCCESS') return complete(result);
  if (result.status === 'MFA_REQUIRED') {
    if ('userid' in result && result.userid) signIn.email = result.userid;
    return startMfa(result.sessionId, result.method as MfaMethod);
  }
  if (result.status === 'LINK_NEEDED') {
    link = result.link;
    signIn.email = result.userid;
    $('link-email').textContent = result.userid;
    return show('link-step');
  }
  // Refused at the provider's return: back to the address, which always works.
  show('email-step');
  say(t('hosted.upstream.refused'));
}

/** Picks up a return from a provider: true when the page continues it (its step is showing). */
export async function upstreamReturn(): Promise<boolean> {
  const ready = await upstream.init(config.publishableKey, config.issuer, { authorizationRequest: config.request });
  if (ready.status !== 'INITIALIZED') return false;
  onSubmit('link-step', async () => {
    // The link's sign-in registers this browser's device key too (the session is bound to it).
    const devicePublicKey = await upstreamDeviceKey();
    const confirmed = await upstream.confirmLink({
      link,
      otp: input('link-otp').value.trim(),
      ...(devicePublicKey ? { devicePublicKey } : {}),
    });
    // A wrong code keeps the step, saying why (and how many tries are left), as the other code steps do.
    if (confirmed.status !== 'SUCCESS' && confirmed.status !== 'MFA_REQUIRED') return say(failureText(confirmed));
    return goOn(confirmed);
  });
  const back = await upstream.result();
  if (!back) return false;
  const kept = sessionStorage.getItem(PKCE_KEY);
  sessionStorage.removeItem(PKCE_KEY);
  if (kept) signIn.pkce = JSON.parse(kept);
  await goOn(back);
  return true;
}

/**
 * Leaves for a provider: a button's, or the one the address's organization signs its people in
 * with (UPSTREAM_REQUIRED from the address step). Returns only when the start was refused.
 */
export async function leaveFor(connection: string): Promise<void> {
  const pkce = await createPkcePair();
  sessionStorage.setItem(PKCE_KEY, JSON.stringify(pkce));
  // This browser's device key goes along: the sign-in registers it (once) and the SSO session is bound to it.
  const devicePublicKey = await upstreamDeviceKey();
  const refused = await upstream.signInWith(connection, {
    code_challenge: pkce.codeChallenge,
    ...(devicePublicKey ? { devicePublicKey } : {}),
  });
  say(failureText(refused));
}

/** The buttons of the connections the app shows, under the address field. */
export async function showUpstreamButtons(): Promise<void> {
  const found = await upstream.connections();
  if (found.status !== 'SUCCESS' || found.connections.length === 0) return;
  const list = $('upstream-buttons');
  for (const connection of found.connections) {
    const button = document.createElement('button');
    button.type = 'button';
    button.className = 'secondary';
    button.textContent = connection.name;
    button.dataset.connection = connection.id;
    button.addEventListener('click', () => leaveFor(connection.id));
    list.append(button);
  }
  $('upstream').hidden = false;
}
