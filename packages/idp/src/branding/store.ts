import type { Database, Db } from '../storage/schema.js';

type BrandingRow = Database['client_branding'];

/** An application's branding without its logo's bytes (what pages and mails read). */
export type BrandingFields = Omit<BrandingRow, 'logo_base64' | 'updated_at'>;

/** The columns an update writes: undefined leaves one as it is, null clears it. */
export type BrandingWrite = Partial<Omit<BrandingRow, 'client_id' | 'updated_at'>>;

const FIELDS = [
  'client_id',
  'display_name',
  'accent',
  'terms_url',
  'privacy_url',
  'mail_sender_name',
  'logo_type',
  'logo_sha256',
] as const satisfies readonly (keyof BrandingRow)[];

/** The settings and client_branding tables (storage/schema/operations.ts). */
export function createBrandingStore(db: Db) {
  return {
    async setting(name: string): Promise<string | undefined> {
      const row = await db.selectFrom('settings').select('value').where('name', '=', name).executeTakeFirst();
      return row?.value;
    },

    async deleteSetting(name: string): Promise<void> {
      await db.deleteFrom('settings').where('name', '=', name).execute();
    },

    async putSetting(name: string, value: string, now: number): Promise<void> {
      await db
        .insertInto('settings')
        .values({ name, value, updated_at: now })
        .onConflict((oc) => oc.column('name').doUpdateSet({ value, updated_at: now }))
        .execute();
    },

    async find(clientId: string): Promise<BrandingFields | undefined> {
      return db.selectFrom('client_branding').select(FIELDS).where('client_id', '=', clientId).executeTakeFirst();
    },

    /** One statement: every column of the change, or none (a refused change never reaches here). */
    async write(clientId: string, change: BrandingWrite, now: number): Promise<void> {
      const empty = {
        display_name: null,
        accent: null,
        terms_url: null,
        privacy_url: null,
        mail_sender_name: null,
        logo_base64: null,
        logo_type: null,
        logo_sha256: null,
      };
      await db
        .insertInto('client_branding')
        .values({ ...empty, ...change, client_id: clientId, updated_at: now })
        .onConflict((oc) => oc.column('client_id').doUpdateSet({ ...change, updated_at: now }))
        .execute();
    },

    /** A logo by its content hash: the bytes (base64) and their type. */
    async logo(sha256: string): Promise<{ base64: string; type: string } | undefined> {
      const row = await db
        .selectFrom('client_branding')
        .select(['logo_base64', 'logo_type'])
        .where('logo_sha256', '=', sha256)
        .executeTakeFirst();
      return row?.logo_base64 && row.logo_type ? { base64: row.logo_base64, type: row.logo_type } : undefined;
    },
  };
}

export type BrandingStore = ReturnType<typeof createBrandingStore>;
