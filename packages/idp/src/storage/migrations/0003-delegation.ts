import type { Kysely, Migration } from 'kysely';

export const migrations0003: Record<string, Migration> = {};

migrations0003['0003_delegation'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('client_users')
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('first_signed_in_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('client_users_pk', ['client_id', 'user_id'])
      .execute();
    await db.schema
      .createTable('delegation_idp_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('signing_private_sealed', 'text', (c) => c.notNull())
      .addColumn('signing_public_pem', 'text', (c) => c.notNull())
      .addColumn('encryption_private_sealed', 'text', (c) => c.notNull())
      .addColumn('encryption_public_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('delegation_sp_keys')
      .addColumn('client_id', 'text', (c) => c.primaryKey().references('clients.id'))
      .addColumn('verify_public_pem', 'text', (c) => c.notNull())
      .addColumn('encryption_public_pem', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('delegation_replay')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('delegation_replay_expires').on('delegation_replay').column('expires_at').execute();
  },
};
