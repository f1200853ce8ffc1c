import type { Kysely, Migration } from 'kysely';

/** Pushed authorization requests (issue 36). */
export const migrations0024: Record<string, Migration> = {};

// RFC 9126: a client pushes its authorization request to the service first and sends the
// browser with the request_uri alone. The request is kept by the keyed hash of that URI's
// random part, single-use and short-lived (oidc/pushed-requests.ts); a client may be made to
// push every request (require_pushed_authorization_requests; 0 for every existing client).
migrations0024['0024_pushed_authorization_requests'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .createTable('pushed_authorization_requests')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('client_id', 'text', (c) => c.notNull())
      .addColumn('params', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint')
      .execute();
    await db.schema
      .alterTable('clients')
      .addColumn('require_pushed_authorization_requests', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
