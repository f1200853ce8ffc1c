import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import {
  ACCOUNT_PAGE_PATH,
  type BearerErrorBody,
  type ClientCredentialsTokenResponse,
  type DiscoveryDocument,
  type JsonWebKeySet,
  Paths,
  type RevocationResponse,
  type TokenResponse,
  type UserinfoResponse,
} from 'service-protocol';
import { Type } from 'typebox';
import {
  AUTHORIZE_PARAMETER_MAX_LENGTH,
  REDIRECT_URI_MAX_LENGTH,
  RESOURCES_PER_REQUEST_MAX,
  TOKEN_PARAMETER_MAX_LENGTH,
} from '../defaults.js';
import { DPOP_ALGS, DpopError, type DpopVerifier } from '../dpop/proof.js';
import { OAuthError } from '../errors.js';
import { errorResponses, OAuthErrorBodySchema, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { SIGNING_ALGS } from '../keys/algs.js';
import type { Keyring } from '../keys/keyring.js';
import { ACR_VALUES } from '../oidc/acr.js';
import { RESPONSE_MODES } from '../oidc/authorization-response.js';
import { PROMPT_VALUES } from '../oidc/authorize-request.js';
import { ASSERTION_ALGS } from './client-assertion.js';
import { clientCredentials, machineCredentials } from './client-credentials.js';
import type { ClientCredentials } from './client-credentials-grant.js';
import type { OAuthCors } from './cors.js';
import { presentedToken, resourceProof, tokenEndpointProof, userinfoRefusal } from './dpop.js';
import { INTROSPECTION_AUTH_METHODS } from './introspection-routes.js';
import { DEVICE_CODE_GRANT_TYPE, SCOPES_SUPPORTED, type TokenService } from './service.js';

/** RFC 6749 4.1.3 and 6; extra parameters are ignored as 3.2 requires, but each known one must be a single string. */
const TokenBody = Type.Object({
  grant_type: Type.String(),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  code_verifier: Type.Optional(Type.String({ maxLength: 200 })),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  refresh_token: Type.Optional(Type.String({ maxLength: 200 })),
  // RFC 8628 3.4: the device code of grant_type urn:ietf:params:oauth:grant-type:device_code.
  device_code: Type.Optional(Type.String({ maxLength: 200 })),
  scope: Type.Optional(Type.String({ maxLength: AUTHORIZE_PARAMETER_MAX_LENGTH })),
  // RFC 7523 2.2: a machine client's signed assertion (private_key_jwt).
  client_assertion_type: Type.Optional(Type.String({ maxLength: 200 })),
  client_assertion: Type.Optional(Type.String({ maxLength: TOKEN_PARAMETER_MAX_LENGTH })),
  // RFC 8707 2.2: the API the access token is for; sent twice it is an array, refused as invalid_target.
  resource: Type.Optional(
    Type.Union([
      Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH }),
      Type.Array(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH }), { maxItems: RESOURCES_PER_REQUEST_MAX }),
    ]),
  ),
  // organizations/: on a refresh, the organization this answer's tokens are for (the user must be its member).
  organization: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' })),
});

/** RFC 7009 2.1: the token, an optional hint, and the client's credentials as at the token endpoint. */
const RevocationBody = Type.Object({
  token: Type.Optional(Type.String({ maxLength: TOKEN_PARAMETER_MAX_LENGTH })),
  token_type_hint: Type.Optional(Type.String({ maxLength: 100 })),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
});

const TokenAnswer = wireBody<TokenResponse>()(
  Type.Object({
    access_token: Type.String(),
    token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')], {
      description: 'DPoP when the request carried a DPoP proof: the access token is bound to its key (RFC 9449 5)',
    }),
    expires_in: Type.Integer({ description: 'seconds' }),
    id_token: Type.String(),
    scope: Type.String(),
    refresh_token: Type.Optional(Type.String({ description: 'with offline_access, and on every refresh; each works once' })),
  }),
);
/** RFC 6749 4.4.3: a machine client's token, for one API; no ID token, no refresh token. */
const MachineTokenAnswer = wireBody<ClientCredentialsTokenResponse>()(
  Type.Object({
    access_token: Type.String({ description: 'an RFC 9068 JWT for the API named by resource' }),
    token_type: Type.Union([Type.Literal('Bearer'), Type.Literal('DPoP')]),
    expires_in: Type.Integer({ description: 'seconds' }),
    scope: Type.String({ description: 'the permissions the token carries' }),
  }),
);
/** RFC 7009 2.2: the status says it all; the body is an empty object. */
const RevocationAnswer = wireBody<RevocationResponse>()(
  Type.Record(Type.String(), Type.Never(), { description: 'revoked, or unknown (RFC 7009 2.2)' }),
);
const UserinfoAnswer = wireBody<UserinfoResponse>()(
  Type.Object({ sub: Type.String(), email: Type.String(), email_verified: Type.Literal(true) }),
);
const BearerError = wireBody<BearerErrorBody>()(
  Type.Object(
    {
      error: Type.Union([Type.Literal('invalid_token'), Type.Literal('invalid_dpop_proof'), Type.Literal('use_dpop_nonce')]),
      error_description: Type.String(),
    },
    { description: 'RFC 6750 3.1 error; RFC 9449 7.1 and 9 for a DPoP proof (use_dpop_nonce: retry with the DPoP-Nonce header)' },
  ),
);
/** RFC 7517 5; each key has its type's members (RSA n and e, EC crv x and y, OKP crv and x) and kid, alg, use. */
const JwksAnswer = wireBody<JsonWebKeySet>()(
  Type.Object({
    keys: Type.Array(
      Type.Object({
        kty: Type.String(),
        kid: Type.String(),
        alg: Type.String(),
        use: Type.String(),
        n: Type.Optional(Type.String()),
        e: Type.Optional(Type.String()),
        crv: Type.Optional(Type.String()),
        x: Type.Optional(Type.String()),
        y: Type.Optional(Type.String()),
      }),
    ),
  }),
);
const Strings = Type.Array(Type.String());
/** OpenID Connect Discovery 1.0 3: every member the service publishes (a new one is added to the protocol's type first). */
const DiscoveryAnswer = wireBody<DiscoveryDocument>()(
  Type.Object({
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    jwks_uri: Type.String(),
    userinfo_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    end_session_endpoint: Type.String(),
    account_url: Type.String(),
    response_types_supported: Strings,
    response_modes_supported: Strings,
    prompt_values_supported: Strings,
    authorization_response_iss_parameter_supported: Type.Boolean(),
    request_parameter_supported: Type.Boolean(),
    request_uri_parameter_supported: Type.Boolean(),
    grant_types_supported: Strings,
    subject_types_supported: Strings,
    id_token_signing_alg_values_supported: Strings,
    token_endpoint_auth_methods_supported: Strings,
    token_endpoint_auth_signing_alg_values_supported: Strings,
    revocation_endpoint_auth_methods_supported: Strings,
    introspection_endpoint: Type.String(),
    introspection_endpoint_auth_methods_supported: Strings,
    code_challenge_methods_supported: Strings,
    scopes_supported: Strings,
    claims_supported: Strings,
    acr_values_supported: Strings,
    dpop_signing_alg_values_supported: Strings,
    backchannel_logout_supported: Type.Boolean(),
    backchannel_logout_session_supported: Type.Boolean(),
    frontchannel_logout_supported: Type.Boolean(),
    frontchannel_logout_session_supported: Type.Boolean(),
    pushed_authorization_request_endpoint: Type.String(),
    device_authorization_endpoint: Type.String(),
    require_pushed_authorization_requests: Type.Boolean(),
    ui_locales_supported: Strings,
    claims_parameter_supported: Type.Boolean(),
    registration_endpoint: Type.Optional(Type.String()),
    client_id_metadata_document_supported: Type.Optional(Type.Boolean()),
    service_documentation: Type.Optional(Type.String()),
    op_policy_uri: Type.Optional(Type.String()),
    op_tos_uri: Type.Optional(Type.String()),
  }),
);

const TokenSchema = {
  body: TokenBody,
  // Refusals, a malformed body included, are RFC 6749 5.2 bodies; failures of the service itself stay `{ code, message }`.
  response: {
    200: Type.Union([TokenAnswer, MachineTokenAnswer]),
    400: OAuthErrorBodySchema,
    401: OAuthErrorBodySchema,
    ...errorResponses(...SERVER_ERRORS),
  },
};
const RevocationSchema = {
  body: RevocationBody,
  response: { 200: RevocationAnswer, 400: OAuthErrorBodySchema, 401: OAuthErrorBodySchema, ...errorResponses(...SERVER_ERRORS) },
};
const UserinfoSchema = { response: { 200: UserinfoAnswer, 401: BearerError, ...errorResponses(...SERVER_ERRORS) } };
const JwksSchema = { response: { 200: JwksAnswer, ...errorResponses(...SERVER_ERRORS) } };
const DiscoverySchema = { response: { 200: DiscoveryAnswer } };

export const tokenRoutes: FastifyPluginAsyncTypebox<{
  tokens: TokenService;
  keyring: Keyring;
  issuer: string;
  dpop: DpopVerifier;
  /** The hosted pages' languages (discovery's ui_locales_supported). */
  locales: readonly string[];
  /** The operator's documentation, policy and terms URLs (branding/service.ts settings), each null when not set. */
  settings: () => Promise<{ documentationUrl: string | null; policyUrl: string | null; termsUrl: string | null }>;
  /** CORS for single-page apps (token/cors.ts), built with the client service at the composition. */
  cors: (app: FastifyInstance) => OAuthCors;
  /** The client credentials grant for machine clients (token/client-credentials-grant.ts). */
  machines: ClientCredentials;
  /** Whether clients may register themselves (client-registration/registration.ts): the metadata then names the endpoint. */
  registration: boolean;
  /** Whether client_ids may be URLs of Client ID Metadata Documents (clients/metadata-document.ts): the metadata then says so. */
  metadataDocuments: boolean;
}> = async (app, { tokens, keyring, issuer, dpop, locales, settings, cors: openCors, machines, registration, metadataDocuments }) => {
  const cors = openCors(app);
  app.post(Paths.token, { schema: TokenSchema, config: { oauthErrors: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The token request must be application/x-www-form-urlencoded.');
    }
    const body = request.body;
    if (body.grant_type === 'refresh_token') {
      if (!body.refresh_token) throw new OAuthError('invalid_request', 'refresh_token is required.');
      const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
      await cors.checkPageClient(request, reply, clientId);
      const dpopJkt = await tokenEndpointProof(dpop, request, reply, Paths.token);
      return tokens.refresh({
        clientId,
        ...(clientSecret !== undefined ? { clientSecret } : {}),
        refreshToken: body.refresh_token,
        ...(body.scope !== undefined ? { scope: body.scope } : {}),
        ...(body.resource !== undefined ? { resource: body.resource } : {}),
        ...(body.organization !== undefined ? { organization: body.organization } : {}),
        ...(dpopJkt !== undefined ? { dpopJkt } : {}),
      });
    }
    if (body.grant_type === 'client_credentials') {
      // A machine's backend, never a page: no CORS answer. Its proof is checked before anything is issued.
      const dpopJkt = await tokenEndpointProof(dpop, request, reply, Paths.token);
      return machines.issue({
        credentials: machineCredentials(request.headers.authorization, body),
        ...(body.resource !== undefined ? { resource: body.resource } : {}),
        ...(body.scope !== undefined ? { scope: body.scope } : {}),
        ...(dpopJkt !== undefined ? { dpopJkt } : {}),
      });
    }
    if (body.grant_type === DEVICE_CODE_GRANT_TYPE) {
      if (!body.device_code) throw new OAuthError('invalid_request', 'device_code is required.');
      const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
      await cors.checkPageClient(request, reply, clientId);
      // Checked before the device code is looked at: a proof without the current nonce is retried with the same code (RFC 9449 8).
      const dpopJkt = await tokenEndpointProof(dpop, request, reply, Paths.token);
      return tokens.exchangeDeviceCode({
        clientId,
        ...(clientSecret !== undefined ? { clientSecret } : {}),
        deviceCode: body.device_code,
        ...(body.resource !== undefined ? { resource: body.resource } : {}),
        ...(dpopJkt !== undefined ? { dpopJkt } : {}),
      });
    }
    if (body.grant_type !== 'authorization_code')
      throw new OAuthError(
        'unsupported_grant_type',
        `Only authorization_code, refresh_token, client_credentials and ${DEVICE_CODE_GRANT_TYPE} are supported.`,
      );
    if (!body.code) throw new OAuthError('invalid_request', 'code is required.');
    const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
    await cors.checkPageClient(request, reply, clientId);
    // Checked before the code is spent: a proof without the current nonce is retried with the same code (RFC 9449 8).
    const dpopJkt = await tokenEndpointProof(dpop, request, reply, Paths.token);
    return tokens.exchangeCode({
      clientId,
      ...(clientSecret !== undefined ? { clientSecret } : {}),
      code: body.code,
      ...(body.redirect_uri !== undefined ? { redirectUri: body.redirect_uri } : {}),
      ...(body.code_verifier !== undefined ? { codeVerifier: body.code_verifier } : {}),
      ...(body.resource !== undefined ? { resource: body.resource } : {}),
      ...(dpopJkt !== undefined ? { dpopJkt } : {}),
    });
  });

  app.post(Paths.revocation, { schema: RevocationSchema, config: { oauthErrors: true } }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      throw new OAuthError('invalid_request', 'The revocation request must be application/x-www-form-urlencoded.');
    }
    const body = request.body;
    if (!body.token) throw new OAuthError('invalid_request', 'token is required.');
    const { clientId, clientSecret } = clientCredentials(request.headers.authorization, body);
    await cors.checkPageClient(request, reply, clientId);
    const dpopJkt = await tokenEndpointProof(dpop, request, reply, Paths.revocation);
    await tokens.revoke({
      clientId,
      ...(clientSecret !== undefined ? { clientSecret } : {}),
      token: body.token,
      ...(dpopJkt !== undefined ? { dpopJkt } : {}),
    });
    return {};
  });

  app.get(Paths.userinfo, { schema: UserinfoSchema }, async (request, reply) => {
    reply.header('cache-control', 'no-store').header('dpop-nonce', dpop.nonce());
    // RFC 6750 2.1 or RFC 9449 7.1: `Bearer <token>`, or `DPoP <token>` with a proof that covers it.
    const presented = presentedToken(request.headers.authorization);
    if (!presented) return userinfoRefusal(reply, 'Bearer', 'invalid_token', 'The access token is invalid or expired.');
    let dpopJkt: string | undefined;
    if (presented.scheme === 'DPoP') {
      const proof = await resourceProof(dpop, request, Paths.userinfo, presented.token);
      if (proof instanceof DpopError) return userinfoRefusal(reply, 'DPoP', proof.error, proof.message);
      dpopJkt = proof.jkt;
    }
    const answer = await tokens.userinfo(presented.token, dpopJkt);
    if (!answer) return userinfoRefusal(reply, presented.scheme, 'invalid_token', 'The access token is invalid or expired.');
    await cors.allowForClient(request, reply, answer.clientId);
    return answer.claims;
  });

  app.get(Paths.jwks, { schema: JwksSchema }, async (_request, reply) => {
    reply.header('cache-control', 'public, max-age=300');
    cors.publicDocument(reply);
    // The keyring publishes every key with kid, alg and use (keys/keyring.ts newKey); jose's JWK type leaves them optional.
    return (await keyring.jwks()) as JsonWebKeySet;
  });

  /** One document for OpenID Connect Discovery and RFC 8414 (whose members are the same registry). */
  const metadata = async (): Promise<DiscoveryDocument> => {
    const { documentationUrl, policyUrl, termsUrl } = await settings();
    return {
      issuer,
      authorization_endpoint: issuer + Paths.authorize,
      token_endpoint: issuer + Paths.token,
      jwks_uri: issuer + Paths.jwks,
      userinfo_endpoint: issuer + Paths.userinfo,
      revocation_endpoint: issuer + Paths.revocation,
      end_session_endpoint: issuer + Paths.endSession,
      account_url: issuer + ACCOUNT_PAGE_PATH,
      response_types_supported: ['code'],
      response_modes_supported: [...RESPONSE_MODES],
      prompt_values_supported: [...PROMPT_VALUES],
      // RFC 9207: every authorization response carries iss.
      authorization_response_iss_parameter_supported: true,
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT_TYPE],
      subject_types_supported: ['public'],
      id_token_signing_alg_values_supported: [...SIGNING_ALGS],
      // private_key_jwt: machine clients (client_credentials) that registered their keys.
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none', 'private_key_jwt'],
      token_endpoint_auth_signing_alg_values_supported: [...ASSERTION_ALGS],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      // RFC 7662 2.1: only a client that can authenticate may introspect (token/introspection-routes.ts), so not `none`.
      introspection_endpoint: issuer + Paths.introspection,
      introspection_endpoint_auth_methods_supported: [...INTROSPECTION_AUTH_METHODS],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: [...SCOPES_SUPPORTED],
      claims_supported: [
        'iss',
        'sub',
        'aud',
        'iat',
        'exp',
        'nbf',
        'auth_time',
        'jti',
        'email',
        'email_verified',
        'amr',
        'acr',
        'nonce',
        'sid',
        'org_id',
        'org_name',
        'org_roles',
      ],
      // OIDC Core 2: the values the ID token's acr takes (oidc/acr.ts); acr_values requests are voluntary and not needed.
      acr_values_supported: [...ACR_VALUES],
      dpop_signing_alg_values_supported: [...DPOP_ALGS],
      // OIDC Back-Channel Logout 1.0 2.1: every session's ID tokens carry `sid`, and its logout
      // tokens (oidc/backchannel-logout.ts) name it. Front-Channel Logout 1.0 3: the end-session
      // endpoint's signed-out page frames the apps' URIs, with iss and sid when a client asks.
      backchannel_logout_supported: true,
      backchannel_logout_session_supported: true,
      frontchannel_logout_supported: true,
      frontchannel_logout_session_supported: true,
      pushed_authorization_request_endpoint: issuer + Paths.pushedAuthorizationRequest,
      // RFC 8628 4: the device authorization grant (device-authorization/); each client is allowed it or not.
      device_authorization_endpoint: issuer + Paths.deviceAuthorization,
      // RFC 9126 6: not for every client; a client may be registered to require it (require_pushed_authorization_requests).
      require_pushed_authorization_requests: false,
      ui_locales_supported: [...locales],
      claims_parameter_supported: false,
      ...(registration ? { registration_endpoint: issuer + Paths.registration } : {}),
      ...(metadataDocuments ? { client_id_metadata_document_supported: true } : {}),
      ...(documentationUrl ? { service_documentation: documentationUrl } : {}),
      ...(policyUrl ? { op_policy_uri: policyUrl } : {}),
      ...(termsUrl ? { op_tos_uri: termsUrl } : {}),
    };
  };
  for (const path of [Paths.discovery, Paths.authorizationServerMetadata]) {
    app.get(path, { schema: DiscoverySchema }, async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      cors.publicDocument(reply);
      return metadata();
    });
  }
};
