/**
 * Adapters of verifyAccessToken for a resource server: one for any request object, one Express
 * middleware, one Fastify preHandler. Typed structurally: no dependency on either framework.
 */
import {
  type AccessTokenDpopOptions,
  challenge,
  type VerifiedAccessToken,
  type VerifyAccessTokenOptions,
  verifyAccessToken,
} from './access-token.js';
import { DPOP_ALGORITHMS } from './defaults.js';
import { AccessTokenError, DPoPVerificationError, JWTVerificationError } from './errors.js';

/**
 * What the adapters read of a request: Node's `IncomingMessage`, Express's and Fastify's
 * requests, and the Fetch API's `Request` all fit.
 */
export interface AccessTokenRequest {
  method?: string | undefined;
  /** A path (Node, Express, Fastify: then give `origin`) or an absolute URL (Fetch `Request`). */
  url?: string | undefined;
  /** Express: the URL before a router stripped its mount path; preferred over `url`. */
  originalUrl?: string | undefined;
  headers: { get(name: string): string | null } | { readonly [name: string]: string | string[] | undefined };
}

/** Options of the adapters: those of {@link verifyAccessToken} but `dpop`, which they read from the request. */
export interface AccessTokenRequestOptions extends Omit<VerifyAccessTokenOptions, 'dpop'> {
  /**
   * Your API's public origin (`https://api.example.com`): a DPoP proof's `htu` is checked
   * against it and the request's path. Required unless the request's `url` is absolute. Behind
   * a proxy, the origin clients call, never one read from the request's `Host`.
   */
  origin?: string;
  /**
   * Server nonces (RFC 9449 9): the nonces accepted now, current first (it is sent as
   * `DPoP-Nonce` when a proof lacks it), or a function giving them on each request.
   */
  nonce?: string | readonly string[] | (() => string | readonly string[]);
  /** The DPoP replay store, as {@link VerifyDpopRequestOptions.isFirstUse}. */
  isFirstUse?: AccessTokenDpopOptions['isFirstUse'];
  /** Allowed DPoP proof algorithms. */
  dpopAlgorithms?: string[];
}

/** The answer to a refused request: status, headers and an RFC 6750-style JSON body. */
export interface AccessTokenRefusal {
  status: 401 | 403 | 503;
  headers: Record<string, string>;
  body: { error?: string; error_description: string };
}

function header(request: AccessTokenRequest, name: string): string | string[] | undefined {
  const { headers } = request;
  if (typeof headers.get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  return (headers as Record<string, string | string[] | undefined>)[name];
}

function nonceList(option: AccessTokenRequestOptions['nonce']): string[] | undefined {
  const value = typeof option === 'function' ? option() : option;
  if (value === undefined) return undefined;
  return typeof value === 'string' ? [value] : [...value];
}

/**
 * Verifies the access token of a request (`Authorization: Bearer <token>`, or `DPoP <token>`
 * with its `DPoP` proof) with {@link verifyAccessToken}. Works with any framework's request.
 *
 * @throws {@link AccessTokenError} `ERR_ACCESS_TOKEN_MISSING` when there is no token, or as verifyAccessToken
 * @throws {@link DPoPVerificationError} and {@link JWTVerificationError} as verifyAccessToken
 *
 * @example
 * ```ts
 * const { claims } = await verifyAccessTokenRequest(req, {
 *   issuer: 'https://idp.example.com',
 *   audience: 'https://api.example.com',
 *   origin: 'https://api.example.com',
 * });
 * ```
 */
export async function verifyAccessTokenRequest(
  request: AccessTokenRequest,
  options: AccessTokenRequestOptions,
): Promise<VerifiedAccessToken> {
  const { origin, nonce, isFirstUse, dpopAlgorithms, ...verifyOptions } = options;
  const path = request.originalUrl ?? request.url ?? '/';
  let url: URL;
  try {
    url = origin === undefined ? new URL(path) : new URL(path, origin);
  } catch {
    throw new TypeError('origin is required when the request URL is a path');
  }
  const authorization = header(request, 'authorization');
  const match = typeof authorization === 'string' ? /^(Bearer|DPoP) +(\S+)$/i.exec(authorization) : null;
  if (!match) {
    const algs = dpopAlgorithms ?? [...DPOP_ALGORITHMS];
    // RFC 6750 3.1: no error code when no credentials were sent; RFC 9449 7.1: both schemes offered.
    throw new AccessTokenError('Send an access token.', {
      code: 'ERR_ACCESS_TOKEN_MISSING',
      challenge: `Bearer, ${challenge('DPoP', undefined, undefined, algs)}`,
    });
  }
  const token = match[2] as string;
  if ((match[1] as string).toLowerCase() === 'bearer') return verifyAccessToken(token, verifyOptions);
  const nonces = nonceList(nonce);
  return verifyAccessToken(token, {
    ...verifyOptions,
    dpop: {
      method: request.method ?? 'GET',
      url,
      proof: header(request, 'dpop'),
      ...(nonces === undefined ? {} : { nonce: nonces }),
      ...(isFirstUse === undefined ? {} : { isFirstUse }),
      ...(dpopAlgorithms === undefined ? {} : { algorithms: dpopAlgorithms }),
    },
  });
}

/**
 * The answer to give for an error of verifyAccessToken or its adapters: 401 or 403 with the
 * `WWW-Authenticate` challenge (and `DPoP-Nonce` when the proof lacked the nonce), 503 when
 * the service's key set cannot be fetched; `undefined` for any other error (yours to handle).
 *
 * @example
 * ```ts
 * const refusal = accessTokenRefusal(err);
 * if (refusal) return new Response(JSON.stringify(refusal.body), { status: refusal.status, headers: refusal.headers });
 * ```
 */
export function accessTokenRefusal(
  error: unknown,
  options: { nonce?: AccessTokenRequestOptions['nonce'] } = {},
): AccessTokenRefusal | undefined {
  if (error instanceof AccessTokenError || error instanceof DPoPVerificationError) {
    const headers: Record<string, string> = { 'www-authenticate': error.challenge };
    const current = nonceList(options.nonce)?.[0];
    if (error.code === 'ERR_DPOP_NONCE_REQUIRED' && current !== undefined) headers['dpop-nonce'] = current;
    const body =
      error.error === undefined ? { error_description: error.message } : { error: error.error, error_description: error.message };
    return { status: error.status, headers, body };
  }
  if (error instanceof JWTVerificationError && error.code === 'ERR_JWKS_UNAVAILABLE') {
    return { status: 503, headers: { 'retry-after': '30' }, body: { error_description: 'The token issuer`s keys are unavailable.' } };
  }
  return undefined;
}

/** What the Express middleware needs of a response. */
export interface ExpressLikeResponse {
  status(code: number): ExpressLikeResponse;
  set(headers: Record<string, string>): ExpressLikeResponse;
  json(body: unknown): unknown;
}

/**
 * Express middleware: verifies the request's access token and puts what was accepted on
 * `req.auth` ({@link VerifiedAccessToken}), or answers 401/403/503 with the challenge. Other
 * errors go to `next`.
 *
 * @example
 * ```ts
 * app.get('/notes', accessTokenMiddleware({ issuer, audience, origin, requiredScopes: ['read:notes'] }), (req, res) =>
 *   res.json(notesOf(req.auth.claims.sub)),
 * );
 * ```
 */
export function accessTokenMiddleware(
  options: AccessTokenRequestOptions,
): (req: AccessTokenRequest & { auth?: VerifiedAccessToken }, res: ExpressLikeResponse, next: (error?: unknown) => void) => void {
  return (req, res, next) => {
    verifyAccessTokenRequest(req, options).then(
      (verified) => {
        req.auth = verified;
        next();
      },
      (error: unknown) => {
        const refusal = accessTokenRefusal(error, options);
        if (refusal === undefined) return next(error);
        res.status(refusal.status).set(refusal.headers).json(refusal.body);
      },
    );
  };
}

/** What the Fastify preHandler needs of a reply. */
export interface FastifyLikeReply {
  code(statusCode: number): FastifyLikeReply;
  headers(values: Record<string, string>): FastifyLikeReply;
  send(payload?: unknown): unknown;
}

/**
 * Fastify preHandler: verifies the request's access token and puts what was accepted on
 * `request.auth` ({@link VerifiedAccessToken}), or answers 401/403/503 with the challenge.
 * Other errors are thrown to Fastify's error handler.
 *
 * @example
 * ```ts
 * app.get('/notes', { preHandler: accessTokenPreHandler({ issuer, audience, origin, requiredScopes: ['read:notes'] }) }, (request) =>
 *   notesOf(request.auth.claims.sub),
 * );
 * ```
 */
export function accessTokenPreHandler(
  options: AccessTokenRequestOptions,
): (request: AccessTokenRequest & { auth?: VerifiedAccessToken }, reply: FastifyLikeReply) => Promise<unknown> {
  return async (request, reply) => {
    try {
      request.auth = await verifyAccessTokenRequest(request, options);
      return undefined;
    } catch (error) {
      const refusal = accessTokenRefusal(error, options);
      if (refusal === undefined) throw error;
      return reply.code(refusal.status).headers(refusal.headers).send(refusal.body);
    }
  };
}
