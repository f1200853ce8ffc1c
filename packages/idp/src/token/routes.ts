import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { OAuthError } from '../errors.js';
import { type Keyring, SIGNING_ALGS } from '../keys/keyring.js';
import type { TokenService } from './service.js';

/** RFC 6749 4.1.3; extra parameters are ignored as 3.2 requires, but each known one must be a single string. */
const TokenBody = Type.Object({
  grant_type: Type.String(),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
});

/**
 * RFC 6749 2.3.1: client_secret_basic (form-urlencoded id and secret) or client_secret_post, not
 * both; or `none`, client_id only, which only a public client may use.
 */
function clientCredentials(authorization: string | undefined, body: { client_id?: string; client_secret?: string }) {
  if (authorization?.startsWith('Basic ')) {
    if (body.client_secret !== undefined) throw new OAuthError('invalid_request', 'Use one client authentication method, not two.');
    const decoded = Buffer.from(authorization.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    try {
      if (colon < 0) throw new URIError('no colon');
      return { clientId: decodeURIComponent(decoded.slice(0, colon)), clientSecret: decodeURIComponent(decoded.slice(colon + 1)) };
    } catch {
      throw new OAuthError('invalid_client', 'Malformed Basic credentials.');
    }
  }
  if (!body.client_id) throw new OAuthError('invalid_client', 'Client authentication is required.');
  // No secret: a public client identifies itself by client_id alone (RFC 6749 2.3.1, 3.2.1).
  return { clientId: body.client_id, clientSecret: body.client_secret };
}

export const tokenRoutes: FastifyPluginAsyncTypebox<{ tokens: TokenService; keyring: Keyring; issuer: string }> = async (
  app,
  { tokens, keyring, issuer },
) => {
  app.post(Paths.token, { schema: { body: TokenBody }, config: { oauthErrors: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The token request must be application/x-www-form-urlencoded.');
    }
    const body = request.body;
    if (body.grant_type !== 'authorization_code') throw new OAuthError('unsupported_grant_type', 'Only authorization_code is supported.');
    if (!body.code) throw new OAuthError('invalid_request', 'code is required.');
    const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
    return tokens.exchangeCode({
      clientId,
      ...(clientSecret !== undefined ? { clientSecret } : {}),
      code: body.code,
      ...(body.redirect_uri !== undefined ? { redirectUri: body.redirect_uri } : {}),
      ...(body.code_verifier !== undefined ? { codeVerifier: body.code_verifier } : {}),
    });
  });

  app.get(Paths.userinfo, async (request, reply) => {
    reply.header('cache-control', 'no-store');
    const header = request.headers.authorization;
    const claims = header?.startsWith('Bearer ') ? await tokens.userinfo(header.slice(7)) : undefined;
    if (!claims) {
      return reply
        .code(401)
        .header('www-authenticate', 'Bearer error="invalid_token"')
        .send({ error: 'invalid_token', error_description: 'The access token is invalid or expired.' });
    }
    return claims;
  });

  app.get(Paths.jwks, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return keyring.jwks();
  });

  app.get(Paths.discovery, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    return {
      issuer,
      authorization_endpoint: issuer + Paths.authorize,
      token_endpoint: issuer + Paths.token,
      jwks_uri: issuer + Paths.jwks,
      userinfo_endpoint: issuer + Paths.userinfo,
      response_types_supported: ['code'],
      response_modes_supported: ['query'],
      prompt_values_supported: ['none', 'login'],
      // RFC 9207: every authorization response carries iss.
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      grant_types_supported: ['authorization_code'],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...SIGNING_ALGS],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['openid', 'email'],
      claims_supported: ['iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'auth_time', 'jti', 'email', 'email_verified', 'amr', 'nonce'],
    };
  });
};
