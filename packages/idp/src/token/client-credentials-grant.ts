import type { ClientCredentialsTokenResponse } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { randomToken } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { Keyring } from '../keys/keyring.js';
import { type ApiGrants, signApiAccessToken } from './api-access.js';
import { type ClientAssertions, JWT_BEARER_ASSERTION } from './client-assertion.js';

/** How a machine client authenticates at the token endpoint: its secret key, or a signed assertion (private_key_jwt). */
export type MachineCredentials =
  | { clientId: string; clientSecret: string }
  | { clientId: string | undefined; assertionType: string; assertion: string };

/** A client_credentials request (RFC 6749 4.4.2) with RFC 8707's `resource`. */
export interface ClientCredentialsGrant {
  credentials: MachineCredentials;
  /** The API the token is for (RFC 8707 2): required unless the client is granted permissions on one API only. */
  resource?: string | readonly string[];
  /** The permissions asked for; none: every one granted to the client on that API. */
  scope?: string;
  /** The JWK thumbprint of the request's valid DPoP proof: the token is bound to it (RFC 9449 5). */
  dpopJkt?: string;
}

/**
 * The client credentials grant (RFC 6749 4.4): a machine client gets an access token for itself,
 * for one registered API, carrying the permissions granted to the client (never a user's: it
 * has no user, no ID token and no refresh token, 4.4.3). RFC 9068 2.2: `sub` is the client.
 */
export function createClientCredentialsGrant(deps: {
  issuer: string;
  clients: Pick<ClientService, 'findById' | 'authenticateMachine' | 'authenticateTokenClient'>;
  assertions: ClientAssertions;
  apis: ApiGrants & { clientGrants(clientId: string): Promise<Array<{ api: string; permission: string }>> };
  keyring: Pick<Keyring, 'active'>;
  now: () => number;
}) {
  /** The machine client the credentials prove, or invalid_client (a web app or a public client is unauthorized_client). */
  async function authenticate(credentials: MachineCredentials): Promise<ClientRecord> {
    let client: ClientRecord | undefined;
    if ('clientSecret' in credentials) {
      client = await deps.clients.authenticateMachine(credentials.clientId, credentials.clientSecret);
      if (!client) {
        // A web app that proved its secret is told it may not use this grant; anyone else only that authentication failed.
        if (await deps.clients.authenticateTokenClient(credentials.clientId, credentials.clientSecret))
          throw new OAuthError('unauthorized_client', 'Only a machine client may use client_credentials.');
        throw new OAuthError('invalid_client', 'Client authentication failed.');
      }
      return client;
    }
    if (credentials.assertionType !== JWT_BEARER_ASSERTION)
      throw new OAuthError('invalid_client', `client_assertion_type must be ${JWT_BEARER_ASSERTION}.`);
    const clientId = credentials.clientId ?? issuerOf(credentials.assertion);
    client = clientId ? await deps.clients.findById(clientId) : undefined;
    if (!client || client.type !== 'machine') throw new OAuthError('invalid_client', 'Client authentication failed.');
    await deps.assertions.verify(credentials.assertion, client);
    return client;
  }

  return {
    authenticate,

    async issue(grant: ClientCredentialsGrant): Promise<ClientCredentialsTokenResponse> {
      const client = await authenticate(grant.credentials);
      if (client.dpopBoundAccessTokens && grant.dpopJkt === undefined)
        throw new OAuthError('invalid_dpop_proof', 'This client must send a DPoP proof with every token request.');
      const audience = await audienceFor(client.id, grant.resource);
      const granted = await deps.apis.clientPermissions(client.id, audience);
      const asked = grant.scope?.split(' ').filter((value) => value !== '');
      // RFC 6749 3.3: fewer than asked is granted and said in `scope`; a value the client was never granted is not an error.
      const permissions = asked === undefined || asked.length === 0 ? granted : granted.filter((p) => asked.includes(p));
      const iat = Math.floor(deps.now() / 1000);
      const accessToken = await signApiAccessToken(deps.keyring, {
        iss: deps.issuer,
        sub: client.id,
        aud: audience,
        client_id: client.id,
        scope: permissions.join(' '),
        iat,
        jti: randomToken('', 16),
        ...(grant.dpopJkt ? { cnf: { jkt: grant.dpopJkt } } : {}),
      });
      return {
        access_token: accessToken,
        token_type: grant.dpopJkt ? 'DPoP' : 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        scope: permissions.join(' '),
      };
    },
  };

  /** RFC 8707 2: the one API named, which must be registered; none named: the client's one API, if it has one. */
  async function audienceFor(clientId: string, resource: string | readonly string[] | undefined): Promise<string> {
    if (resource === undefined) {
      const apis = [...new Set((await deps.apis.clientGrants(clientId)).map((grant) => grant.api))];
      if (apis.length === 1) return apis[0] as string;
      throw new OAuthError('invalid_target', 'Name the API the token is for (resource).');
    }
    if (typeof resource !== 'string')
      throw new OAuthError('invalid_target', 'Name one resource per token request: each access token is for one API.');
    if (!(await deps.apis.findApi(resource))) throw new OAuthError('invalid_target', 'resource names no registered API.');
    return resource;
  }
}

export type ClientCredentials = ReturnType<typeof createClientCredentialsGrant>;

/** The `iss` of an unverified assertion: which client's keys to check it with (RFC 7523 3: iss is the client_id). */
function issuerOf(assertion: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8')) as { iss?: unknown };
    return typeof payload.iss === 'string' && payload.iss.length <= 200 ? payload.iss : undefined;
  } catch {
    return undefined;
  }
}
