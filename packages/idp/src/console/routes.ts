import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { ConsoleSessionInfo } from 'service-protocol';
import { Type } from 'typebox';
import type { ConsoleCredential } from '../admin/routes.js';
import {
  AUTHORIZATION_REQUEST_TTL_SECONDS,
  CONSOLE_SESSION_ABSOLUTE_LIFETIME_SECONDS,
  CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml, sendHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { FirstPartyCallbackQuery } from '../oidc/first-party-sign-in.js';
import { CONSOLE_PATH, type ConsoleService } from './service.js';

/** The header the console's calls carry its per-session token in. */
export const CSRF_HEADER = 'x-console-csrf';

/**
 * The console's policy: its own script and styles only (no inline script or style: uPlot sets
 * element styles through the CSSOM, which CSP allows), calls to this origin only, never framed.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const FILES = ['console.js', 'console.css'] as const;

/** The console's built files (packages/console): the copy beside this module (dist/console/), or the workspace package's dist/. */
function asset(name: (typeof FILES)[number]): string {
  const candidates = [fileURLToPath(new URL(`./assets/${name}`, import.meta.url))];
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('service-console/package.json')), 'dist', name));
  } catch {
    // not in the workspace: only the bundled copy can exist
  }
  for (const path of candidates) {
    try {
      return readFileSync(path, 'utf8');
    } catch {}
  }
  throw new Error(`The operator console's ${name} is not built (packages/console): run npm run build.`);
}

/** By the console's URL (the issuer's, or its own listener's): __Host- cookies need https. */
const cookieNames = (url: string) =>
  url.startsWith('https:')
    ? { session: '__Host-service_console', login: '__Host-service_console_login' }
    : { session: 'service_console', login: 'service_console_login' };

const SHELL = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Operator console</title><link rel="stylesheet" href="${CONSOLE_PATH}/console.css"><script src="${CONSOLE_PATH}/console.js" defer></script></head>
<body><div id="app"></div></body></html>
`;

const SessionAnswer = wireBody<ConsoleSessionInfo>()(
  Type.Object({
    operator: Type.Object({ email: Type.String(), role: Type.Union([Type.Literal('viewer'), Type.Literal('admin')]) }),
    csrfToken: Type.String({ description: 'send it in x-console-csrf with every admin API call' }),
    expiresAt: Type.Integer({ description: 'Unix epoch milliseconds: the absolute limit' }),
    idleTimeoutSeconds: Type.Integer(),
  }),
);
const HTML = 'text/html';
const redirect = (description: string) => ({ response: { 303: { description }, ...errorResponses(...SERVER_ERRORS) } });

/**
 * The operator console at /admin (docs/operations.md, "The operator console"): the page and its
 * files, the sign-in through the service's own hosted sign-in, the session, and the credential
 * the admin API accepts from it. `url`: where the console is served, the issuer or its own
 * listener's URL (config.console).
 */
export const consoleRoutes: FastifyPluginAsyncTypebox<{ console: ConsoleService; url: string }> = async (
  app,
  { console: service, url },
) => {
  const names = cookieNames(url);
  const secure = url.startsWith('https:') ? '; Secure' : '';
  // SameSite=Strict: no other site's page or link ever carries it. The login cookie is Lax: it
  // comes back on the hosted sign-in's navigation to the callback.
  const sessionCookie = (value: string, maxAge: number) =>
    `${names.session}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`;
  const loginCookie = (value: string, maxAge: number) =>
    `${names.login}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
  const [script, style] = FILES.map(asset) as [string, string];
  await service.ensureClient();

  const sessionOf = (request: FastifyRequest) => parseCookies(request.headers.cookie).get(names.session);

  app.get(
    CONSOLE_PATH,
    {
      schema: {
        response: { 200: rawResponse(HTML, 'the console'), 303: { description: 'to /admin/signin' }, ...errorResponses(...SERVER_ERRORS) },
      },
    },
    async (request, reply) => {
      if (!(await service.authenticate(sessionOf(request)))) return reply.code(303).header('location', `${CONSOLE_PATH}/signin`).send();
      return sendHtml(reply, SHELL, { csp: CONSOLE_CSP });
    },
  );
  app.get(
    `${CONSOLE_PATH}/console.js`,
    { schema: { response: { 200: rawResponse('text/javascript', "the console's script") } } },
    async (_r, reply) => reply.header('cache-control', 'no-cache').type('text/javascript; charset=utf-8').send(script),
  );
  app.get(
    `${CONSOLE_PATH}/console.css`,
    { schema: { response: { 200: rawResponse('text/css', "the console's styles") } } },
    async (_r, reply) => reply.header('cache-control', 'no-cache').type('text/css; charset=utf-8').send(style),
  );

  app.get(`${CONSOLE_PATH}/signin`, { schema: redirect('to /authorize, as the console client') }, async (_request, reply) => {
    const { location, login } = service.beginSignIn();
    return reply.code(303).header('set-cookie', loginCookie(login, AUTHORIZATION_REQUEST_TTL_SECONDS)).header('location', location).send();
  });

  app.get(
    `${CONSOLE_PATH}/callback`,
    {
      schema: {
        querystring: FirstPartyCallbackQuery,
        response: {
          303: { description: 'to /admin, with the session cookie' },
          403: rawResponse(HTML, 'the sign-in was refused: not an operator, no second factor, or not started in this browser'),
          ...errorResponses(400, ...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { code, state, iss } = request.query;
      const login = parseCookies(request.headers.cookie).get(names.login);
      try {
        if (!code || !state) throw new ServiceError('ERR_FORBIDDEN', 'The sign-in did not finish. Start again.');
        const { session } = await service.finishSignIn({ code, state, iss, login });
        return reply
          .code(303)
          .header('set-cookie', [sessionCookie(session, CONSOLE_SESSION_ABSOLUTE_LIFETIME_SECONDS), loginCookie('', 0)])
          .header('location', CONSOLE_PATH)
          .send();
      } catch (error) {
        if (!(error instanceof ServiceError) || error.code !== 'ERR_FORBIDDEN') throw error;
        reply.header('set-cookie', loginCookie('', 0));
        return sendPage(
          reply,
          403,
          'Console sign-in refused',
          `<h1>Console sign-in refused</h1><p>${escapeHtml(error.message)}</p><p><a href="${CONSOLE_PATH}/signin">Sign in again</a></p>`,
        );
      }
    },
  );

  app.get(
    `${CONSOLE_PATH}/session`,
    { schema: { response: { 200: SessionAnswer, ...errorResponses(401, ...SERVER_ERRORS) } } },
    async (request) => {
      const cookie = sessionOf(request);
      const caller = cookie ? await service.authenticate(cookie) : undefined;
      if (!cookie || !caller) throw new ServiceError('ERR_ADMIN_KEY_INVALID', 'The console session has ended; sign in again.');
      return {
        operator: { email: caller.operator.email, role: caller.role },
        csrfToken: service.csrfToken(cookie),
        expiresAt: caller.expiresAt,
        idleTimeoutSeconds: CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS,
      };
    },
  );

  app.post(
    `${CONSOLE_PATH}/signout`,
    { schema: { response: { 204: Type.Null(), ...errorResponses(403, ...SERVER_ERRORS) } } },
    async (request, reply) => {
      const cookie = sessionOf(request);
      if (cookie) {
        checkConsoleCall(request, url, (token) => service.checkCsrf(cookie, token));
        await service.signOut(cookie);
      }
      return reply.code(204).header('set-cookie', sessionCookie('', 0)).send(null);
    },
  );
};

/**
 * CSRF (docs/security.md): a console call comes from the console's own page. Its Origin, when
 * the browser sends one, is the console's (the issuer's, or its own listener's URL), and
 * Sec-Fetch-Site says same-origin; and it carries the per-session token, which another site's
 * page cannot read (no CORS on /admin).
 */
function checkConsoleCall(request: FastifyRequest, url: string, tokenMatches: (token: string | undefined) => boolean): void {
  const origin = request.headers.origin;
  const site = request.headers['sec-fetch-site'];
  if ((origin !== undefined && origin !== new URL(url).origin) || (site !== undefined && site !== 'same-origin'))
    throw new ServiceError('ERR_FORBIDDEN', 'Console calls are accepted from the console only.');
  const token = request.headers[CSRF_HEADER];
  if (!tokenMatches(typeof token === 'string' ? token : undefined))
    throw new ServiceError('ERR_FORBIDDEN', 'The console call lacks its session token; reload the console.');
}

/** The admin API's second credential (admin/routes.ts): the console's session cookie, its call checked as above. */
export function consoleCredential(service: ConsoleService, url: string): ConsoleCredential {
  const name = cookieNames(url).session;
  return async (request) => {
    const cookie = parseCookies(request.headers.cookie).get(name);
    if (!cookie) return undefined;
    checkConsoleCall(request, url, (token) => service.checkCsrf(cookie, token));
    const caller = await service.authenticate(cookie);
    if (!caller) throw new ServiceError('ERR_ADMIN_KEY_INVALID', 'The console session has ended; sign in again.');
    return { actor: caller.actor, role: caller.role };
  };
}
