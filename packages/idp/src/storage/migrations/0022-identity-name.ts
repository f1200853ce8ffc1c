import type { Kysely, Migration } from 'kysely';

/** The name an upstream provider gives (issue 26). */
export const migrations0022: Record<string, Migration> = {};

// Issue 26: the person's name as the provider gave it, kept with the linked identity (shown in
// the account center, the operator's lists and the export). Apple sends it on the first sign-in
// only, so a later sign-in without one keeps it; a link proof carries it until the code is in.
migrations0022['0022_identity_name'] = {
  async up(db: Kysely<unknown>) {
    await db.schema.alterTable('linked_identities').addColumn('name', 'text').execute();
    await db.schema.alterTable('upstream_link_proofs').addColumn('name', 'text').execute();
  },
};
