import type { Kysely, Migration } from 'kysely';

/** Device Bound Session Credentials (issue 27). */
export const migrations0019: Record<string, Migration> = {};

// Issue 27: a service session may be bound to a browser-held key (W3C DBSC draft): the key's
// public JWK and the DBSC session identifier the browser names at refresh. Null: not bound
// (every session before this, and browsers without DBSC).
migrations0019['0019_dbsc'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('sign_in_sessions').addColumn('dbsc_jwk', 'text').execute();
    await db.schema.alterTable('sign_in_sessions').addColumn('dbsc_id', 'text').execute();
  },
};
