import type { Kysely, Migration } from 'kysely';

/** Issue 23: languages. */
export const migrations0017: Record<string, Migration> = {};

// Issue 23: the language a user chose on a hosted page while signed in (i18n/), for the mails
// sent without a browser and the pages of other browsers. Null: no choice saved.
migrations0017['0017_user_locale'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('users').addColumn('locale', 'text').execute();
  },
};
