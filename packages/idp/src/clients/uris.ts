/** The addresses of a client as an operator registers them (origins, redirect URIs, post-logout and logout URIs), checked. */
import { CLIENT_REDIRECT_URIS_MAX, REDIRECT_URI_MAX_LENGTH } from '../defaults.js';
import type { ClientLogout } from './store.js';

/**
 * What an error message may say of a URI the operator gave: its scheme and host, never the
 * whole input, whose user info, path or query may hold a credential (`https://user:pass@host`), nor a scheme
 * that is not one we accept (`user:pass@host` parses as scheme `user`). Errors reach the admin API's answers, the CLI's output and logs.
 */
function shownUri(url: URL): string {
  return url.host ? `${url.protocol}//${url.host}` : url.protocol;
}

/**
 * The characters a URI may hold (RFC 3986 2): unreserved, reserved, and `%` with two hex digits.
 * Not a space, a control character, `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}` or non-ASCII:
 * WHATWG URL parsing would take them (and drop tabs and line breaks unseen), but a URI kept
 * verbatim for exact matching must be one as the client sends it, percent-encoded.
 */
const URI_CHARACTERS = /^(?:[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$/;

/**
 * A redirect URI as registered, kept verbatim for exact matching (RFC 9700 2.1). A URI (RFC 3986:
 * a space or any other character outside it percent-encoded), absolute, no fragment (RFC 6749
 * 3.1.2), no credentials; http(s), or a private-use scheme with a dot for native apps (RFC 8252
 * 7.1). Never javascript:, data: or the like. Errors never repeat the input (shownUri).
 */
export function checkRedirectUri(input: string, what = 'redirect URI'): string {
  if (input.length > REDIRECT_URI_MAX_LENGTH) throw new Error(`${what} is longer than ${REDIRECT_URI_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error(`${what} must be an absolute URI`);
  }
  const scheme = url.protocol.slice(0, -1);
  const web = scheme === 'https' || scheme === 'http';
  if (!web && !/^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+$/.test(scheme))
    throw new Error(`${what} scheme must be https, http or a private-use scheme such as com.example.app`);
  if (url.username || url.password) throw new Error(`${what} must have no user name or password (${shownUri(url)})`);
  if (!URI_CHARACTERS.test(input))
    throw new Error(`${what} must hold only URI characters (RFC 3986): percent-encode a space or any other (${shownUri(url)})`);
  if (input.includes('#')) throw new Error(`${what} must have no fragment (${shownUri(url)})`);
  return input;
}

/**
 * A loopback redirect URI on an IP literal (RFC 8252 7.3), taken from the raw string, never
 * from a URL parser (which would read `http://127.0.0.1@evil.example` as host evil.example):
 * `http://`, `127.0.0.1` or `[::1]`, an optional port, then the path and query or nothing.
 * `localhost` is not one (RFC 8252 8.3: a name may resolve elsewhere), nor https.
 */
const LOOPBACK_IP_REDIRECT = /^http:\/\/(127\.0\.0\.1|\[::1\])(?::(\d{1,5}))?([/?].*)?$/;

export function loopbackIpRedirect(uri: string): { host: string; rest: string } | undefined {
  const match = LOOPBACK_IP_REDIRECT.exec(uri);
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { host: match[1] as string, rest: match[3] ?? '' };
}

/**
 * Whether `presented` is one of the client's registered redirect URIs: exact string match
 * (RFC 9700 2.1), except that a public (native) client's loopback IP redirect URI matches on
 * any port (RFC 8252 7.3: the app opens a port at run time), the host, path and query
 * unchanged. The presented URI must then be one a client may send (URI characters, no
 * fragment); a confidential client's and every other URI stay exact.
 */
export function redirectUriMatches(registered: readonly string[], presented: string, clientType: string): boolean {
  if (registered.includes(presented)) return true;
  if (clientType !== 'public' || !URI_CHARACTERS.test(presented) || presented.includes('#')) return false;
  const asked = loopbackIpRedirect(presented);
  if (!asked) return false;
  return registered.some((uri) => {
    const known = loopbackIpRedirect(uri);
    return known !== undefined && known.host === asked.host && known.rest === asked.rest;
  });
}

/** Post-logout redirect URIs: each checked as a redirect URI is (kept verbatim for exact matching), at most as many. */
export function checkPostLogoutRedirectUris(input: string[]): string[] {
  const uris = [...new Set(input.map((uri) => checkRedirectUri(uri, 'post-logout redirect URI')))];
  if (uris.length > CLIENT_REDIRECT_URIS_MAX) throw new Error(`a client has at most ${CLIENT_REDIRECT_URIS_MAX} post-logout redirect URIs`);
  return uris;
}

/** An IP literal or name of this machine: the only hosts a logout URI may reach over plain http (RFC 8252 7.3's loopback). */
const isLoopbackHost = (hostname: string) =>
  hostname === 'localhost' || hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);

/**
 * A back- or front-channel logout URI: checked as a redirect URI is (absolute, URI characters,
 * no fragment, no credentials), and https, or http to a loopback host only (a logout token or
 * a session id is not sent in the clear across a network).
 */
export function checkLogoutUri(input: string, what: string): string {
  checkRedirectUri(input, what);
  const url = new URL(input);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackHost(url.hostname)))
    throw new Error(`${what} must be https (http only to localhost or a loopback address) (${shownUri(url)})`);
  return input;
}

/**
 * A client's logout registration after `change` (a field not given keeps `current`'s). The
 * front-channel URI must be on the origin of one of the client's redirect URIs (OIDC
 * Front-Channel Logout 1.0 2 asks for the RP's own page): the signed-out page frames it, and a
 * URI on another origin would frame someone else's page with the user's `sid`.
 */
export function checkLogout(change: Partial<ClientLogout>, current: ClientLogout, redirectUris: string[]): ClientLogout {
  const next = { ...current, ...change };
  if (next.backchannelLogoutUri !== null && change.backchannelLogoutUri !== undefined)
    next.backchannelLogoutUri = checkLogoutUri(next.backchannelLogoutUri, 'back-channel logout URI');
  if (next.frontchannelLogoutUri !== null) {
    if (change.frontchannelLogoutUri !== undefined) checkLogoutUri(next.frontchannelLogoutUri, 'front-channel logout URI');
    const origin = new URL(next.frontchannelLogoutUri).origin;
    if (!redirectUris.some((uri) => new URL(uri).origin === origin))
      throw new Error(`front-channel logout URI must be on the origin of one of the client's redirect URIs (${origin} is not)`);
  }
  return next;
}

/**
 * `https://App.example.com:443/` → `https://app.example.com`; refuses anything but http(s)
 * origins. Errors never repeat the input (shownUri).
 */
export function normalizeOrigin(input: string): string {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error('origin must be an absolute http(s) origin such as https://app.example.com');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('origin must be http or https');
  if (url.username || url.password) throw new Error(`origin must have no user name or password (${shownUri(url)})`);
  if (url.pathname !== '/' || url.search || url.hash) throw new Error(`origin must have no path, query or fragment (${shownUri(url)})`);
  return url.origin;
}
