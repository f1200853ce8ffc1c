import type { Kysely, Migration } from 'kysely';

/** Machine clients (issue 37): client_credentials, private_key_jwt, and permissions granted to the client. */
export const migrations0030: Record<string, Migration> = {};

// A machine client (clients.client_type 'machine') authenticates by its secret key or, when it
// registered public keys (a JWKS inline or at a URI), by a signed assertion (RFC 7523
// private_key_jwt). What it may do is granted to it directly: (client, API, permission) rows
// in client_grants, owned by apis/ like role_permissions.
migrations0030['0030_machine_clients'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('clients').addColumn('jwks', 'text').execute();
    await db.schema.alterTable('clients').addColumn('jwks_uri', 'text').execute();
    await db.schema
      .createTable('client_grants')
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('api_id', 'text', (c) => c.notNull())
      .addColumn('permission', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('client_grants_pk', ['client_id', 'api_id', 'permission'])
      .execute();
    await db.schema.createIndex('client_grants_api').on('client_grants').columns(['api_id', 'permission']).execute();
  },
};
