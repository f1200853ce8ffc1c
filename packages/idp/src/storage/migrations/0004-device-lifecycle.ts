import type { Kysely, Migration } from 'kysely';

export const migrations0004: Record<string, Migration> = {};

migrations0004['0004_device_lifecycle'] = {
  async up(db: Kysely<unknown>) {
    for (const column of ['name', 'browser', 'os']) {
      await db.schema.alterTable('devices').addColumn(column, 'text').execute();
    }
    await db.schema.alterTable('auth_codes').addColumn('device_id', 'text').execute();
    await db.schema
      .createTable('device_notice_spent')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('consumed_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('device_notice_spent_expires').on('device_notice_spent').column('expires_at').execute();
  },
};
