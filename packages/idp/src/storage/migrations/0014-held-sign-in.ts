import type { Kysely, Migration } from 'kysely';

export const migrations0014: Record<string, Migration> = {};

// Issue 15 on the hosted pages: a sign-in that issued recovery codes is held on its pending
// request (the hosted code redeemed at once) while the user copies them, then continued; and
// the sessions' user index for deleting a user.
migrations0014['0014_held_sign_in'] = {
  async up(db: Kysely<unknown>) {
    for (const [column, type] of [
      ['held_user_id', 'text'],
      ['held_device_id', 'text'],
      ['held_amr', 'text'],
      ['held_auth_time', 'bigint'],
    ] as const) {
      await db.schema.alterTable('authorization_requests').addColumn(column, type).execute();
    }
    await db.schema.createIndex('authorization_requests_held_user').on('authorization_requests').column('held_user_id').execute();
    // Deleting a user deletes their service sessions by user.
    await db.schema.createIndex('sign_in_sessions_user').on('sign_in_sessions').column('user_id').execute();
  },
};
