import { maxHeaderSize } from 'node:http';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController, type RouteOptions } from 'fastify';
import {
  AUTHORIZATION_REQUEST_HEADER,
  BROWSER_PREFIX,
  BrowserPaths,
  type ClientInfoResponse,
  type ErrorBody,
  type HealthResponse,
  Paths,
} from 'service-protocol';
import { Type } from 'typebox';
import { ADMIN_PREFIX } from './admin/prefix.js';
import { adminKeyOf, adminRoutes, type ConsoleCredential } from './admin/routes.js';
import { consoleCredential, consoleRoutes } from './console/routes.js';
import type { ServiceContext } from './context.js';
import { BODY_LIMIT_BYTES } from './defaults.js';
import { deviceRoutes } from './devices/routes.js';
import { ServiceError } from './errors.js';
import { trackRequestOrigin } from './events/request-context.js';
import { recordSignInRefusals } from './events/sign-in-refusals.js';
import { mfaMethodsOf } from './factors/index.js';
import type { FactorRouteDeps } from './factors/module.js';
import { signInStartRoutes } from './factors/start-routes.js';
import { browserClient, registeredOrigins } from './http/browser-client.js';
import {
  CONTRACT_CHECK_ENV,
  type ContractViolation,
  checkResponsesAgainstDocument,
  contractViolationToStderr,
} from './http/contract-check.js';
import { cookieValue, parseCookies } from './http/cookies.js';
import { clientErrorHandler, frameworkErrors, registerErrorHandler } from './http/error-handler.js';
import { lazySchemaCompilers } from './http/lazy-schemas.js';
import { registerMetrics } from './http/metrics.js';
import { registerOpenApi } from './http/openapi.js';
import { trackRequestApp } from './http/request-app.js';
import { decimalQueryIntegers, errorResponses, SERVER_ERRORS, wireBody } from './http/schemas.js';
import { sdkRoutes } from './http/sdk.js';
import { securityHeaders } from './http/security-headers.js';
import { createPageLanguages } from './i18n/page-language.js';
import { trackRequestLanguage } from './i18n/request-locale.js';
import { localeRoutes } from './i18n/routes.js';
import { bindingCookieName, hostedCeremonyContext, sessionCookieName } from './oidc/routes.js';
import { mfaRoutes } from './sign-in/mfa-routes.js';
import { webhookDocument } from './webhooks/openapi.js';

export interface AppOptions {
  /**
   * Pino options; `stream` lets tests read the log lines. `pretty` prints each line readably
   * (pino-pretty, for a terminal) instead of as JSON.
   */
  logger?: boolean | { level: string; stream?: NodeJS.WritableStream; pretty?: boolean };
  /** Called with every route as it is registered (tests read the route schemas). */
  onRoute?: (route: RouteOptions) => void;
  /**
   * Test-only: checks every answer of a documented route against the responses the OpenAPI
   * document declares for it, and calls this with each mismatch (http/contract-check.ts). Off
   * when absent, unless the environment sets SERVICE_IDP_CONTRACT_CHECK=1 (then to stderr).
   */
  onContractViolation?: (violation: ContractViolation) => void;
}

/** Readable terminal lines: `10:21:07 INFO: POST /v1/authenticate 200 3.1 ms`. */
const PRETTY_TRANSPORT = {
  target: 'pino-pretty',
  options: { singleLine: true, translateTime: 'HH:MM:ss', ignore: 'pid,hostname,reqId,method,path,statusCode,ms' },
};

/** One line per request instead of Fastify's two: `POST /v1/authenticate 200 3.1 ms`. */
class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // The path only: a query string may carry a code or a token.
    const path = request.url.split('?', 1)[0];
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    const fields = { method: request.method, path, statusCode: reply.statusCode, ms };
    const line = `${request.method} ${path} ${reply.statusCode} ${ms} ms`;
    if (error) reply.log.error({ ...fields, err: error }, line);
    else reply.log.info(fields, line);
  }
}

const ClientInfoAnswer = wireBody<ClientInfoResponse>()(
  Type.Object({ clientId: Type.String(), name: Type.String(), issuer: Type.String() }),
);
const ClientInfoSchema = { response: { 200: ClientInfoAnswer, ...errorResponses(401, 403, ...SERVER_ERRORS) } };
const HealthAnswer = wireBody<HealthResponse>()(Type.Object({ status: Type.Literal('ok') }));

/**
 * A Fastify app with the service's logger, limits, errors, metrics, security headers and request
 * context; no routes yet. `document`: serves the OpenAPI document (the main listener).
 */
async function baseApp(ctx: ServiceContext, options: AppOptions, document: boolean) {
  const { pretty = false, ...pinoOptions } = typeof options.logger === 'object' ? options.logger : {};
  const schemas = lazySchemaCompilers();
  const app = Fastify({
    // Each route's schemas compiled at its first use, not all of them at start (http/lazy-schemas.ts).
    schemaController: { compilersFactory: schemas.compilersFactory as never },
    logger:
      options.logger === undefined || options.logger === false
        ? false
        : {
            ...pinoOptions,
            ...(pretty ? { transport: PRETTY_TRANSPORT } : {}),
            // Keys and credentials never reach a log line.
            redact: ['req.headers["x-service-key"]', 'req.headers.authorization', 'req.headers.cookie'],
          },
    logController: new OneLineRequestLog(),
    bodyLimit: BODY_LIMIT_BYTES,
    // The router refuses a path parameter over maxParamLength before any route or hook runs, in
    // its own words. At Node's header size limit (16 KB by default) no request line can exceed
    // it: every route is matched, the admin API's key check runs first, and each params schema
    // bounds its ids (100 characters).
    routerOptions: { maxParamLength: maxHeaderSize },
    // Refusals while routing (a URL that does not decode) and the HTTP parser's: `{ code, message }`.
    frameworkErrors: frameworkErrors(async (request) => {
      if (request.url === ADMIN_PREFIX || request.url.startsWith(`${ADMIN_PREFIX}/`) || request.url.startsWith(`${ADMIN_PREFIX}?`))
        await adminKeyOf(ctx.adminKeys, request.headers.authorization);
    }),
    clientErrorHandler,
    trustProxy: ctx.config.trustProxy,
    // Reject unknown or mistyped fields instead of silently dropping or coercing them.
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.decorate('compilePendingSchemas', schemas.compileAll);
  if (options.onRoute) app.addHook('onRoute', options.onRoute);
  registerErrorHandler(app);
  decimalQueryIntegers(app);
  const onContractViolation =
    options.onContractViolation ?? (process.env[CONTRACT_CHECK_ENV] === '1' ? contractViolationToStderr : undefined);
  if (onContractViolation) checkResponsesAgainstDocument(app, onContractViolation);
  if (document) await registerOpenApi(app, { issuer: ctx.config.issuer, extras: webhookDocument() });
  trackRequestOrigin(app);
  registerMetrics(app, ctx.metrics);
  // Helmet's headers, and the caching rule (protocol.md): nothing is stored by a cache unless its route says so
  // (only the JWKS, the discovery document, the SDK script and the OpenAPI document are public and cacheable).
  securityHeaders(app);
  await app.register(formbody);
  // Every request's language (the mails it causes speak it), and the hosted pages' (i18n/).
  trackRequestLanguage(app, ctx.locales, ctx.config.issuer);
  trackRequestApp(app);
  return app;
}

/** The admin API, with every wing's route group; `consoleCredential`: also the console's session, where the console is served. */
const adminOptions = (ctx: ServiceContext, consoleCredential: ConsoleCredential | undefined) => ({
  adminKeys: ctx.adminKeys,
  ...(consoleCredential ? { consoleCredential } : {}),
  groups: ctx.wings.flatMap((wing) => (wing.routes?.admin ? [wing.routes.admin] : [])),
});

/** What the factors' routes are given (factors/module.ts FactorRouteDeps). */
const factorRouteDeps = (ctx: ServiceContext): FactorRouteDeps => ({
  issuer: ctx.config.issuer,
  mfaMethods: mfaMethodsOf(ctx.factors),
  placeHeader: ctx.config.placeHeader,
  prover: ctx.prover,
  newDeviceSignIn: ctx.newDeviceSignIn,
  passkeys: ctx.passkeys,
  passkeyMfa: ctx.passkeyMfa,
  ceremonyContext: hostedCeremonyContext(ctx.oidc, ctx.config.issuer),
  upstream: ctx.upstream,
  connections: ctx.connections,
  bindingCookie: bindingCookieName(ctx.config.issuer),
  cookies: parseCookies,
  requestHeader: AUTHORIZATION_REQUEST_HEADER,
});

/**
 * The operator console's own listener (config.console; docs/operations.md, "Where it is
 * served"): the console's page, files, sign-in and session, and the admin API for its session
 * only. Machines' admin keys are refused here: they stay on the main listener.
 */
export async function buildConsoleApp(ctx: ServiceContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const url = ctx.config.console?.url;
  if (!url) throw new Error('no console listener is configured');
  const app = await baseApp(ctx, options, false);
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined && request.url.startsWith(`${ADMIN_PREFIX}`))
      throw new ServiceError('ERR_ADMIN_KEY_INVALID', "Admin keys are accepted on the main listener, not on the console's.");
  });
  await app.register(adminRoutes, { prefix: ADMIN_PREFIX, ...adminOptions(ctx, consoleCredential(ctx.console, url)) });
  await app.register(consoleRoutes, { console: ctx.console, url });
  return app;
}

/** The HTTP transport: thin routes over the flows in the context. */
export async function buildApp(ctx: ServiceContext, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = await baseApp(ctx, options, true);
  // The console on the main listener unless it has a listener of its own (then /admin is a 404 here).
  const consoleHere = ctx.config.console === undefined;
  const sessionCookie = sessionCookieName(ctx.config.issuer);
  // Every client's origins, read by the browser API's CORS and the OAuth endpoints' (token/cors.ts).
  const origins = registeredOrigins(ctx.clients, ctx.config.issuer);
  const sessionUser = async (cookieHeader: string | undefined) => {
    const session = cookieValue(cookieHeader, sessionCookie);
    return session ? (await ctx.oidc.session(session))?.userId : undefined;
  };
  const languages = createPageLanguages({
    locales: ctx.locales,
    issuer: ctx.config.issuer,
    savedLocale: async (cookieHeader) => {
      const userId = await sessionUser(cookieHeader);
      return userId ? ctx.enabledUsers.localeOfUser(userId) : undefined;
    },
  });
  const factorDeps = factorRouteDeps(ctx);
  await app.register(localeRoutes, {
    languages,
    issuer: ctx.config.issuer,
    saveChoice: async (cookieHeader, locale) => {
      const userId = await sessionUser(cookieHeader);
      if (userId) await ctx.enabledUsers.setLocale(userId, locale);
    },
  });

  await app.register(
    async (browser) => {
      const resolveClient = await browserClient(browser, {
        clients: ctx.clients,
        origins,
        issuer: ctx.config.issuer,
        hostedClientFor: (hosted, requestId) => ctx.oidc.hostedClientFor(hosted, requestId),
        displayNameOf: async (app) => (await ctx.branding.brandOf(app)).name,
      });
      recordSignInRefusals(browser, ctx.events);
      browser.get(BrowserPaths.client, { schema: ClientInfoSchema }, async (request) => ({
        clientId: request.client.id,
        name: request.client.name,
        issuer: ctx.config.issuer,
      }));
      await browser.register(signInStartRoutes, {
        signInStart: ctx.signInStart,
        testMode: ctx.config.testMode,
        resolveClient,
        mfaMethods: factorDeps.mfaMethods,
      });
      await browser.register(deviceRoutes, { devices: ctx.deviceService });
      await browser.register(mfaRoutes, { mfa: ctx.mfa, mfaMethods: factorDeps.mfaMethods });
      // Every factor's own routes, from the registry (factors/index.ts) and the caller's extraFactors.
      for (const factor of ctx.factors) if (factor.routes?.browser) await browser.register(factor.routes.browser, factorDeps);
    },
    { prefix: BROWSER_PREFIX },
  );
  await app.register(adminRoutes, {
    prefix: ADMIN_PREFIX,
    ...adminOptions(ctx, consoleHere ? consoleCredential(ctx.console, ctx.config.issuer) : undefined),
  });
  if (consoleHere) await app.register(consoleRoutes, { console: ctx.console, url: ctx.config.issuer });
  // Every wing's routes at the root (composition/wing.ts), in the composition's order.
  const http = { languages, origins };
  for (const wing of ctx.wings) if (wing.routes?.root) await app.register(wing.routes.root(http));
  for (const factor of ctx.factors) if (factor.routes?.root) await app.register(factor.routes.root, factorDeps);
  await app.register(sdkRoutes);
  // Liveness: the process answers. Readiness: it can also reach its database (load balancers
  // route only to ready nodes; a node stays alive while the database is down and recovers).
  app.get(Paths.health, { schema: { response: { 200: HealthAnswer } } }, async () => ({ status: 'ok' as const }));
  app.get(Paths.ready, { schema: { response: { 200: HealthAnswer, ...errorResponses(503) } } }, async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    if (await ctx.databaseReady()) return { status: 'ok' as const };
    const body: ErrorBody = { code: 'ERR_UNAVAILABLE', message: 'The database is unreachable.' };
    return reply.code(503).send(body);
  });
  return app;
}
