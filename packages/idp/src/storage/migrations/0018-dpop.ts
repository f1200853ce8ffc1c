import type { Kysely, Migration } from 'kysely';

/** DPoP (issue 27). */
export const migrations0018: Record<string, Migration> = {};

// Issue 27: DPoP (RFC 9449). A client may require a proof on every token request (5.2
// dpop_bound_access_tokens; 0 for every existing client), and a public client's refresh
// token family is bound to the key of the proof its code exchange carried (5: null when
// none did, or for a confidential client, whose refresh tokens its secret already binds).
migrations0018['0018_dpop'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('dpop_bound_access_tokens', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('refresh_token_families').addColumn('dpop_jkt', 'text').execute();
  },
};
