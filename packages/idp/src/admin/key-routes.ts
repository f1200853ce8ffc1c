import type { AdminNewKey, AdminSigningKeyList } from 'service-protocol';
import { Type } from 'typebox';
import type { AdminRoutes } from '../http/admin-routes.js';
import { wireBody } from '../http/schemas.js';
import type { Keyring } from '../keys/keyring.js';
import type { AdminKeys } from './keys.js';
import type { Operations } from './operations.js';
import { AdminKey, AdminKeyList, bodyErrors, errors, Nullable, Page, pageOf, SigningKeyRotated, Time } from './schemas.js';

const NewKey = wireBody<AdminNewKey>()(
  Type.Object({ ...AdminKey.properties, key: Type.String({ description: 'admin_…: shown once, never again' }) }),
);
const SigningKeys = wireBody<AdminSigningKeyList>()(
  Type.Object({
    signingKeys: Type.Array(Type.Object({ kid: Type.String(), alg: Type.String(), createdAt: Time, retiredAt: Nullable(Time) })),
  }),
);

/** /admin/v1/admin-keys and /admin/v1/signing-keys: the service's own keys, listed, made, revoked and rotated. */
export const keyAdminRoutes =
  ({ adminKeys, keyring, operations }: { adminKeys: AdminKeys; keyring: Keyring; operations: Operations }): AdminRoutes =>
  async (app) => {
    app.post('/signing-keys/rotate', { schema: { response: { 200: SigningKeyRotated, ...errors } } }, async (request) => ({
      kid: await operations.rotateSigningKey(request.adminActor),
    }));

    app.get(
      '/admin-keys',
      { schema: { querystring: Type.Object(Page, { additionalProperties: false }), response: { 200: AdminKeyList, ...errors } } },
      async (request) => {
        const { items, nextCursor } = await adminKeys.page(pageOf(request.query));
        return { adminKeys: items, nextCursor };
      },
    );

    app.post(
      '/admin-keys',
      {
        schema: {
          body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
          response: { 201: NewKey, ...bodyErrors },
        },
      },
      async (request, reply) => reply.code(201).send(await adminKeys.create(request.body.name, request.adminActor)),
    );

    app.post(
      '/admin-keys/:id/revoke',
      {
        schema: {
          params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) }),
          response: { 204: Type.Null(), ...errors },
        },
      },
      async (request, reply) => {
        await adminKeys.revoke(request.params.id, request.adminActor);
        return reply.code(204).send(null);
      },
    );

    app.get('/signing-keys', { schema: { response: { 200: SigningKeys, ...errors } } }, async () => ({
      signingKeys: await keyring.list(),
    }));
  };
