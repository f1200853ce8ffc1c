/**
 * The demo's second application, "Acme Wiki": no service SDK at all. It sends the user to the
 * service's /authorize and its hosted sign-in pages through `express-openid-connect`, a
 * third-party relying-party middleware, configured only from the service's discovery document
 * (issuerBaseURL): the authorization code flow with a confidential client (client_secret_basic,
 * PKCE S256, state, nonce, iss), the ID token checked by the middleware. Sessions live in the
 * middleware's encrypted cookie; its /logout also ends the service's session (RP-initiated
 * logout at the discovered end_session_endpoint), and the service's back-channel logout tokens
 * (POST /backchannel-logout, when the client registers it) end the app's sessions of a session
 * that ended anywhere else.
 */
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import expressOpenIdConnect from 'express-openid-connect';
import { escapeHtml, listen, securityHeaders } from './http.ts';

// CommonJS whose `requiresAuth` Node cannot see as a named export: take both from the default one.
const { auth, requiresAuth } = expressOpenIdConnect;

export interface OidcAppOptions {
  /** The identity service's issuer URL, e.g. http://127.0.0.1:8080: everything else comes from its discovery document. */
  issuerBaseURL: string;
  /** Where users open the app; its `/callback` must be the client's registered redirect URI. */
  publicOrigin: string;
  clientId: string;
  clientSecret: string;
  /** Encrypts the session cookie; a fresh random one (sessions end with the process) when absent. */
  cookieSecret?: string;
  port: number;
  /** Addresses to listen on; default loopback only. */
  hosts?: string[];
  /** `form_post`: the service posts the code to the callback (OAuth 2.0 Form Post Response Mode) instead of a redirect's query. */
  responseMode?: 'form_post';
  log?: (line: string) => void;
}

/**
 * The middleware's back-channel logout store (an express-session store's get, set, destroy):
 * one process's memory, which is what a demo needs; a deployment of several nodes shares one.
 */
function memoryLogoutStore() {
  const entries = new Map<string, { payload: unknown; expiresAt: number }>();
  return {
    get(id: string, callback: (error: unknown, value?: unknown) => void) {
      const entry = entries.get(id);
      if (entry && entry.expiresAt < Date.now()) entries.delete(id);
      callback(null, entries.get(id)?.payload);
    },
    set(id: string, payload: { cookie?: { expires?: number | Date } }, callback?: (error?: unknown) => void) {
      const expires = payload.cookie?.expires;
      entries.set(id, { payload, expiresAt: expires ? new Date(expires).getTime() : Date.now() + 24 * 60 * 60 * 1000 });
      callback?.();
    },
    destroy(id: string, callback?: (error?: unknown) => void) {
      entries.delete(id);
      callback?.();
    },
  };
}

export interface RunningOidcApp {
  url: string;
  close(): Promise<void>;
}

const CSP = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f7;color:#1d1d1f}
main{max-width:34rem;margin:4rem auto;padding:2rem;background:#fff;border-radius:.5rem}
a.button{display:inline-block;padding:.5rem 1rem;background:#0a64d8;color:#fff;border-radius:.3rem;text-decoration:none}
dt{font-weight:600}dd{margin:0 0 .5rem;word-break:break-all}:focus-visible{outline:3px solid #0a64d8;outline-offset:2px}`;

const page = (title: string, body: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Acme Wiki</title><link rel="stylesheet" href="/style.css"></head>
<body><main><h1>${escapeHtml(title)}</h1>${body}</main></body></html>\n`;

/** The organization the ID token names, as a line of the home page; nothing when it names none. */
function organizationOf(claims: Record<string, unknown>): string {
  if (typeof claims.org_id !== 'string') return '';
  const name = typeof claims.org_name === 'string' ? claims.org_name : claims.org_id;
  const roles = Array.isArray(claims.org_roles) && claims.org_roles.length > 0 ? claims.org_roles.map(String).join(', ') : 'member';
  return `<p id="organization">Working in <strong>${escapeHtml(name)}</strong> as <span id="organization-roles">${escapeHtml(roles)}</span>.</p>`;
}

/**
 * Where the service sends the browser after the app's /logout: the app's home page, exactly as
 * the middleware builds it (`routes.postLogoutRedirect` joined to the base URL). The client must
 * register it (`clients create|update --post-logout-redirect-uri`).
 */
export const postLogoutRedirectUri = (publicOrigin: string) => `${new URL(publicOrigin).origin}/`;

/** Starts the app; resolves once it listens. */
export async function startOidcApp(options: OidcAppOptions): Promise<RunningOidcApp> {
  const publicOrigin = new URL(options.publicOrigin).origin;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.use((request: Request, response: Response, next: NextFunction) => {
    response.set(securityHeaders(CSP));
    // The middleware's state cookie is set on the host the user opened and read back on the
    // callback's: send a visitor who typed another name for this host to the registered one.
    if (request.headers.host !== new URL(publicOrigin).host && request.path !== '/style.css') {
      response.redirect(302, `${publicOrigin}${request.originalUrl}`);
      return;
    }
    next();
  });
  app.get('/style.css', (_request, response) => {
    response.set('cache-control', 'no-cache').type('text/css').send(STYLE);
  });
  app.use(
    auth({
      issuerBaseURL: options.issuerBaseURL,
      baseURL: publicOrigin,
      clientID: options.clientId,
      clientSecret: options.clientSecret,
      secret: options.cookieSecret ?? randomBytes(32).toString('base64url'),
      authRequired: false,
      authorizationParams: {
        response_type: 'code',
        scope: 'openid email',
        ...(options.responseMode ? { response_mode: options.responseMode } : {}),
      },
      // /logout ends this app's session, then the service's: the middleware sends the browser to
      // the discovered end_session_endpoint with the ID token as hint, and the service sends it
      // back to the app's home page, a registered post-logout redirect URI (postLogoutRedirectUri).
      idpLogout: true,
      routes: { postLogoutRedirect: '/' },
      // OIDC Back-Channel Logout: the service POSTs a logout token to /backchannel-logout when the
      // user's session there ends (another app's sign-out, a revoked device); the middleware
      // verifies it, keeps its sid and sub, and ends any app session they name at its next request.
      backchannelLogout: { store: memoryLogoutStore() as never },
      enableTelemetry: false,
    }),
  );

  app.get('/', (request, response) => {
    const user = request.oidc.user;
    const account = (path: string) => escapeHtml(new URL(path, options.issuerBaseURL).toString());
    response.send(
      user
        ? page(
            'Acme Wiki',
            `<p>Signed in as <strong id="who">${escapeHtml(String(user.email))}</strong>.</p>${organizationOf(request.oidc.idTokenClaims ?? {})}<p><a href="/profile">Your profile</a> · <a id="account" href="${account('/account')}">Your account (devices, activity)</a> · <a href="/logout">Sign out</a></p><p><a id="organizations" href="${account('/account#h-orgs')}">Your organizations (create one, invite people)</a> · <a id="choose-organization" href="/login/organization">Work in one of your organizations</a></p>`,
          )
        : page(
            'Acme Wiki',
            '<p>This app has no sign-in code of its own: it sends you to the identity service, which signs you in and sends you back.</p><p><a class="button" href="/login">Sign in</a></p>',
          ),
    );
  });

  // Organization-aware (docs/organizations.md): the `organization` scope asks the service for one
  // of the user's organizations; a user in several picks on the service's page. The ID token then
  // names it (org_id, org_name) and the user's roles in it (org_roles).
  app.get('/login/organization', async (_request, response) => {
    await response.oidc.login({ returnTo: '/profile', authorizationParams: { scope: 'openid email organization' } });
  });

  // "Confirm it's you": a fresh sign-in at the service (OIDC Core 3.1.2.1 prompt=login), for
  // the same account; a remembered device answers it, with the second factor if the user has one.
  app.get('/login/fresh', requiresAuth(), async (request, response) => {
    await response.oidc.login({
      returnTo: '/profile',
      authorizationParams: { prompt: 'login', ...(request.oidc.user?.email ? { login_hint: String(request.oidc.user.email) } : {}) },
    });
  });

  app.get('/profile', requiresAuth(), (request, response) => {
    const claims: Record<string, unknown> = request.oidc.idTokenClaims ?? {};
    const rows = ['email', 'email_verified', 'sub', 'org_id', 'org_name', 'org_roles', 'amr', 'auth_time', 'iss', 'aud']
      .filter((name) => claims[name] !== undefined)
      .map((name) => `<dt>${name}</dt><dd data-claim="${name}">${escapeHtml(JSON.stringify(claims[name]))}</dd>`)
      .join('');
    response.send(
      page(
        'Your profile',
        `<p>The ID token's claims, as the middleware verified them:</p><dl>${rows}</dl><p><a href="/login/fresh">Confirm it's you (sign in again)</a> · <a href="/logout">Sign out</a></p>`,
      ),
    );
  });

  app.use((error: Error, _request: Request, response: Response, _next: NextFunction) => {
    log(`acme-wiki: ${error.message}`);
    const status = (error as { status?: number }).status ?? 500;
    response
      .status(status >= 400 && status < 600 ? status : 500)
      .send(page('Sign-in failed', '<p>Something went wrong. <a href="/">Start again</a>.</p>'));
  });

  return listen(app, options.port, options.hosts);
}
