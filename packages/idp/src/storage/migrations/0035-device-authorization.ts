import type { Kysely, Migration } from 'kysely';

/** The device authorization grant (issue 39: RFC 8628, device-authorization/). */
export const migrations0035: Record<string, Migration> = {};

// clients.device_code_grant 1: the client may use the device grant (an operator's choice, or a
// registered client that asked for urn:ietf:params:oauth:grant-type:device_code); 0 for every
// existing client. A device authorization is one device_authorizations row: the keyed hashes of
// its device code (the key) and user code, what the client asked, what the device declared, its
// polling state, and once the user answered, the decision and the sign-in that approved it.
migrations0035['0035_device_authorization'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('device_code_grant', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('device_authorizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('user_code_hash', 'text', (c) => c.notNull().unique())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('resources', 'text')
      .addColumn('device_name', 'text')
      .addColumn('requester_ip', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('interval_seconds', 'integer', (c) => c.notNull())
      .addColumn('last_polled_at', 'bigint')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('decided_at', 'bigint')
      .addColumn('user_id', 'text')
      .addColumn('device_id', 'text')
      .addColumn('amr', 'text')
      .addColumn('auth_time', 'bigint')
      .addColumn('sid', 'text')
      .execute();
    await db.schema.createIndex('device_authorizations_expires_at').on('device_authorizations').column('expires_at').execute();
  },
};
