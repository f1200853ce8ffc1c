import { isForeignKeyViolation, isUniqueViolation } from '../storage/database.js';
import type { Database, Db } from '../storage/schema.js';

/** A claim as the store holds it. */
export interface DomainClaim {
  organizationId: string;
  domain: string;
  verificationToken: string;
  verifiedAt: number | null;
  verifiedBy: string | null;
  connectionId: string | null;
  allowEmailCode: boolean;
  joinRole: string | null;
  createdAt: number;
  updatedAt: number;
}

/** How a verified domain's addresses sign in. */
export interface DomainRoute {
  organizationId: string;
  domain: string;
  connectionId: string | null;
  allowEmailCode: boolean;
  joinRole: string | null;
}

export type ClaimChange = Partial<Pick<DomainClaim, 'connectionId' | 'allowEmailCode' | 'joinRole'>>;

type Row = Database['organization_domains'];

const claimOf = (row: Row): DomainClaim => ({
  organizationId: row.organization_id,
  domain: row.domain,
  verificationToken: row.verification_token,
  verifiedAt: row.verified_at === null ? null : Number(row.verified_at),
  verifiedBy: row.verified_by,
  connectionId: row.connection_id,
  allowEmailCode: Number(row.allow_email_code) !== 0,
  joinRole: row.join_role,
  createdAt: Number(row.created_at),
  updatedAt: Number(row.updated_at),
});

/**
 * The organization_domains table (organization-domains/). A claim names its organization and
 * its connection by foreign key, so one made for an organization or a connection that does
 * not exist (or was deleted meanwhile) is refused by the database itself, on SQLite and
 * PostgreSQL alike; the unique index on verified domains settles two organizations verifying
 * one domain at once.
 */
export function createDomainStore(db: Db) {
  const claims = () => db.selectFrom('organization_domains').selectAll();

  return {
    /** 'no organization' when the organization does not exist; 'claimed' when it claims the domain already; 'too many' past `max`. */
    async insert(claim: DomainClaim, max: number): Promise<'inserted' | 'claimed' | 'no organization' | 'too many'> {
      try {
        return await db.transaction().execute(async (tx) => {
          const { count } = await tx
            .selectFrom('organization_domains')
            .select((eb) => eb.fn.countAll<number>().as('count'))
            .where('organization_id', '=', claim.organizationId)
            .executeTakeFirstOrThrow();
          if (Number(count) >= max) return 'too many';
          const inserted = await tx
            .insertInto('organization_domains')
            .values({
              organization_id: claim.organizationId,
              domain: claim.domain,
              verification_token: claim.verificationToken,
              verified_at: null,
              verified_by: null,
              connection_id: null,
              allow_email_code: 0,
              join_role: null,
              created_at: claim.createdAt,
              updated_at: claim.updatedAt,
            })
            .onConflict((oc) => oc.columns(['organization_id', 'domain']).doNothing())
            .executeTakeFirst();
          return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0 ? 'claimed' : 'inserted';
        });
      } catch (error) {
        if (isForeignKeyViolation(error)) return 'no organization';
        throw error;
      }
    },

    async list(organizationId: string): Promise<DomainClaim[]> {
      const rows = await claims().where('organization_id', '=', organizationId).orderBy('domain').execute();
      return rows.map(claimOf);
    },

    async get(organizationId: string, domain: string): Promise<DomainClaim | undefined> {
      const row = await claims().where('organization_id', '=', organizationId).where('domain', '=', domain).executeTakeFirst();
      return row ? claimOf(row) : undefined;
    },

    /** 'taken' when another organization holds the domain verified (the unique index: also when it won a race). */
    async markVerified(organizationId: string, domain: string, by: string, at: number): Promise<'verified' | 'taken' | 'gone'> {
      try {
        const updated = await db
          .updateTable('organization_domains')
          .set({ verified_at: at, verified_by: by, updated_at: at })
          .where('organization_id', '=', organizationId)
          .where('domain', '=', domain)
          .where('verified_at', 'is', null)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) > 0) return 'verified';
        const now = await this.get(organizationId, domain);
        return now?.verifiedAt ? 'verified' : 'gone';
      } catch (error) {
        if (isUniqueViolation(error)) return 'taken';
        throw error;
      }
    },

    /** 'no connection' when the change names a connection that does not exist. */
    async update(organizationId: string, domain: string, change: ClaimChange, at: number): Promise<'updated' | 'gone' | 'no connection'> {
      try {
        const updated = await db
          .updateTable('organization_domains')
          .set({
            updated_at: at,
            ...(change.connectionId !== undefined ? { connection_id: change.connectionId } : {}),
            ...(change.allowEmailCode !== undefined ? { allow_email_code: change.allowEmailCode ? 1 : 0 } : {}),
            ...(change.joinRole !== undefined ? { join_role: change.joinRole } : {}),
          })
          .where('organization_id', '=', organizationId)
          .where('domain', '=', domain)
          .executeTakeFirst();
        return Number(updated.numUpdatedRows) > 0 ? 'updated' : 'gone';
      } catch (error) {
        if (isForeignKeyViolation(error)) return 'no connection';
        throw error;
      }
    },

    async remove(organizationId: string, domain: string): Promise<boolean> {
      const deleted = await db
        .deleteFrom('organization_domains')
        .where('organization_id', '=', organizationId)
        .where('domain', '=', domain)
        .executeTakeFirst();
      return Number(deleted.numDeletedRows) > 0;
    },

    /** The organizations' template role of this name, as a join role sees it: absent, managing its organization, or plain. */
    async joinRoleKind(name: string): Promise<'none' | 'manages' | 'plain'> {
      const row = await db.selectFrom('organization_roles').select('manages_organization').where('name', '=', name).executeTakeFirst();
      if (!row) return 'none';
      return Number(row.manages_organization) !== 0 ? 'manages' : 'plain';
    },

    /** The verified claim of a domain, if any organization holds it. */
    async route(domain: string): Promise<DomainRoute | undefined> {
      const row = await claims().where('domain', '=', domain).where('verified_at', 'is not', null).executeTakeFirst();
      if (!row) return undefined;
      const claim = claimOf(row);
      return {
        organizationId: claim.organizationId,
        domain: claim.domain,
        connectionId: claim.connectionId,
        allowEmailCode: claim.allowEmailCode,
        joinRole: claim.joinRole,
      };
    },

    /** Every verified domain whose addresses must sign in at a connection (no mailed code): the sign-in's routing table. */
    async upstreamRoutes(): Promise<Map<string, string>> {
      const rows = await db
        .selectFrom('organization_domains')
        .select(['domain', 'connection_id'])
        .where('verified_at', 'is not', null)
        .where('connection_id', 'is not', null)
        .where('allow_email_code', '=', 0)
        .execute();
      return new Map(rows.map((row) => [row.domain, row.connection_id as string]));
    },

    /** The verified domains whose addresses sign in at this connection. */
    async routedTo(connectionId: string): Promise<string[]> {
      const rows = await db
        .selectFrom('organization_domains')
        .select('domain')
        .where('connection_id', '=', connectionId)
        .where('verified_at', 'is not', null)
        .orderBy('domain')
        .execute();
      return rows.map((row) => row.domain);
    },
  };
}

export type DomainStore = ReturnType<typeof createDomainStore>;
