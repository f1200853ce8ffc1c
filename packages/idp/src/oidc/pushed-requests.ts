import type { ClientRecord } from '../clients/store.js';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { PUSHED_REQUEST_TTL_SECONDS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { Db } from '../storage/schema.js';
import { checkAuthorizeRequest, type FindApi } from './authorize-request.js';

/** RFC 9126 2.2: the request_uri the client sends the browser with, a URN of the service's own. */
export const PUSHED_REQUEST_URI_PREFIX = 'urn:ietf:params:oauth:request_uri:';

/** RFC 9126 2.2's answer. */
export interface PushedRequest {
  request_uri: string;
  expires_in: number;
}

export interface PushedRequests {
  /**
   * Checks a client's authorization request as /authorize would (RFC 9126 2.1) and keeps it:
   * refused with the error /authorize would have redirected with, or invalid_request.
   */
  push(client: ClientRecord, params: Record<string, string>): Promise<PushedRequest>;
  /**
   * The pushed parameters behind `requestUri`, spent in one statement (RFC 9126 4: single use);
   * undefined when unknown, expired, already used, or pushed by another client than `clientId`.
   */
  take(clientId: string, requestUri: string): Promise<Record<string, string> | undefined>;
  sweep(at: number): Promise<void>;
}

/**
 * Pushed authorization requests (RFC 9126). Kept by the keyed hash of the request_uri's random
 * part, so a database reader cannot replay one; bound to the client that pushed it.
 */
export function createPushedRequests({
  db,
  hash,
  now,
  findApi,
}: {
  db: Db;
  hash: SecretHasher;
  now: () => number;
  /** The registered APIs a request's `resource` may name (RFC 8707). */
  findApi: FindApi;
}): PushedRequests {
  return {
    async push(client, params) {
      // RFC 9126 2.1: the request_uri parameter has no place in a pushed request, and the client_id must be the caller's.
      if (params.request_uri !== undefined) throw new OAuthError('invalid_request', 'A pushed request cannot itself carry request_uri.');
      if (params.client_id !== undefined && params.client_id !== client.id) {
        throw new OAuthError('invalid_request', 'client_id is not the authenticated client.');
      }
      const request = { ...params, client_id: client.id };
      // The request names the authenticated client (above): it is the only one to find.
      const checked = await checkAuthorizeRequest(request, async (id) => (id === client.id ? client : undefined), {
        pushed: true,
        findApi,
      });
      if (checked.kind === 'page') throw new OAuthError('invalid_request', checked.message);
      if (checked.kind === 'redirect-error') throw new OAuthError('invalid_request', `${checked.error}: ${checked.description}`);
      const value = randomToken('');
      const at = now();
      await db
        .insertInto('pushed_authorization_requests')
        .values({
          id: hash('pushed-authorization-request', value),
          client_id: client.id,
          params: JSON.stringify(request),
          created_at: at,
          expires_at: at + PUSHED_REQUEST_TTL_SECONDS * 1000,
          consumed_at: null,
        })
        .execute();
      return { request_uri: PUSHED_REQUEST_URI_PREFIX + value, expires_in: PUSHED_REQUEST_TTL_SECONDS };
    },

    async take(clientId, requestUri) {
      if (!requestUri.startsWith(PUSHED_REQUEST_URI_PREFIX) || requestUri.length > PUSHED_REQUEST_URI_PREFIX.length + 100) return undefined;
      const at = now();
      const row = await db
        .updateTable('pushed_authorization_requests')
        .set({ consumed_at: at })
        .where('id', '=', hash('pushed-authorization-request', requestUri.slice(PUSHED_REQUEST_URI_PREFIX.length)))
        .where('client_id', '=', clientId)
        .where('consumed_at', 'is', null)
        .where('expires_at', '>', at)
        .returning('params')
        .executeTakeFirst();
      return row && (JSON.parse(row.params) as Record<string, string>);
    },

    async sweep(at) {
      await db.deleteFrom('pushed_authorization_requests').where('expires_at', '<', at).execute();
    },
  };
}
