import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { OperatorRole } from 'service-protocol';
import { ServiceError } from '../errors.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { notFound } from '../http/error-handler.js';
import { checkQueryText } from '../storage/pagination.js';
import type { AdminKeyRecord } from './key-store.js';
import type { AdminKeys } from './keys.js';

/**
 * The operator console's session as an alternative to the admin key (console/, filled by the
 * composition): undefined when the request carries no console cookie; otherwise who acts and
 * their role, or a refusal (an ended session, a missing per-session token, another origin).
 */
export type ConsoleCredential = (request: FastifyRequest) => Promise<{ actor: string; role: OperatorRole } | undefined>;

/** The live admin key in `Authorization: Bearer …`, or the one 401 for a missing, malformed, unknown or revoked key. */
export async function adminKeyOf(adminKeys: AdminKeys, authorization: string | undefined): Promise<AdminKeyRecord> {
  const match = /^Bearer ([\x21-\x7e]{1,200})$/.exec(authorization ?? '');
  const key = await adminKeys.authenticate(match?.[1]);
  if (!key) throw new ServiceError('ERR_ADMIN_KEY_INVALID', 'A valid admin key is required.');
  return key;
}

/**
 * The admin API: what `service-idp users|devices|clients|events` do, over HTTP, for an admin
 * key in `Authorization: Bearer …` (or the console's session). Missing, unknown and revoked
 * keys get one 401; no CORS header is ever sent, so no browser page can read an answer. The
 * routes are the wings' groups (http/admin-routes.ts), each registered inside this credential hook.
 */
export const adminRoutes: FastifyPluginAsyncTypebox<{
  adminKeys: AdminKeys;
  /** The console session, when the console is served; admin keys only without it. */
  consoleCredential?: ConsoleCredential;
  /** Every wing's admin route groups, in the order the OpenAPI document lists them. */
  groups: readonly AdminRoutes[];
}> = async (app, { adminKeys, consoleCredential, groups }) => {
  app.decorateRequest('adminActor', '');
  // Every admin route is documented as taking the admin key, and the console's session where this listener takes it (http/openapi.ts).
  const security: Record<string, string[]>[] = consoleCredential ? [{ adminKey: [] }, { consoleSession: [] }] : [{ adminKey: [] }];
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, tags: ['admin'], security };
  });
  // The key first, before anything else is looked at: the query, the body, its media type or size.
  app.addHook('onRequest', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    // A machine's admin key whenever one is sent; otherwise the operator console's session, if any.
    const operator = request.headers.authorization === undefined ? await consoleCredential?.(request) : undefined;
    if (operator) {
      // A viewer reads: GET only, whatever the route.
      if (operator.role !== 'admin' && request.method !== 'GET' && request.method !== 'HEAD')
        throw new ServiceError('ERR_FORBIDDEN', 'A viewer cannot make changes; ask an admin operator.');
      request.adminActor = operator.actor;
      return;
    }
    request.adminActor = (await adminKeyOf(adminKeys, request.headers.authorization)).id;
  });
  // An unknown admin path or method also asks for the key first: without one, every path under
  // the prefix answers the same 401, so an anonymous caller cannot tell which routes exist.
  app.setNotFoundHandler(notFound);
  // After the key, before the schemas: one rule for every query parameter and path id of every
  // admin route (webhooks' included), so a control character gets a 400 naming it, not a query.
  app.addHook('preValidation', async (request) => {
    for (const source of [request.query, request.params] as unknown[]) {
      if (typeof source !== 'object' || source === null) continue;
      for (const [name, value] of Object.entries(source))
        for (const text of Array.isArray(value) ? value : [value]) if (typeof text === 'string') checkQueryText(name, text);
    }
  });
  for (const group of groups) await app.register(group);
};
