import type { Kysely, Migration } from 'kysely';

/** Consent for third-party clients (issue 37). */
export const migrations0031: Record<string, Migration> = {};

// A third-party client (clients.third_party 1; 0 for every existing client, first-party as
// before) shows the user a consent page before its code is issued. What a user granted a client
// is one `consents` row (oidc/consent-store.ts): the OIDC scope values and the permissions with
// their API's identifier, merged at each Allow, deleted when the user revokes it. A request
// waiting on the consent page holds its sign-in on the pending request (held_* columns, as for
// the recovery codes) with the session's sid, marked by consent_pending so no other step finishes it.
migrations0031['0031_consent'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('third_party', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('consents')
      .addColumn('user_id', 'text', (c) => c.notNull())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('scope', 'text', (c) => c.notNull())
      .addColumn('permissions', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('consents_pk', ['user_id', 'client_id'])
      .execute();
    await db.schema.createIndex('consents_client').on('consents').column('client_id').execute();
    await db.schema.alterTable('authorization_requests').addColumn('consent_pending', 'integer').execute();
    await db.schema.alterTable('authorization_requests').addColumn('held_sid', 'text').execute();
  },
};
