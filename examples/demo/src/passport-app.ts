/**
 * A relying-party recipe: "Acme Tasks", an Express app on `passport` with the strategy that
 * openid-client v6 ships (`openid-client/passport`), configured from the service's discovery
 * document (`client.discovery`), a confidential client (client_secret_basic), the session in
 * `express-session`.
 *
 * The strategy sends PKCE only when the server supports it (no `state`, no `nonce`); this app
 * adds both (`authorizationRequestParams`), and the strategy checks them on the callback.
 * Sign-out: `req.logout()` ends the app's session only; the app then sends the browser to the
 * service's end_session_endpoint (`client.buildEndSessionUrl`) with the ID token as
 * `id_token_hint`, `post_logout_redirect_uri` and `state`; the service ends its session and sends
 * the browser to /signed-out, which checks the state.
 *
 * The lines between `docs/integrations.md: passport` and `docs/integrations.md end` are the recipe
 * in docs/integrations.md, character for character (examples/demo/test/readme-snippets.test.ts
 * holds them together).
 */
import { randomBytes } from 'node:crypto';
import express, { type NextFunction, type Request, type Response } from 'express';
import session from 'express-session';
import * as client from 'openid-client';
import { type AuthenticateOptions, Strategy } from 'openid-client/passport';
import passport from 'passport';
import { escapeHtml, listen } from './http.ts';
import { frontMiddleware, page, postButton } from './recipe-page.ts';

const APP = 'Acme Tasks';

export interface PassportAppOptions {
  /** The identity service's issuer URL: everything else comes from its discovery document. */
  issuer: string;
  /** Where users open the app: `callbackUri` and `postLogoutRedirectUri` of it are the client's registered URIs. */
  publicOrigin: string;
  clientId: string;
  clientSecret: string;
  /** Signs the session cookie; a fresh random one when absent. */
  sessionSecret?: string;
  port: number;
  hosts?: string[];
  log?: (line: string) => void;
}

export interface RunningApp {
  url: string;
  close(): Promise<void>;
}

/** Who passport keeps in the session: the ID token's subject and address, and the ID token for the logout. */
interface User {
  sub: string;
  email: string;
  idToken: string;
}

declare module 'express-session' {
  interface SessionData {
    logoutState?: string;
  }
}

/** The redirect URI to register (`--redirect-uri`). */
export const callbackUri = (publicOrigin: string) => `${new URL(publicOrigin).origin}/callback`;
/** The post-logout redirect URI to register (`--post-logout-redirect-uri`). */
export const postLogoutRedirectUri = (publicOrigin: string) => `${new URL(publicOrigin).origin}/signed-out`;

/** Starts the app; resolves once it listens (after reading the service's discovery document). */
export async function startPassportApp(options: PassportAppOptions): Promise<RunningApp> {
  const origin = new URL(options.publicOrigin).origin;
  const issuer = new URL(options.issuer);
  const { clientId, clientSecret } = options;
  const sessionSecret = options.sessionSecret ?? randomBytes(32).toString('base64url');
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const app = express();
  app.disable('x-powered-by');
  app.use(frontMiddleware(origin, options.issuer));

  // docs/integrations.md: passport
  app.use(
    session({
      name: 'acme_tasks',
      secret: sessionSecret, // signs the session cookie
      resave: false,
      saveUninitialized: false,
      // The callback from the service is a cross-site top-level GET: Lax still sends the cookie.
      cookie: { httpOnly: true, sameSite: 'lax', secure: origin.startsWith('https:') },
      // store: the default keeps sessions in this process's memory; use a shared store in production
    }),
  );
  app.use(passport.session());

  const config = await client.discovery(issuer, clientId, clientSecret, undefined, {
    // openid-client refuses http:// except when told; a local service is http://127.0.0.1:8080
    execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
  });

  // The strategy sends only PKCE to a server that supports it: add state and nonce, which it
  // then keeps in the session and checks on the callback.
  class ServiceStrategy extends Strategy {
    override authorizationRequestParams<T extends AuthenticateOptions>(req: Request, opts: T) {
      const params = new URLSearchParams(super.authorizationRequestParams(req, opts));
      params.set('state', client.randomState());
      params.set('nonce', client.randomNonce());
      return params;
    }
  }
  passport.use(
    'service',
    new ServiceStrategy(
      { config, scope: 'openid email', callbackURL: `${origin}/callback` }, // the client's --redirect-uri
      (tokens, verified) => {
        const claims = tokens.claims();
        if (!claims || !tokens.id_token) return verified(new Error('no ID token'));
        // Keep the ID token: the service's logout wants it back as id_token_hint.
        verified(null, { sub: claims.sub, email: String(claims.email), idToken: tokens.id_token } satisfies User);
      },
    ),
  );
  passport.serializeUser((user, done) => done(null, user));
  passport.deserializeUser((user: User, done) => done(null, user));

  app.get('/login', passport.authenticate('service'));
  app.get('/callback', passport.authenticate('service', { successRedirect: '/profile', failureRedirect: '/?error=1' }));

  // req.logout() ends the app's session only: then end the service's session too.
  app.post('/logout', (req, res, next) => {
    const idToken = (req.user as User | undefined)?.idToken;
    req.logout((error) => {
      if (error) return next(error);
      if (!idToken) return res.redirect(303, '/');
      const state = client.randomState();
      req.session.logoutState = state; // checked on /signed-out
      const endSession = client.buildEndSessionUrl(config, {
        id_token_hint: idToken,
        post_logout_redirect_uri: `${origin}/signed-out`, // the client's --post-logout-redirect-uri
        state,
      });
      req.session.save(() => res.redirect(303, endSession.href));
    });
  });
  // docs/integrations.md end

  // The service's account page, from its discovery document (docs/protocol.md, `account_url`).
  const accountUrl = String(config.serverMetadata().account_url ?? new URL('/account', issuer));
  app.get('/', (request, response) => {
    const user = request.user as User | undefined;
    const error = request.query.error ? '<p role="alert">Sign-in failed.</p>' : '';
    response.send(
      user
        ? page(
            APP,
            APP,
            `<p>Signed in as <strong id="who">${escapeHtml(user.email)}</strong>.</p><p><a href="/profile">Your profile</a> · <a id="account" href="${escapeHtml(accountUrl)}">Your account (devices, activity)</a> ${postButton('/logout', 'Sign out')}</p>`,
          )
        : page(
            APP,
            APP,
            `${error}<p>passport and openid-client sign you in at the identity service.</p><p><a class="button" href="/login">Sign in</a></p>`,
          ),
    );
  });

  app.get('/profile', (request, response) => {
    const user = request.user as User | undefined;
    if (!user) {
      response.redirect(303, '/login');
      return;
    }
    response.send(
      page(
        APP,
        'Your profile',
        `<p>Signed in as <strong id="who">${escapeHtml(user.email)}</strong>.</p><dl><dt>sub</dt><dd>${escapeHtml(user.sub)}</dd></dl><p>${postButton('/logout', 'Sign out')}</p>`,
      ),
    );
  });

  // The service sends the browser back here after its logout, with the state the app sent.
  app.get('/signed-out', (request, response) => {
    const expected = request.session.logoutState;
    delete request.session.logoutState;
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

  app.use((error: Error, _request: Request, response: Response, _next: NextFunction) => {
    log(`acme-tasks: ${error.message}`);
    response.status(500).send(page(APP, 'Something went wrong', '<p><a href="/">Start again</a>.</p>'));
  });

  return listen(app, options.port, options.hosts);
}
