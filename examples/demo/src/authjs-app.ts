/**
 * A relying-party recipe: "Acme Forum", an Express app on Auth.js (`@auth/express`) with the
 * service as a generic OpenID Connect provider (`type: 'oidc'`: Auth.js discovers the endpoints
 * from the issuer), the authorization code flow with a confidential client (client_secret_basic)
 * and the PKCE, state and nonce checks. Auth.js keeps the session in its encrypted JWT cookie.
 *
 * Sign-out: Auth.js's signOut clears only its own cookie; the service's session would sign the
 * user straight back in (single sign-on). So the app's /logout reads the ID token that the `jwt`
 * callback kept in the session JWT, lets Auth.js sign out (its CSRF check included), then sends
 * the browser to the service's end_session_endpoint (from discovery) with `id_token_hint`,
 * `post_logout_redirect_uri` and `state`; the service ends its session and sends the browser to
 * /signed-out, which checks the state.
 *
 * The lines between `docs/integrations.md: Auth.js` and `docs/integrations.md end` are the recipe
 * in docs/integrations.md, character for character (examples/demo/test/readme-snippets.test.ts
 * holds them together).
 */
import { randomBytes } from 'node:crypto';
import { Auth, raw } from '@auth/core';
import { getToken } from '@auth/core/jwt';
import { ExpressAuth, type ExpressAuthConfig, getSession } from '@auth/express';
import express, { type Request as ExpressRequest, type NextFunction, type Response } from 'express';
import { escapeHtml, listen } from './http.ts';
import { frontMiddleware, page, postButton, readCookie } from './recipe-page.ts';

const APP = 'Acme Forum';

export interface AuthJsAppOptions {
  /** The identity service's issuer URL: Auth.js reads the rest from its discovery document. */
  issuer: string;
  /** Where users open the app: `callbackUri` and `postLogoutRedirectUri` of it are the client's registered URIs. */
  publicOrigin: string;
  clientId: string;
  clientSecret: string;
  /** Encrypts Auth.js's session JWT (AUTH_SECRET); a fresh random one when absent. */
  secret?: string;
  port: number;
  hosts?: string[];
  log?: (line: string) => void;
}

export interface RunningApp {
  url: string;
  close(): Promise<void>;
}

/** The redirect URI to register (`--redirect-uri`): Auth.js's callback for the provider id `service`. */
export const callbackUri = (publicOrigin: string) => `${new URL(publicOrigin).origin}/auth/callback/service`;
/** The post-logout redirect URI to register (`--post-logout-redirect-uri`). */
export const postLogoutRedirectUri = (publicOrigin: string) => `${new URL(publicOrigin).origin}/signed-out`;

/** Starts the app; resolves once it listens (after reading the service's discovery document). */
export async function startAuthJsApp(options: AuthJsAppOptions): Promise<RunningApp> {
  const origin = new URL(options.publicOrigin).origin;
  const { issuer, clientId, clientSecret } = options;
  const secret = options.secret ?? randomBytes(32).toString('base64url');
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.use(frontMiddleware(origin, issuer));

  // Auth.js does not use the end_session_endpoint: read it from the discovery document once.
  const discovery = await fetch(new URL('/.well-known/openid-configuration', issuer));
  if (!discovery.ok) throw new Error(`${issuer}: discovery answered ${discovery.status}`);
  const { end_session_endpoint: endSessionEndpoint } = (await discovery.json()) as { end_session_endpoint: string };

  // docs/integrations.md: Auth.js
  const authConfig: ExpressAuthConfig = {
    basePath: '/auth',
    secret, // encrypts the session JWT
    trustHost: true, // the app's first middleware lets only its own host through
    providers: [
      {
        id: 'service', // callback: /auth/callback/service, the client's --redirect-uri
        name: 'Acme ID',
        type: 'oidc', // endpoints from <issuer>/.well-known/openid-configuration
        issuer,
        clientId,
        clientSecret,
        checks: ['pkce', 'state', 'nonce'],
        authorization: { params: { scope: 'openid email' } },
      },
    ],
    callbacks: {
      // Keep the ID token in the (encrypted) session JWT: the service's logout wants it back.
      jwt: ({ token, account }) => (account?.id_token ? { ...token, idToken: account.id_token } : token),
    },
    pages: { signIn: '/', error: '/' },
  };
  app.use('/auth', ExpressAuth(authConfig)); // '/auth', not '/auth/*': Express 5 paths have no bare '*'

  // Auth.js's signOut only clears its own cookie: read the ID token first, sign out of Auth.js
  // (POST /auth/signout's CSRF check included), then end the service's session too.
  app.post('/logout', express.urlencoded({ extended: false }), async (req, res) => {
    const token = await getToken({ req: { headers: { cookie: req.headers.cookie ?? '' } }, secret });
    const signOut = new Request(`${origin}/auth/signout`, {
      method: 'POST',
      headers: { cookie: req.headers.cookie ?? '', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrfToken: String(req.body.csrfToken ?? '') }),
    });
    const { cookies = [] } = await Auth(signOut, { ...authConfig, raw }); // throws on a bad CSRF token
    for (const { name, value, options } of cookies) {
      // Auth.js counts maxAge in seconds, Express in milliseconds.
      res.cookie(name, value, { ...options, maxAge: options.maxAge === undefined ? undefined : options.maxAge * 1000 });
    }
    if (typeof token?.idToken !== 'string') return res.redirect(303, '/');
    const state = randomBytes(16).toString('base64url');
    res.cookie('logout_state', state, { httpOnly: true, sameSite: 'lax', path: '/signed-out', maxAge: 600_000 });
    const endSession = new URL(endSessionEndpoint); // from the discovery document
    endSession.search = new URLSearchParams({
      id_token_hint: token.idToken,
      post_logout_redirect_uri: `${origin}/signed-out`, // the client's --post-logout-redirect-uri
      state,
    }).toString();
    res.redirect(303, endSession.href);
  });
  // docs/integrations.md end

  /** Auth.js's CSRF token for this browser (its double-submit cookie set on the way). */
  async function csrfToken(request: ExpressRequest, response: Response): Promise<string> {
    const answer = await Auth(new Request(`${origin}/auth/csrf`, { headers: { cookie: request.headers.cookie ?? '' } }), authConfig);
    for (const cookie of answer.headers.getSetCookie()) response.append('set-cookie', cookie);
    return ((await answer.json()) as { csrfToken: string }).csrfToken;
  }

  app.get('/', async (request, response) => {
    const session = await getSession(request, authConfig);
    const csrf = await csrfToken(request, response);
    const error = typeof request.query.error === 'string' ? `<p role="alert">Sign-in failed (${escapeHtml(request.query.error)}).</p>` : '';
    response.send(
      session?.user
        ? page(
            APP,
            APP,
            `<p>Signed in as <strong id="who">${escapeHtml(String(session.user.email))}</strong>.</p><p><a href="/profile">Your profile</a> ${postButton('/logout', 'Sign out', { csrfToken: csrf })}</p>`,
          )
        : page(
            APP,
            APP,
            `${error}<p>Auth.js signs you in at the identity service.</p>${postButton('/auth/signin/service', 'Sign in', { csrfToken: csrf, callbackUrl: `${origin}/profile` })}`,
          ),
    );
  });

  app.get('/profile', async (request, response) => {
    const session = await getSession(request, authConfig);
    if (!session?.user) {
      response.redirect(303, '/');
      return;
    }
    const csrf = await csrfToken(request, response);
    response.send(
      page(
        APP,
        'Your profile',
        `<p>Signed in as <strong id="who">${escapeHtml(String(session.user.email))}</strong>.</p><p>${postButton('/logout', 'Sign out', { csrfToken: csrf })}</p>`,
      ),
    );
  });

  // The service sends the browser back here after its logout, with the state the app sent.
  app.get('/signed-out', (request, response) => {
    const expected = readCookie(request, 'logout_state');
    response.clearCookie('logout_state', { path: '/signed-out' });
    if (!expected || request.query.state !== expected) {
      response.redirect(303, '/');
      return;
    }
    response.send(
      page(
        APP,
        'Signed out',
        `<p id="signed-out">You are signed out of ${APP} and of the identity service.</p><p><a href="/">Home</a></p>`,
      ),
    );
  });

  app.use((error: Error, _request: ExpressRequest, response: Response, _next: NextFunction) => {
    log(`acme-forum: ${error.message}`);
    response.status(500).send(page(APP, 'Something went wrong', '<p><a href="/">Start again</a>.</p>'));
  });

  return listen(app, options.port, options.hosts);
}
