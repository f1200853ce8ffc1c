import type { Kysely, Migration } from 'kysely';

/** Access tokens for APIs (issue 37, RFC 8707 resource indicators). */
export const migrations0028: Record<string, Migration> = {};

// The APIs (by identifier, space-separated) an authorization request names with `resource`,
// carried by its code and the refresh token family the code starts, so each token for an API
// is limited to what the sign-in asked for. Null: no resource, the userinfo-only access token.
migrations0028['0028_resources'] = {
  async up(db: Kysely<unknown>) {
    for (const table of ['authorization_requests', 'auth_codes', 'refresh_token_families'])
      await db.schema.alterTable(table).addColumn('resources', 'text').execute();
  },
};
