import type { ConnectionPreset } from 'service-protocol';
import type { Db } from '../storage/schema.js';

/** A connection as stored; the secret still sealed. */
export interface ConnectionRecord {
  id: string;
  name: string;
  preset: ConnectionPreset;
  issuer: string;
  clientId: string;
  secretSealed: string | null;
  scopes: string[];
  clients: string[];
  keepTokens: boolean;
  appleTeamId: string | null;
  appleKeyId: string | null;
  createdAt: number;
  updatedAt: number;
}

type Row = Awaited<ReturnType<ReturnType<typeof rows>['executeTakeFirst']>>;
const rows = (db: Db) => db.selectFrom('connections').selectAll();

const toRecord = (row: NonNullable<Row>): ConnectionRecord => ({
  id: row.id,
  name: row.name,
  preset: row.preset as ConnectionPreset,
  issuer: row.issuer,
  clientId: row.client_id,
  secretSealed: row.client_secret_sealed,
  scopes: JSON.parse(row.scopes) as string[],
  clients: JSON.parse(row.client_ids) as string[],
  keepTokens: row.keep_tokens === 1,
  appleTeamId: row.apple_team_id,
  appleKeyId: row.apple_key_id,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

const toRow = (c: ConnectionRecord) => ({
  id: c.id,
  name: c.name,
  preset: c.preset,
  issuer: c.issuer,
  client_id: c.clientId,
  client_secret_sealed: c.secretSealed,
  scopes: JSON.stringify(c.scopes),
  client_ids: JSON.stringify(c.clients),
  keep_tokens: c.keepTokens ? 1 : 0,
  apple_team_id: c.appleTeamId,
  apple_key_id: c.appleKeyId,
  created_at: c.createdAt,
  updated_at: c.updatedAt,
});

/** The operator's connections to upstream identity providers (connections/service.ts). */
export function createConnectionStore(db: Db) {
  return {
    async insert(connection: ConnectionRecord): Promise<boolean> {
      const inserted = await db
        .insertInto('connections')
        .values(toRow(connection))
        .onConflict((oc) => oc.column('id').doNothing())
        .returning('id')
        .executeTakeFirst();
      return inserted !== undefined;
    },
    async update(connection: ConnectionRecord): Promise<void> {
      const { id, created_at: _, ...rest } = toRow(connection);
      await db.updateTable('connections').set(rest).where('id', '=', id).execute();
    },
    async find(id: string): Promise<ConnectionRecord | undefined> {
      const row = await rows(db).where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },
    async list(): Promise<ConnectionRecord[]> {
      return (await rows(db).orderBy('created_at').orderBy('id').execute()).map(toRecord);
    },
    async delete(id: string): Promise<boolean> {
      const deleted = await db.deleteFrom('connections').where('id', '=', id).returning('id').executeTakeFirst();
      return deleted !== undefined;
    },
  };
}

export type ConnectionStore = ReturnType<typeof createConnectionStore>;
