import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  AUTHORIZATION_REQUEST_HEADER,
  BROWSER_PREFIX,
  BrowserPaths,
  CHALLENGE_SOLUTION_HEADER,
  PUBLISHABLE_KEY_HEADER,
} from 'service-protocol';
import { type ClientService, HOSTED_CLIENT_ID } from '../clients/service.js';
import { appOf, type ClientRecord } from '../clients/store.js';
import { ORIGINS_RELOAD_INTERVAL_MS } from '../defaults.js';
import { notFound } from './error-handler.js';
import { setRequestApp } from './request-app.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The client application behind a browser request, set by the browser-client resolver. */
    client: ClientRecord;
  }
}

/** The header the hosted page's service-web adds to every call: which pending authorization request it serves (oidc/). */

/**
 * Routes that authenticate their client themselves, with the same checks and errors, and then
 * hand it to the resolver: the trusted-device login folds the client's read into its own
 * (factors/device-key/sign-in-store.ts).
 */
const CLIENT_IN_HANDLER = new Set([`${BROWSER_PREFIX}${BrowserPaths.authenticate}`]);

/**
 * Routes whose answer is worth nothing without a later request that authenticates the client
 * afresh, so their client may come from the short-lived cache (clients/service.ts
 * `authenticateBrowserCached`, BROWSER_CLIENT_CACHE_MS): the device challenge, a nonce bound to
 * the client's id that only the authenticate request spends.
 */
const CLIENT_FROM_CACHE = new Set([`${BROWSER_PREFIX}${BrowserPaths.deviceChallenge}`]);

/**
 * The client a browser request acts for, set as `request.client`. `authenticated`: the client a
 * route read itself (CLIENT_IN_HANDLER); otherwise the publishable key and Origin are checked
 * here. The hosted sign-in pages' client then takes the name and MFA policy of the app whose
 * pending authorization request the page serves.
 */
export type ClientResolver = (request: FastifyRequest, authenticated?: ClientRecord) => Promise<ClientRecord>;

export interface BrowserClientOptions {
  clients: ClientService;
  /** The issuer: the hosted pages call this API from its origin. */
  issuer: string;
  /** The hosted client as it acts for a pending authorization request (oidc/service.ts), or ERR_SESSION_INVALID. */
  hostedClientFor: (hosted: ClientRecord, requestId: string | undefined) => Promise<ClientRecord>;
  /** The name an application shows (its branding's display name, else its client name): what a hosted sign-in's mails say. */
  displayNameOf?: (app: { id: string; name: string }) => Promise<string>;
  /** Every client's origins (registeredOrigins), shared with the OAuth endpoints' CORS (token/cors.ts). */
  origins: RegisteredOrigins;
}

/** The publishable key and Origin of a browser request. */
export function browserCredentials(request: FastifyRequest): { publishableKey?: string; origin?: string } {
  const key = request.headers[PUBLISHABLE_KEY_HEADER];
  const origin = request.headers.origin;
  return { ...(typeof key === 'string' ? { publishableKey: key } : {}), ...(origin !== undefined ? { origin } : {}) };
}

/**
 * For every route registered inside `scope`: CORS only for origins some client registered
 * (a preflight carries no key, so it can only be checked against all of them), then the
 * publishable key must name a client whose origins include the request's Origin. Returns the
 * one resolver every browser route's client goes through (routes in CLIENT_IN_HANDLER call it
 * with the client they read).
 */
export async function browserClient(
  scope: FastifyInstance,
  { clients, issuer, hostedClientFor, displayNameOf, origins }: BrowserClientOptions,
): Promise<ClientResolver> {
  // The hosted pages call this API from the issuer's own origin, and a same-origin GET carries
  // no Origin header (Fetch standard); the browser's Sec-Fetch-Site says where it came from.
  const issuerOrigin = new URL(issuer).origin;
  // Every route here takes the publishable key (checked below): the document says so (http/openapi.ts).
  scope.addHook('onRoute', (route) => {
    if (route.method !== 'OPTIONS') route.schema = { ...route.schema, security: [{ publishableKey: [] }] };
  });
  scope.addHook('onRequest', (request, _reply, done) => {
    if (!request.headers.origin && request.headers['sec-fetch-site'] === 'same-origin') request.headers.origin = issuerOrigin;
    done();
  });
  await scope.register(cors, {
    origin: (origin, callback) => {
      if (!origin) return callback(null, false);
      origins.has(origin).then(
        (ok) => {
          callback(null, ok);
        },
        (error: Error) => {
          callback(error, false);
        },
      );
    },
    methods: ['GET', 'POST'],
    allowedHeaders: ['content-type', PUBLISHABLE_KEY_HEADER, CHALLENGE_SOLUTION_HEADER],
    maxAge: 600,
  });
  scope.decorateRequest('client', null as unknown as ClientRecord);
  // Answers carry codes and device tokens: never stored by a cache (the default of every answer, http/security-headers.ts).
  scope.setNotFoundHandler(notFound);

  const resolve: ClientResolver = async (request, authenticated) => {
    const { publishableKey, origin } = browserCredentials(request);
    const client =
      authenticated ??
      (CLIENT_FROM_CACHE.has(request.routeOptions.url ?? '')
        ? await clients.authenticateBrowserCached(publishableKey, origin)
        : await clients.authenticateBrowser(publishableKey, origin));
    // Set before the hosted client's own check, so a refusal there is recorded against it.
    request.client = client;
    if (client.id !== HOSTED_CLIENT_ID) {
      setRequestApp(appOf(client));
      return client;
    }
    const pending = request.headers[AUTHORIZATION_REQUEST_HEADER];
    const hosted = await hostedClientFor(client, typeof pending === 'string' ? pending : undefined);
    const name = hosted.app && displayNameOf ? await displayNameOf(hosted.app) : hosted.name;
    request.client = { ...hosted, name, ...(hosted.app ? { app: { ...hosted.app, name } } : {}) };
    // Mails this request causes name and brand the requesting application (branding/mailer.ts).
    setRequestApp(appOf(request.client));
    return request.client;
  };
  scope.addHook('preHandler', async (request: FastifyRequest) => {
    if (!CLIENT_IN_HANDLER.has(request.routeOptions.url ?? '')) await resolve(request);
  });
  return resolve;
}

export interface RegisteredOrigins {
  /** Whether some client registered `origin`. */
  has(origin: string): Promise<boolean>;
}

/**
 * Every client's origins, cached. An origin not in the cache may belong to a client registered
 * a moment ago (on this node or another), so its request waits for the next reload rather than
 * being refused. Reloads run at most once per ORIGINS_RELOAD_INTERVAL_MS however many unknown
 * origins ask (a flood of made-up origins costs one read a second, not one per request), and
 * every request waiting shares the one in flight.
 */
export function registeredOrigins(clients: ClientService, issuer: string): RegisteredOrigins {
  const issuerOrigin = new URL(issuer).origin;
  let known = new Set<string>();
  /** When the newest reload began. */
  let loadedAt = 0;
  let reloading: Promise<void> | undefined;
  const reload = () =>
    (reloading ??= (async () => {
      const wait = loadedAt + ORIGINS_RELOAD_INTERVAL_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      loadedAt = Date.now();
      known = new Set((await clients.list()).flatMap((c) => c.origins));
    })().finally(() => {
      reloading = undefined;
    }));
  return {
    async has(origin: string): Promise<boolean> {
      // The hosted pages' own calls (the issuer's origin, same-origin: no CORS needed) never wait.
      if (known.has(origin) || origin === issuerOrigin) return known.has(origin);
      // A reload that began before this request may have missed its client: wait for one that began after.
      const askedAt = Date.now();
      while (loadedAt < askedAt) await reload();
      return known.has(origin);
    },
  };
}

declare module '../composition/wing.js' {
  interface HttpContext {
    /** Every client's registered origins (the OAuth endpoints' CORS reads it). */
    readonly origins: RegisteredOrigins;
  }
}
