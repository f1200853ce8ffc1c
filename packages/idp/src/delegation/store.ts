import type { Db } from '../storage/schema.js';

export interface IdpKeyRow {
  signingPrivateSealed: string;
  signingPublicPem: string;
  encryptionPrivateSealed: string;
  encryptionPublicPem: string;
}

export interface SpKeyRow {
  verifyPublicPem: string;
  encryptionPublicPem: string;
}

/** The service's delegation keys and each service provider's public keys (request ids are spent in spent-tokens/). */
export function createDelegationStore(db: Db) {
  return {
    async idpKeys(): Promise<IdpKeyRow | undefined> {
      const row = await db.selectFrom('delegation_idp_keys').selectAll().where('id', '=', 'idp').executeTakeFirst();
      return (
        row && {
          signingPrivateSealed: row.signing_private_sealed,
          signingPublicPem: row.signing_public_pem,
          encryptionPrivateSealed: row.encryption_private_sealed,
          encryptionPublicPem: row.encryption_public_pem,
        }
      );
    },

    /** Stores the service's keys unless another process stored them first; returns the stored ones. */
    async insertIdpKeys(keys: IdpKeyRow, now: number): Promise<IdpKeyRow> {
      await db
        .insertInto('delegation_idp_keys')
        .values({
          id: 'idp',
          signing_private_sealed: keys.signingPrivateSealed,
          signing_public_pem: keys.signingPublicPem,
          encryption_private_sealed: keys.encryptionPrivateSealed,
          encryption_public_pem: keys.encryptionPublicPem,
          created_at: now,
        })
        .onConflict((oc) => oc.column('id').doNothing())
        .execute();
      return (await this.idpKeys()) as IdpKeyRow;
    },

    async spKeys(clientId: string): Promise<SpKeyRow | undefined> {
      const row = await db.selectFrom('delegation_sp_keys').selectAll().where('client_id', '=', clientId).executeTakeFirst();
      return row && { verifyPublicPem: row.verify_public_pem, encryptionPublicPem: row.encryption_public_pem };
    },

    /** Sets (or replaces: key rotation) a service provider's public keys. */
    async setSpKeys(clientId: string, keys: SpKeyRow, now: number): Promise<void> {
      const values = { verify_public_pem: keys.verifyPublicPem, encryption_public_pem: keys.encryptionPublicPem, created_at: now };
      await db
        .insertInto('delegation_sp_keys')
        .values({ client_id: clientId, ...values })
        .onConflict((oc) => oc.column('client_id').doUpdateSet(values))
        .execute();
    },
  };
}

export type DelegationStore = ReturnType<typeof createDelegationStore>;
