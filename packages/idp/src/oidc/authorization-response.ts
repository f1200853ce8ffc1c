import type { FastifyReply } from 'fastify';
import { Paths } from 'service-protocol';
import { cspWithFormTarget, escapeHtml, type PageLanguage, sendPage } from '../http/page.js';

/**
 * How the authorization response reaches the client: in the redirect's query (RFC 6749 4.1.2,
 * the default), or as a form the browser posts to the redirect URI (OAuth 2.0 Form Post
 * Response Mode), which keeps the code out of URLs, histories and Referer headers.
 */
export const RESPONSE_MODES = ['query', 'form_post'] as const;
export type ResponseMode = (typeof RESPONSE_MODES)[number];

/** An authorization response (a code, or an error) on its way to the client. */
export interface AuthorizationResponse {
  redirectUri: string;
  mode: ResponseMode;
  /** The response parameters: code or error, state, iss (RFC 9207). */
  params: Record<string, string>;
}

/** The response of `params`, leaving out those without a value (an absent state). */
export function authorizationResponse(
  redirectUri: string,
  mode: ResponseMode,
  params: Record<string, string | null>,
): AuthorizationResponse {
  const present = Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== null);
  return { redirectUri, mode, params: Object.fromEntries(present) };
}

/**
 * The redirect back to the client: the registered URI with its own query kept (RFC 6749
 * 3.1.2), the response parameters, and `iss` (RFC 9207) so the client can tell which
 * authorization server answered.
 */
export function redirectTo(redirectUri: string, params: Record<string, string | null>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== null) url.searchParams.append(name, value);
  return url.href;
}
/** Query mode: the redirect's URL (the registered URI's own query kept, RFC 6749 3.1.2). */
export const responseLocation = (response: AuthorizationResponse) => redirectTo(response.redirectUri, response.params);

/** The script of the form_post page: a file (the page's CSP allows no inline script) that posts the one form at once. */
export const FORM_POST_SCRIPT = 'document.getElementById("form-post").submit();\n';
export const FORM_POST_SCRIPT_PATH = `${Paths.signIn}/form-post.js`;

export type FormPostKey = 'page.formPost.title' | 'page.formPost.help' | 'page.formPost.button';

/**
 * Sends the response: a 303 in query mode; in form_post mode a page whose form carries the
 * parameters as hidden fields (every value escaped: a hostile `state` stays text) and posts
 * itself by script, with a button for a browser without script. Its CSP lets forms go to the
 * redirect URI's origin alone.
 */
export function sendAuthorizationResponse(
  reply: FastifyReply,
  response: AuthorizationResponse,
  language: PageLanguage,
  text: (key: FormPostKey) => string,
) {
  if (response.mode === 'query') return reply.code(303).header('location', responseLocation(response)).send();
  const t = (key: FormPostKey) => escapeHtml(text(key));
  const fields = Object.entries(response.params)
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  return sendPage(
    reply,
    200,
    text('page.formPost.title'),
    `<h1>${t('page.formPost.title')}</h1><form id="form-post" method="post" action="${escapeHtml(response.redirectUri)}">` +
      `${fields}<p role="status">${t('page.formPost.help')}</p><button type="submit">${t('page.formPost.button')}</button></form>` +
      `<script src="${FORM_POST_SCRIPT_PATH}"></script>`,
    language,
    cspWithFormTarget(response.redirectUri),
  );
}
