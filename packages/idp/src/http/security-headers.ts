import type { FastifyInstance } from 'fastify';

/**
 * The headers of every answer, fixed at start: helmet 8's set for `contentSecurityPolicy: false,
 * crossOriginResourcePolicy: cross-origin` (the SDK script and the JWKS are read from other
 * origins; the hosted pages set their own CSP and `X-Frame-Options: DENY`), and the caching
 * rule of docs/protocol.md: nothing is stored by a cache unless its route says so (a route's
 * own `cache-control` replaces this one; the error handler sets `no-store` again).
 *
 * @fastify/helmet 13 ran helmet(options), parsing the options and building a dozen
 * middlewares, in two hooks on every request, for headers that never depend on the request
 * (no CSP nonces here); a test compares this set with the plugin's output.
 */
export const SECURITY_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'cross-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
} as const;

const DEFAULT_HEADERS = { ...SECURITY_HEADERS, 'cache-control': 'no-store' };

/** Sets SECURITY_HEADERS and the default `cache-control: no-store` on every answer, in one hook without a promise. */
export function securityHeaders(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(DEFAULT_HEADERS);
    done();
  });
}
