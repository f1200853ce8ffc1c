import type { Kysely, Migration } from 'kysely';

/** Clients that register themselves (issue 39: RFC 7591 and RFC 7592, client-registration/registration.ts). */
export const migrations0034: Record<string, Migration> = {};

// clients.registered 1: the client registered itself at /oauth/register (0 for every existing
// client); registration_token_hash: the keyed hash of its registration access token (RFC 7592),
// null for an operator's client; last_used_at: its last token request, for the sweep of
// registered clients left unused (null: never, counted from created_at). An initial access
// token (RFC 7591 3) an operator made is one client_registration_tokens row: its keyed hash,
// spent by the one registration it allows.
migrations0034['0034_client_registration'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('clients')
      .addColumn('registered', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('clients').addColumn('registration_token_hash', 'text').execute();
    await db.schema.alterTable('clients').addColumn('last_used_at', 'bigint').execute();
    await db.schema
      .createTable('client_registration_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
