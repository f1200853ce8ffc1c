import { Paths } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import { checkLogoutUri } from '../clients/uris.js';
import { FRONTCHANNEL_LOGOUT_WAIT_MS } from '../defaults.js';
import type { FrontChannelTarget } from './store.js';

/** A page of an app the signed-out page loads in a hidden iframe (OIDC Front-Channel Logout 1.0 3). */
export interface LogoutFrame {
  /** The URL framed: the registered URI, with `iss` and `sid` when the client asked for them. */
  url: string;
  /** Its origin: the signed-out page's CSP `frame-src` lists these and nothing else. */
  origin: string;
}

/**
 * The signed-out page's script (a file: the page's CSP allows no inline script): once the
 * window's load event fired (it waits for every iframe) or after FRONTCHANNEL_LOGOUT_WAIT_MS
 * (a slow or dead app never holds the user), the browser goes on to the app's
 * post_logout_redirect_uri, the page's "continue" link. Without that link it stays.
 */
export const SIGNED_OUT_SCRIPT = `(function () {
  var next = document.getElementById("continue");
  if (!next) return;
  var gone = false;
  function go() {
    if (gone) return;
    gone = true;
    location.replace(next.href);
  }
  if (document.readyState === "complete") go();
  else window.addEventListener("load", go);
  setTimeout(go, ${FRONTCHANNEL_LOGOUT_WAIT_MS});
})();
`;
export const SIGNED_OUT_SCRIPT_PATH = `${Paths.signIn}/signed-out.js`;

/**
 * The frames of the apps of an ended session `sid` that registered a front-channel logout URI.
 * Each URI is checked again as it is framed, not only when registered: it must still be a
 * logout URI (https, or http to loopback) on the origin of one of the client's redirect URIs
 * as they are now, else it is left out (an operator who moved the app's redirect URIs away
 * never has the old origin framed with the user's sid). With session required (3), `iss` and
 * `sid` replace any of the registered query's own, so a registered query cannot name another
 * issuer or session.
 */
export async function logoutFrames(
  targets: FrontChannelTarget[],
  { sid, issuer, clients }: { sid: string; issuer: string; clients: Pick<ClientService, 'findById'> },
): Promise<LogoutFrame[]> {
  const frames: LogoutFrame[] = [];
  for (const target of targets) {
    const client = await clients.findById(target.clientId);
    if (!client || client.logout.frontchannelLogoutUri !== target.uri) continue;
    let url: URL;
    try {
      url = new URL(checkLogoutUri(target.uri, 'front-channel logout URI'));
    } catch {
      continue;
    }
    if (!client.redirectUris.some((uri) => URL.canParse(uri) && new URL(uri).origin === url.origin)) continue;
    if (target.sessionRequired) {
      url.searchParams.set('iss', issuer);
      url.searchParams.set('sid', sid);
    }
    frames.push({ url: url.href, origin: url.origin });
  }
  return frames;
}
