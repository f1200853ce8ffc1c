import type { Kysely, Migration } from 'kysely';

export const migrations0005: Record<string, Migration> = {};

migrations0005['0005_mfa_change_current_factor'] = {
  async up(db: Kysely<unknown>) {
    // A change of method first proves the current factor: the method asked for waits here.
    await db.schema.alterTable('mfa_sessions').addColumn('change_to', 'text').execute();
  },
};
