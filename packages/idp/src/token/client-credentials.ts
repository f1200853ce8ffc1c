import { OAuthError } from '../errors.js';

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
