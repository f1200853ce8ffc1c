import { type Kysely, type Migration, sql } from 'kysely';

/** External ids on users (issue 38: the model ready for SCIM, beside organizations' and memberships'). */
export const migrations0039: Record<string, Migration> = {};

// external_id: the id a provisioning system (SCIM) knows the user by; one user per id.
migrations0039['0039_user_external_ids'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('users').addColumn('external_id', 'text').execute();
    await sql`create unique index users_external_id on users (external_id) where external_id is not null`.execute(db);
  },
};
