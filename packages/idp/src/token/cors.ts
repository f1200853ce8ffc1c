import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import type { ClientRecord } from '../clients/store.js';
import { OAuthError } from '../errors.js';

/** Public documents: any page may read them (they are what `fetch` of an OIDC client library starts with). */
const PUBLIC_DOCUMENTS = [Paths.discovery, Paths.authorizationServerMetadata, Paths.jwks] as const;
/** What a single-page app calls itself (issue 36): answered to a page only on an origin its client registered. */
const CLIENT_ENDPOINTS = [Paths.token, Paths.revocation, Paths.userinfo] as const;

/** How long a browser may reuse a preflight's answer (Chromium caps it at 7200 s). */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** A browser's own mechanism, not an operation of the API: left out of the OpenAPI document, as @fastify/cors leaves its own. */
const PreflightSchema = {
  hide: true,
  summary: 'CORS preflight',
  description:
    'Fetch standard CORS preflight. Discovery and the JWKS allow every origin; the token, revocation and userinfo endpoints answer with Access-Control-Allow-Origin only for an origin some client registered (the request itself is then checked against its own client).',
  response: { 204: Type.Null({ description: 'no body; the Access-Control-* headers say what the page may send' }) },
};

export interface OAuthCorsOptions {
  /** Whether any client registered `origin` (a preflight names no client, so it is checked against them all). */
  isRegistered: (origin: string) => Promise<boolean>;
  findClient: (clientId: string) => Promise<ClientRecord | undefined>;
}

export interface OAuthCors {
  /** Discovery and the JWKS: readable from any origin. */
  publicDocument(reply: FastifyReply): void;
  /**
   * The token and revocation endpoints, before anything is read or spent: a request from a page
   * (it carries an Origin) must come from an origin its client registered, and only a public
   * client belongs in a page: a confidential client's secret in a page is a secret no more.
   */
  checkPageClient(request: FastifyRequest, reply: FastifyReply, clientId: string): Promise<void>;
  /** Userinfo: the page may read the answer when the access token's client registered its origin. */
  allowForClient(request: FastifyRequest, reply: FastifyReply, clientId: string): Promise<void>;
}

/** The headers that let the page on `origin` read the answer; Vary, so no cache serves one origin's answer to another. */
function allow(reply: FastifyReply, origin: string): void {
  reply
    .header('access-control-allow-origin', origin)
    .header('vary', 'Origin')
    // The nonce (RFC 9449 8) and the refusal's scheme must reach a DPoP client in a page.
    .header('access-control-expose-headers', 'DPoP-Nonce, WWW-Authenticate');
}

/**
 * CORS for the OAuth endpoints a single-page app calls (OAuth 2.0 for Browser-Based Apps: a
 * public client with PKCE talks to the token endpoint itself). No credentials mode: these
 * endpoints take no cookie, so `Access-Control-Allow-Credentials` is never sent.
 */
export function oauthCors(app: FastifyInstance, { isRegistered, findClient }: OAuthCorsOptions): OAuthCors {
  for (const path of PUBLIC_DOCUMENTS) {
    app.options(path, { schema: PreflightSchema }, async (_request, reply) =>
      reply
        .code(204)
        .header('access-control-allow-origin', '*')
        .header('access-control-allow-methods', 'GET')
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
        .send(),
    );
  }
  for (const path of CLIENT_ENDPOINTS) {
    app.options(path, { schema: PreflightSchema }, async (request, reply) => {
      const origin = request.headers.origin;
      reply.header('vary', 'Origin');
      if (origin && (await isRegistered(origin))) {
        allow(reply, origin);
        reply
          .header('access-control-allow-methods', path === Paths.userinfo ? 'GET' : 'POST')
          .header('access-control-allow-headers', 'authorization, content-type, dpop')
          .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
      }
      return reply.code(204).send();
    });
  }
  return {
    publicDocument(reply) {
      reply.header('access-control-allow-origin', '*');
    },
    async checkPageClient(request, reply, clientId) {
      const origin = request.headers.origin;
      if (origin === undefined) return;
      const client = await findClient(clientId);
      if (!client?.origins.includes(origin)) {
        throw new OAuthError('invalid_client', 'This origin is not registered for the client.');
      }
      allow(reply, origin);
      if (client.type === 'confidential') {
        throw new OAuthError(
          'invalid_client',
          "A confidential client's secret never belongs in a page: call this endpoint from the application's backend, or register a public client (clients create --public) for a single-page app.",
        );
      }
    },
    async allowForClient(request, reply, clientId) {
      const origin = request.headers.origin;
      if (origin === undefined) return;
      const client = await findClient(clientId);
      if (client?.origins.includes(origin)) allow(reply, origin);
    },
  };
}
