import { OAuthError } from '../errors.js';
import type { MachineCredentials } from './client-credentials-grant.js';

/**
 * RFC 6749 2.3.1: client_secret_basic (form-urlencoded id and secret) or client_secret_post, not
 * both; or `none`, client_id only, which only a public client may use.
 */
export function clientCredentials(authorization: string | undefined, body: { client_id?: string; client_secret?: string }) {
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

/**
 * A machine client's credentials at the token endpoint: a signed assertion (RFC 7523 2.2,
 * private_key_jwt; client_id optional beside it) or its secret key, as clientCredentials reads it.
 * One method only (RFC 6749 2.3).
 */
export function machineCredentials(
  authorization: string | undefined,
  body: { client_id?: string; client_secret?: string; client_assertion?: string; client_assertion_type?: string },
): MachineCredentials {
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined) {
    if (authorization?.startsWith('Basic ') || body.client_secret !== undefined)
      throw new OAuthError('invalid_request', 'Use one client authentication method, not two.');
    return { clientId: body.client_id, assertionType: body.client_assertion_type ?? '', assertion: body.client_assertion ?? '' };
  }
  const { clientId, clientSecret } = clientCredentials(authorization, body);
  if (clientSecret === undefined)
    throw new OAuthError('invalid_client', 'A machine client authenticates with its secret key or a client assertion.');
  return { clientId, clientSecret };
}
