import type { Kysely, Migration } from 'kysely';

/** Token introspection (issue 37, RFC 7662). */
export const migrations0029: Record<string, Migration> = {};

// RFC 7662 4: the client an API's resource server authenticates as at the introspection
// endpoint, which may learn about that API's tokens (null: only the client a token was issued
// to). And the grant behind an access token found by its jti: the code that issued it
// (auth_codes) or the refresh token whose rotation did (refresh_tokens), read at each introspection.
migrations0029['0029_introspection'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('apis').addColumn('resource_server_client_id', 'text').execute();
    await db.schema.createIndex('auth_codes_access_token').on('auth_codes').column('access_token_jti').execute();
    await db.schema.createIndex('refresh_tokens_access_token').on('refresh_tokens').column('access_token_jti').execute();
  },
};
