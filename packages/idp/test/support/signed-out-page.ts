/** The end-session endpoint as a browser meets it, and the front-channel frames of its signed-out page. */
import type { TestService } from './helpers.js';

/**
 * GET /logout with `params` (or the confirmation form's POST from our own origin) in the browser
 * whose cookies `jar` holds: the answer's status, page, CSP, Location, and whether it cleared the session cookie.
 */
export async function signedOutPage(
  service: TestService,
  jar: { header(): string },
  params: Record<string, string>,
  method: 'GET' | 'POST' = 'GET',
) {
  const query = new URLSearchParams(params);
  const answer =
    method === 'GET'
      ? await fetch(`${service.url}/logout?${query}`, { redirect: 'manual', headers: { cookie: jar.header() } })
      : await fetch(`${service.url}/logout`, {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: jar.header(), origin: service.url, 'content-type': 'application/x-www-form-urlencoded' },
          body: query,
        });
  return {
    status: answer.status,
    html: await answer.text(),
    csp: answer.headers.get('content-security-policy') ?? '',
    location: answer.headers.get('location'),
    cookieCleared: answer.headers.getSetCookie().some((line) => /Max-Age=0/.test(line)),
  };
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'" };

/** Every iframe of a page: its attributes as the browser reads them (entities decoded), and its src. */
export function framesOf(html: string): { src: string; title: string; hidden: boolean; attributes: Record<string, string> }[] {
  return [...html.matchAll(/<iframe\b([^>]*)>/g)].map((match) => {
    const attributes = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/\s([\w-]+)(?:="([^"]*)")?/g)].map((a) => [
        a[1] ?? '',
        (a[2] ?? '').replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e),
      ]),
    );
    return { src: attributes.src ?? '', title: attributes.title ?? '', hidden: 'hidden' in attributes, attributes };
  });
}
