import type { Kysely, Migration } from 'kysely';

/** Roles in access tokens (issue 37). */
export const migrations0032: Record<string, Migration> = {};

// 1: the access tokens for this API also name the user's roles that grant any of its
// permissions (a `roles` claim), for APIs that decide by role; 0 (default): scope alone.
migrations0032['0032_roles_in_token'] = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable('apis')
      .addColumn('roles_in_token', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
