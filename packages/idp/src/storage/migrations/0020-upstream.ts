import type { Kysely, Migration } from 'kysely';

/** Upstream identity providers (issue 26). */
export const migrations0020: Record<string, Migration> = {};

// Issue 26: the operator's connections to upstream providers (secrets sealed), the identities
// linked to users by (connection, subject), and the email-code proofs a link to an existing
// account waits for (factors/upstream/).
migrations0020['0020_upstream'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('connections')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('preset', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('client_secret_sealed', 'text')
      .addColumn('scopes', 'text', (c) => c.notNull())
      .addColumn('client_ids', 'text', (c) => c.notNull().defaultTo('[]'))
      .addColumn('keep_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('apple_team_id', 'text')
      .addColumn('apple_key_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createTable('linked_identities')
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text')
      .addColumn('tokens_sealed', 'text')
      .addColumn('linked_at', 'bigint', (c) => c.notNull())
      .addColumn('last_used_at', 'bigint')
      .addPrimaryKeyConstraint('linked_identities_pk', ['connection_id', 'subject'])
      .execute();
    await db.schema.createIndex('linked_identities_user').on('linked_identities').column('user_id').execute();
    await db.schema
      .createTable('upstream_link_proofs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('connection_id', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('email', 'text', (c) => c.notNull())
      .addColumn('tokens_sealed', 'text')
      .addColumn('code_challenge', 'text', (c) => c.notNull())
      .addColumn('otp_hash', 'text')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('upstream_link_proofs_expires').on('upstream_link_proofs').column('expires_at').execute();
  },
};
