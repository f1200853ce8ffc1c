import type { Kysely, Migration } from 'kysely';

export const migrations0007: Record<string, Migration> = {};

// Issue 12: a client may ask for ES256 or EdDSA ID tokens (OIDC Dynamic Client Registration
// `id_token_signed_response_alg`); existing clients keep RS256, the spec's default.
migrations0007['0007_id_token_alg'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('id_token_signed_response_alg', 'text', (c) => c.notNull().defaultTo('RS256'))
      .execute();
  },
};
