/**
 * The demo's backend: serves the two pages, exchanges the authorization code for the user's
 * claims (service-oauth-client), keeps its own session in an HTTP-only cookie, and changes the
 * user's MFA method through the delegation client. Plain node:http, sessions in memory.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { fileURLToPath } from 'node:url';
import {
  accessTokenRefusal,
  type Claims,
  DelegationRequestError,
  exchangeCodeForTokens,
  JWTVerificationError,
  type MfaChangeResult,
  MfaMethod,
  OAuthExchangeError,
  ServiceDelegationClient,
  ServiceOAuthError,
  verifyAccessToken,
  verifyAccessTokenRequest,
} from 'service-oauth-client';
import { renderSVG } from 'uqr';
import { boundKeyOf, DpopNonceNeeded, userinfoWithProof } from './dpop.ts';
import { escapeHtml, listen, securityHeaders } from './http.ts';

export interface DemoOptions {
  /** The identity service's issuer URL, e.g. http://127.0.0.1:8080. */
  serviceUrl: string;
  /** Where users open the demo; must be one of the client's registered origins. */
  publicOrigin: string;
  clientId: string;
  /** The browser's key (bound to the registered origins). */
  publishableKey: string;
  /** The backend's key: code exchange. Never sent to the browser. */
  secretKey: string;
  /** The lines printed by `service-idp clients delegation-keys CLIENT --json`; without them the MFA change is off. */
  delegation?: Record<string, string> | undefined;
  port: number;
  /**
   * The identifier of Acme Notes' own API, as registered at the service (start.ts: urn:acme:notes).
   * With it, the account page gets a token for the API (`resource`, `read:notes`) through the
   * service's /authorize, back to `<publicOrigin>/notes/callback` (a redirect URI of the client),
   * and /api/notes serves the notes to a token carrying read:notes. Without it, no notes.
   */
  notesApi?: string | undefined;
  /** Addresses to listen on; default loopback only. */
  hosts?: string[];
  log?: (line: string) => void;
}

export interface RunningDemo {
  url: string;
  close(): Promise<void>;
}

interface Session {
  sub: string;
  email: string;
  claims: Claims;
  expiresAt: number;
  /** The access token, and whether it is bound to the device key (DPoP) or a bearer token. */
  accessToken: string;
  tokenType: 'Bearer' | 'DPoP';
  /** The userinfo the backend read with the DPoP-bound token and a proof the device signed. */
  userinfo?: Record<string, unknown>;
  /** The /authorize request for a notes API token under way: its state and PKCE verifier. */
  notesLogin?: { state: string; codeVerifier: string };
  /** The access token for the notes API (RFC 9068, aud the API), handed to the page that calls /api/notes with it. */
  notesToken?: string;
  /** An MFA change waiting for its code. */
  pendingChange?: { sessionId: string; method: MfaMethod; phoneNumber?: string };
}

const COOKIE = 'demo_session';
/** The permission /api/notes asks of a token (the API defines read:notes and write:notes). */
export const NOTES_PERMISSION = 'read:notes';
/** Where the service sends the browser back with the notes API token's code, below the public origin. */
export const NOTES_CALLBACK_PATH = '/notes/callback';
/** What /api/notes serves: the same sample notes to every holder of read:notes, with their subject. */
const SAMPLE_NOTES = [
  { title: 'Welcome to Acme Notes', body: 'This list came from our own API, which checked your access token for read:notes.' },
  { title: 'Groceries', body: 'Oat milk, lemons, coffee beans.' },
];
const SESSION_TTL_MS = 8 * 60 * 60 * 1000;
const BODY_LIMIT = 16 * 1024;
const PUBLIC_DIR = fileURLToPath(new URL('../public/', import.meta.url));
/** service-web/dpop for a <script> tag (window.ServiceWebDpop), from the workspace's build. */
const DPOP_SCRIPT = fileURLToPath(new URL('../../../packages/web/dist/service-web-dpop.global.js', import.meta.url));
/** service-web/passkeys for a <script> tag (window.ServiceWebPasskeys), from the workspace's build. */
const PASSKEYS_SCRIPT = fileURLToPath(new URL('../../../packages/web/dist/service-web-passkeys.global.js', import.meta.url));
const STATIC: Record<string, string> = {
  '/static/app.js': 'text/javascript; charset=utf-8',
  '/static/account.js': 'text/javascript; charset=utf-8',
  '/static/common.js': 'text/javascript; charset=utf-8',
  '/static/dpop.js': 'text/javascript; charset=utf-8',
  '/static/style.css': 'text/css; charset=utf-8',
  '/static/favicon.svg': 'image/svg+xml',
};

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** More fields of the answer (the DPoP nonce to sign with). */
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Starts the demo backend; resolves once it listens. */
export async function startDemo(options: DemoOptions): Promise<RunningDemo> {
  const serviceUrl = options.serviceUrl.replace(/\/+$/, '');
  const publicOrigin = new URL(options.publicOrigin).origin;
  const log = options.log ?? ((line: string) => process.stdout.write(`${line}\n`));
  const secureCookie = publicOrigin.startsWith('https:');
  const sessions = new Map<string, Session>();
  const delegation = options.delegation
    ? ServiceDelegationClient.fromKeys({
        baseUrl: options.delegation.SERVICE_BASE_URL ?? serviceUrl,
        spId: options.delegation.OAUTH_CLIENT_ID ?? options.clientId,
        spSigningKey: required(options.delegation, 'SP_ED25519_PRIVATE_KEY_PEM'),
        spEncryptionKey: required(options.delegation, 'SP_X25519_PRIVATE_KEY_PEM'),
        idpVerifyKey: required(options.delegation, 'IDP_ED25519_PUBLIC_KEY_PEM'),
        idpEncryptionKey: required(options.delegation, 'IDP_X25519_PUBLIC_KEY_PEM'),
        apiKey: options.secretKey,
      })
    : undefined;

  const page = (file: string) => {
    const template = readFileSync(`${PUBLIC_DIR}${file}`, 'utf8');
    return template
      .replaceAll('{{SERVICE_URL}}', escapeHtml(serviceUrl))
      .replaceAll('{{PUBLISHABLE_KEY}}', escapeHtml(options.publishableKey))
      .replaceAll('{{PUBLIC_ORIGIN}}', escapeHtml(publicOrigin));
  };
  const csp = [
    "default-src 'none'",
    `script-src 'self' ${serviceUrl}`,
    `connect-src 'self' ${serviceUrl}`,
    "style-src 'self'",
    "img-src 'self' data:",
    "form-action 'self'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
  ].join('; ');

  const sessionOf = (request: IncomingMessage): { id: string; session: Session } | undefined => {
    const id = parseCookies(request.headers.cookie)[COOKIE];
    if (!id) return undefined;
    const session = sessions.get(id);
    if (!session) return undefined;
    if (session.expiresAt <= Date.now()) {
      sessions.delete(id);
      return undefined;
    }
    return { id, session };
  };
  const requireSession = (request: IncomingMessage) => {
    const found = sessionOf(request);
    if (!found) throw new HttpError(401, 'not_signed_in', 'You are not signed in.');
    return found;
  };
  const requireDelegation = () => {
    if (!delegation) throw new HttpError(501, 'delegation_off', 'MFA delegation is not configured for this demo (no delegation keys).');
    return delegation;
  };
  const cookie = (value: string, maxAgeSeconds: number) =>
    `${COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secureCookie ? '; Secure' : ''}`;

  const notesCallback = `${publicOrigin}${NOTES_CALLBACK_PATH}`;

  /** GET /notes/authorize: to the service's /authorize for a token of the notes API (RFC 8707 resource, read:notes). */
  function notesAuthorize(request: IncomingMessage, response: ServerResponse) {
    const found = sessionOf(request);
    if (!found || !options.notesApi) return redirect(response, '/');
    const state = randomBytes(16).toString('base64url');
    const codeVerifier = randomBytes(32).toString('base64url');
    found.session.notesLogin = { state, codeVerifier };
    const params = new URLSearchParams({
      response_type: 'code',
      client_id: options.clientId,
      redirect_uri: notesCallback,
      scope: `openid ${NOTES_PERMISSION}`,
      resource: options.notesApi,
      state,
      code_challenge: createHash('sha256').update(codeVerifier).digest('base64url'),
      code_challenge_method: 'S256',
      login_hint: found.session.email,
    });
    redirect(response, `${serviceUrl}/authorize?${params}`);
  }

  /**
   * GET /notes/callback: the code for the notes API token, redeemed by this backend (its secret
   * key, the PKCE verifier); kept only when the token names the user of this session.
   */
  async function notesCallbackRoute(request: IncomingMessage, response: ServerResponse, url: URL) {
    const found = sessionOf(request);
    const pending = found?.session.notesLogin;
    if (!found || !pending || !options.notesApi) return redirect(response, '/');
    found.session.notesLogin = undefined;
    const state = url.searchParams.get('state') ?? '';
    const code = url.searchParams.get('code');
    if (state !== pending.state || !code) return redirect(response, '/account?notes=refused#notes');
    const answer = await fetch(`${serviceUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: notesCallback,
        code_verifier: pending.codeVerifier,
        client_id: options.clientId,
        client_secret: options.secretKey,
      }),
      signal: AbortSignal.timeout(10_000),
    });
    const tokens = (await answer.json().catch(() => ({}))) as { access_token?: string };
    if (!answer.ok || !tokens.access_token) {
      log(`demo: the notes API token request failed (${answer.status})`);
      return redirect(response, '/account?notes=refused#notes');
    }
    // Which user it is for: the token's own verified sub (no permission asked here: /api/notes does that).
    const sub = await verifyAccessToken(tokens.access_token, { issuer: serviceUrl, audience: options.notesApi }).then(
      ({ claims }) => claims.sub,
      () => undefined,
    );
    if (sub !== found.session.sub) return redirect(response, '/account?notes=refused#notes');
    found.session.notesToken = tokens.access_token;
    redirect(response, '/account#notes');
  }

  /**
   * GET /api/notes: Acme Notes' own API. No cookie: the access token alone (Authorization:
   * Bearer, or DPoP with its proof), verified by verifyAccessToken against the service's key set;
   * 401/403 with the WWW-Authenticate challenge when refused (403 insufficient_scope without read:notes).
   */
  async function notesApiRoute(request: IncomingMessage, response: ServerResponse) {
    if (!options.notesApi) throw new HttpError(404, 'not_found', 'Not found.');
    try {
      const { claims } = await verifyAccessTokenRequest(request, {
        issuer: serviceUrl,
        audience: options.notesApi,
        origin: publicOrigin,
        requiredScopes: [NOTES_PERMISSION],
      });
      send(response, 200, 'application/json; charset=utf-8', JSON.stringify({ sub: claims.sub, notes: SAMPLE_NOTES }));
    } catch (error) {
      const refusal = accessTokenRefusal(error);
      if (!refusal) throw error;
      for (const [name, value] of Object.entries(refusal.headers)) response.setHeader(name, value);
      send(response, refusal.status, 'application/json; charset=utf-8', JSON.stringify(refusal.body));
    }
  }

  async function api(request: IncomingMessage, response: ServerResponse, path: string): Promise<unknown> {
    if (request.method === 'GET' && path === '/api/me') {
      const { session } = requireSession(request);
      return {
        // The notes API: whether this demo has one, and the token the page calls it with.
        notesApi: options.notesApi ?? null,
        notesToken: session.notesToken ?? null,
        sub: session.sub,
        email: session.email,
        claims: session.claims,
        tokenType: session.tokenType,
        // Shown, not trusted: the key the service bound the access token to (its cnf.jkt), and what userinfo said with it.
        boundTo: session.tokenType === 'DPoP' ? boundKeyOf(session.accessToken) : null,
        userinfo: session.userinfo ?? null,
      };
    }
    if (request.method === 'GET' && path === '/api/mfa') {
      const { session } = requireSession(request);
      try {
        const credentials = await requireDelegation().getUserCredentials(session.email);
        return { mfa_method: credentials.mfa_method ?? null, status: credentials.status, pending: session.pendingChange?.method ?? null };
      } catch (error) {
        throw delegationFailure(error);
      }
    }
    if (request.method !== 'POST') throw new HttpError(404, 'not_found', 'Not found.');

    // Every POST: JSON only (a cross-site form cannot send it without a CORS preflight) and,
    // when the browser names it, from our own origin. The cookie is SameSite=Lax as well.
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
      throw new HttpError(415, 'unsupported_media_type', 'Send JSON.');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== publicOrigin) throw new HttpError(403, 'forbidden_origin', 'Cross-origin request refused.');
    const body = await readJson(request);

    switch (path) {
      case '/api/login': {
        const code = stringField(body, 'code', 2048);
        // A passkey sign-in needs no address: then the account is the one the token names.
        const userid = body.userid === undefined || body.userid === '' ? undefined : stringField(body, 'userid', 320);
        const codeVerifier = body.code_verifier === undefined ? undefined : stringField(body, 'code_verifier', 128);
        // A proof the device key signed for the token request (service-web/dpop): the tokens are then bound to the device.
        const dpop = body.dpop === undefined ? undefined : stringField(body, 'dpop', 4000);
        let claims: Claims;
        let tokens: Awaited<ReturnType<typeof exchangeCodeForTokens>>;
        try {
          tokens = await exchangeCodeForTokens({
            code,
            ...(codeVerifier ? { codeVerifier } : {}),
            ...(dpop ? { dpop } : {}),
            oauthTokenUrl: `${serviceUrl}/oauth/token`,
            jwksUrl: `${serviceUrl}/.well-known/jwks.json`,
            issuer: serviceUrl,
            audience: options.clientId,
            clientId: options.clientId,
            apiKey: options.secretKey,
            leeway: 10,
          });
          claims = tokens.claims;
        } catch (error) {
          throw loginFailure(error, log);
        }
        if (typeof claims.email !== 'string' || (userid !== undefined && claims.email.toLowerCase() !== userid.trim().toLowerCase())) {
          throw new HttpError(401, 'account_mismatch', 'The service signed in a different account than the one entered.');
        }
        const previous = sessionOf(request);
        if (previous) sessions.delete(previous.id);
        const id = randomBytes(32).toString('base64url');
        sessions.set(id, {
          sub: claims.sub,
          email: claims.email,
          claims,
          accessToken: tokens.accessToken,
          tokenType: tokens.tokenType,
          expiresAt: Date.now() + SESSION_TTL_MS,
        });
        response.setHeader('set-cookie', cookie(id, SESSION_TTL_MS / 1000));
        log(`demo: signed in ${claims.email} (sub ${claims.sub}, ${tokens.tokenType} token)`);
        // A DPoP-bound token is worth nothing without the device's key: the page gets it to sign
        // the proofs (ath) of the calls the backend makes with it. A bearer token stays here.
        return {
          ok: true,
          email: claims.email,
          tokenType: tokens.tokenType,
          ...(tokens.tokenType === 'DPoP' ? { accessToken: tokens.accessToken } : {}),
        };
      }
      case '/api/userinfo': {
        const { session } = requireSession(request);
        if (session.tokenType !== 'DPoP') throw new HttpError(409, 'not_bound', 'This sign-in has no device-bound token.');
        try {
          const userinfo = await userinfoWithProof(serviceUrl, session.accessToken, stringField(body, 'dpop', 4000));
          if (!userinfo) throw new HttpError(401, 'userinfo_refused', 'The identity service refused the device-bound token.');
          session.userinfo = userinfo;
          return { userinfo };
        } catch (error) {
          if (error instanceof DpopNonceNeeded) throw new HttpError(401, 'use_dpop_nonce', error.message, { dpopNonce: error.dpopNonce });
          throw error;
        }
      }
      case '/api/logout': {
        const found = sessionOf(request);
        if (found) sessions.delete(found.id);
        response.setHeader('set-cookie', cookie('', 0));
        return { ok: true };
      }
      case '/api/qr': {
        // The page shows the TOTP enrollment's otpauth URI as a QR code: rendered here, no CDN.
        const uri = stringField(body, 'uri', 1024);
        if (!uri.startsWith('otpauth://')) throw new HttpError(400, 'invalid_uri', 'Only otpauth:// URIs are rendered.');
        return { dataUrl: qrDataUrl(uri) };
      }
      case '/api/mfa/change': {
        const { session } = requireSession(request);
        const method = stringField(body, 'mfaMethod', 8);
        if (!(Object.values(MfaMethod) as string[]).includes(method))
          throw new HttpError(400, 'invalid_method', 'Choose email, SMS or an authenticator app.');
        const phoneNumber = method === MfaMethod.SMS ? stringField(body, 'phoneNumber', 32) : undefined;
        try {
          const started = await requireDelegation().initiateMfaChange({
            userid: session.email,
            mfaMethod: method as MfaMethod,
            ...(phoneNumber ? { phoneNumber } : {}),
          });
          if (started.status === 'failed') throw new HttpError(400, 'change_failed', started.message ?? 'The service refused the change.');
          session.pendingChange = { sessionId: started.session_id, method: method as MfaMethod, ...(phoneNumber ? { phoneNumber } : {}) };
          return changeStep(started, method);
        } catch (error) {
          throw delegationFailure(error);
        }
      }
      case '/api/mfa/verify': {
        const { session } = requireSession(request);
        const pending = session.pendingChange;
        if (!pending) throw new HttpError(409, 'no_change_pending', 'Start the change first.');
        const otp = stringField(body, 'otp', 16).replace(/\s+/g, '');
        if (!/^\d{6}$/.test(otp)) throw new HttpError(400, 'invalid_otp', 'Enter the 6-digit code.');
        try {
          const verified = await requireDelegation().verifyMfaChange({ userid: session.email, sessionId: pending.sessionId, otp });
          if (verified.status === 'failed') {
            throw new HttpError(400, 'invalid_otp', verified.message ?? 'That code is not right. Check it and try again.');
          }
          // The current factor was proven: now the new method's code (or QR code).
          if (verified.status !== 'success') return changeStep(verified as MfaChangeResult, pending.method);
          session.pendingChange = undefined;
          log(`demo: ${session.email} changed MFA to ${pending.method}`);
          return { status: 'success', mfa_method: pending.method };
        } catch (error) {
          throw delegationFailure(error);
        }
      }
      case '/api/mfa/cancel': {
        const { session } = requireSession(request);
        session.pendingChange = undefined;
        return { ok: true };
      }
      default:
        throw new HttpError(404, 'not_found', 'Not found.');
    }
  }

  async function handle(request: IncomingMessage, response: ServerResponse) {
    const url = new URL(request.url ?? '/', publicOrigin);
    const path = url.pathname;
    for (const [name, value] of Object.entries(securityHeaders(csp))) response.setHeader(name, value);

    if (path === '/api/notes' && request.method === 'GET') return notesApiRoute(request, response);
    if (path.startsWith('/api/')) {
      try {
        send(response, 200, 'application/json; charset=utf-8', JSON.stringify(await api(request, response, path)));
      } catch (error) {
        const known = error instanceof HttpError ? error : new HttpError(500, 'internal', 'Something went wrong on our side.');
        if (!(error instanceof HttpError)) log(`demo: ${request.method} ${path} failed: ${error instanceof Error ? error.stack : error}`);
        send(
          response,
          known.status,
          'application/json; charset=utf-8',
          JSON.stringify({ error: known.code, message: known.message, ...known.extra }),
        );
      }
      return;
    }
    if (request.method !== 'GET' && request.method !== 'HEAD')
      return send(response, 405, 'text/plain; charset=utf-8', 'Method not allowed');
    // The service accepts the publishable key only from the registered origin: send a visitor
    // who typed another name for this host (127.0.0.1 for localhost) to that origin.
    if (request.headers.host !== new URL(publicOrigin).host && !path.startsWith('/static/')) {
      response.setHeader('location', `${publicOrigin}${path}${url.search}`);
      return send(response, 302, 'text/plain; charset=utf-8', `Open ${publicOrigin}`);
    }
    if (path === '/static/service-web-dpop.js') {
      response.setHeader('cache-control', 'no-cache');
      return send(response, 200, 'text/javascript; charset=utf-8', readFileSync(DPOP_SCRIPT));
    }
    if (path === '/static/service-web-passkeys.js') {
      response.setHeader('cache-control', 'no-cache');
      return send(response, 200, 'text/javascript; charset=utf-8', readFileSync(PASSKEYS_SCRIPT));
    }
    const type = STATIC[path];
    if (type) {
      response.setHeader('cache-control', 'no-cache');
      return send(response, 200, type, readFileSync(`${PUBLIC_DIR}${path.slice('/static/'.length)}`));
    }
    if (path === '/') {
      if (sessionOf(request)) return redirect(response, '/account');
      return send(response, 200, 'text/html; charset=utf-8', page('index.html'));
    }
    if (path === '/account') {
      if (!sessionOf(request)) return redirect(response, '/');
      return send(response, 200, 'text/html; charset=utf-8', page('account.html'));
    }
    if (path === '/notes/authorize') return notesAuthorize(request, response);
    if (path === NOTES_CALLBACK_PATH) return notesCallbackRoute(request, response, url);
    if (path === '/favicon.ico') return redirect(response, '/static/favicon.svg');
    send(response, 404, 'text/plain; charset=utf-8', 'Not found');
  }

  const listening = await listen(
    (request, response) => {
      handle(request, response).catch((error) => {
        log(`demo: ${error instanceof Error ? error.stack : error}`);
        if (!response.headersSent) send(response, 500, 'text/plain; charset=utf-8', 'Internal error');
        else response.destroy();
      });
    },
    options.port,
    options.hosts,
  );
  const sweep = setInterval(() => {
    const now = Date.now();
    for (const [id, session] of sessions) if (session.expiresAt <= now) sessions.delete(id);
  }, 60_000);
  sweep.unref();
  return {
    url: listening.url,
    async close() {
      clearInterval(sweep);
      await listening.close();
    },
  };
}

function required(values: Record<string, string>, name: string): string {
  const value = values[name];
  if (!value) throw new Error(`delegation keys: ${name} is missing`);
  return value;
}

function qrDataUrl(text: string): string {
  const svg = renderSVG(text, { border: 2, pixelSize: 8, ecc: 'M' });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

/** What the browser may hear about a failed exchange: a clear sentence, never the code or the key. */
function loginFailure(error: unknown, log: (line: string) => void): HttpError {
  if (error instanceof ServiceOAuthError) log(`demo: code exchange failed: ${error.code}: ${error.message}`);
  if (error instanceof OAuthExchangeError) {
    // RFC 9449 8: the page signs the token request again with the service's nonce (public/dpop.js).
    if (error.error === 'use_dpop_nonce' && error.dpopNonce)
      return new HttpError(401, 'use_dpop_nonce', 'Sign again with the nonce.', { dpopNonce: error.dpopNonce });
    if (error.code === 'ERR_OAUTH_EXCHANGE_FAILED') {
      return new HttpError(401, 'code_refused', 'This sign-in expired or was already used. Please sign in again.');
    }
    if (error.code === 'ERR_OAUTH_EXCHANGE_NETWORK' || error.code === 'ERR_OAUTH_EXCHANGE_TIMEOUT') {
      return new HttpError(503, 'service_unreachable', 'The identity service could not be reached. Try again in a moment.');
    }
    return new HttpError(502, 'exchange_failed', 'The identity service gave an answer the demo could not use.');
  }
  if (error instanceof JWTVerificationError) return new HttpError(401, 'token_invalid', 'The identity token did not verify.');
  if (error instanceof ServiceOAuthError) return new HttpError(500, 'config', 'The demo is misconfigured (see its log).');
  return new HttpError(500, 'internal', 'Something went wrong on our side.');
}

function delegationFailure(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof DelegationRequestError) {
    if (error.code === 'ERR_DELEGATION_INPUT_INVALID') return new HttpError(400, 'invalid_input', error.message);
    if (error.code === 'ERR_DELEGATION_REQUEST_FAILED') {
      return new HttpError(
        error.status === 429 ? 429 : 400,
        'refused',
        error.serviceMessage ?? 'The identity service refused the request.',
      );
    }
    return new HttpError(503, 'service_unreachable', 'The identity service could not be reached. Try again in a moment.');
  }
  if (error instanceof ServiceOAuthError)
    return new HttpError(502, 'untrusted_answer', `The identity service's answer was refused (${error.code}).`);
  return new HttpError(500, 'internal', 'Something went wrong on our side.');
}

function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const index = part.indexOf('=');
    if (index > 0) out[part.slice(0, index).trim()] = part.slice(index + 1).trim();
  }
  return out;
}

function stringField(body: Record<string, unknown>, name: string, max: number): string {
  const value = body[name];
  if (typeof value !== 'string' || value.length === 0 || value.length > max)
    throw new HttpError(400, 'invalid_request', `${name} is missing or invalid.`);
  return value;
}

async function readJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new HttpError(413, 'too_large', 'Request body too large.');
    chunks.push(chunk as Buffer);
  }
  try {
    const value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    if (value && typeof value === 'object' && !Array.isArray(value)) return value;
  } catch {
    // fall through
  }
  throw new HttpError(400, 'invalid_json', 'The body must be a JSON object.');
}

/** What the page shows for a step of an MFA change: the current factor's code to ask for, or the new method's. */
function changeStep(step: MfaChangeResult, method: string) {
  return {
    status: step.status,
    method,
    ...(step.current_method ? { current_method: step.current_method } : {}),
    message: step.message,
    ...(step.otpauth_uri ? { qr: qrDataUrl(step.otpauth_uri), secret: step.secret } : {}),
  };
}

function send(response: ServerResponse, status: number, type: string, body: string | Buffer) {
  response.statusCode = status;
  response.setHeader('content-type', type);
  response.end(body);
}

function redirect(response: ServerResponse, location: string) {
  response.setHeader('location', location);
  send(response, 302, 'text/plain; charset=utf-8', `See ${location}`);
}
