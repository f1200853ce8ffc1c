import type { Kysely, Migration } from 'kysely';

/** How the authorization response reaches the client (issue 36). */
export const migrations0023: Record<string, Migration> = {};

// OAuth 2.0 Form Post Response Mode: a pending request remembers whether its code goes back in
// the query (null, the default) or as an auto-submitted form (`form_post`).
migrations0023['0023_response_mode'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('authorization_requests').addColumn('response_mode', 'text').execute();
  },
};
