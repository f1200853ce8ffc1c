import type { OperatorRole } from 'service-protocol';
import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Db } from '../storage/schema.js';

/** A person allowed into the operator console. */
export interface OperatorRecord {
  id: string;
  email: string;
  role: OperatorRole;
  createdAt: number;
  addedBy: string;
}

const toRecord = (row: { id: string; email: string; role: string; created_at: number; added_by: string }): OperatorRecord => ({
  id: row.id,
  email: row.email,
  role: row.role === 'admin' ? 'admin' : 'viewer',
  createdAt: Number(row.created_at),
  addedBy: row.added_by,
});

const toRow = (operator: OperatorRecord) => ({
  id: operator.id,
  email: operator.email,
  role: operator.role,
  created_at: operator.createdAt,
  added_by: operator.addedBy,
});

/** Operators: an address and a role each. */
export function createOperatorStore(db: Db) {
  return {
    /** Adds the operator, or changes the role of the one with this address; the row as it now is. */
    async upsert(operator: OperatorRecord): Promise<OperatorRecord> {
      await db
        .insertInto('operators')
        .values(toRow(operator))
        .onConflict((oc) => oc.column('email').doUpdateSet({ role: operator.role }))
        .execute();
      return (await this.findByEmail(operator.email)) as OperatorRecord;
    },

    async findByEmail(email: string): Promise<OperatorRecord | undefined> {
      const row = await db.selectFrom('operators').selectAll().where('email', '=', email).executeTakeFirst();
      return row && toRecord(row);
    },

    async findById(id: string): Promise<OperatorRecord | undefined> {
      const row = await db.selectFrom('operators').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    async list(): Promise<OperatorRecord[]> {
      return (await db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },

    async page(after: PageStart, limit: number): Promise<OperatorRecord[]> {
      let query = db.selectFrom('operators').selectAll().orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return (await query.execute()).map(toRecord);
    },

    /** The removed operator, if there was one with this id or address; their console sessions end in the same transaction. */
    async remove(key: string, now: number): Promise<OperatorRecord | undefined> {
      return db.transaction().execute(async (tx) => {
        const row = await tx
          .selectFrom('operators')
          .selectAll()
          .where((eb) => eb.or([eb('id', '=', key), eb('email', '=', key)]))
          .executeTakeFirst();
        if (!row) return undefined;
        await tx.deleteFrom('operators').where('id', '=', row.id).execute();
        await tx
          .updateTable('console_sessions')
          .set({ ended_at: now })
          .where('operator_id', '=', row.id)
          .where('ended_at', 'is', null)
          .execute();
        return toRecord(row);
      });
    },
  };
}

export type OperatorStore = ReturnType<typeof createOperatorStore>;
