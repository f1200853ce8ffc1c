import type { Database, Db } from '../storage/schema.js';

export interface InvitationRow {
  idHash: string;
  id: string;
  organizationId: string;
  email: string;
  roleIds: string[];
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
  acceptedUserId: string | null;
  revokedAt: number | null;
}

type Row = Database['organization_invitations'];
const rowOf = (row: Row): InvitationRow => ({
  idHash: row.id_hash,
  id: row.id,
  organizationId: row.organization_id,
  email: row.email,
  roleIds: row.role_ids ? row.role_ids.split(',') : [],
  invitedBy: row.invited_by,
  createdAt: Number(row.created_at),
  expiresAt: Number(row.expires_at),
  acceptedAt: row.accepted_at === null ? null : Number(row.accepted_at),
  acceptedUserId: row.accepted_user_id,
  revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
});

/**
 * organization_invitations (organizations/invitations.ts). Acceptance is one conditional UPDATE
 * (live, unspent, this address) and the membership in its transaction: of two acceptances at
 * once, exactly one changes a row (on SQLite and PostgreSQL alike); the other changes nothing.
 */
export function createInvitationStore(db: Db) {
  return {
    async insert(invitation: InvitationRow): Promise<void> {
      await db
        .insertInto('organization_invitations')
        .values({
          id_hash: invitation.idHash,
          id: invitation.id,
          organization_id: invitation.organizationId,
          email: invitation.email,
          role_ids: invitation.roleIds.join(','),
          invited_by: invitation.invitedBy,
          created_at: invitation.createdAt,
          expires_at: invitation.expiresAt,
          accepted_at: null,
          accepted_user_id: null,
          revoked_at: null,
        })
        .execute();
    },

    async list(organizationId: string): Promise<InvitationRow[]> {
      const rows = await db
        .selectFrom('organization_invitations')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .orderBy('created_at', 'desc')
        .execute();
      return rows.map(rowOf);
    },

    async byHash(idHash: string): Promise<InvitationRow | undefined> {
      const row = await db.selectFrom('organization_invitations').selectAll().where('id_hash', '=', idHash).executeTakeFirst();
      return row ? rowOf(row) : undefined;
    },

    async byId(organizationId: string, id: string): Promise<InvitationRow | undefined> {
      const row = await db
        .selectFrom('organization_invitations')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .executeTakeFirst();
      return row ? rowOf(row) : undefined;
    },

    /** A new link for a pending invitation: the old token's hash is replaced, so the old link stops working. */
    async relink(organizationId: string, id: string, idHash: string, expiresAt: number): Promise<boolean> {
      const updated = await db
        .updateTable('organization_invitations')
        .set({ id_hash: idHash, expires_at: expiresAt })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) > 0;
    },

    async revoke(organizationId: string, id: string, at: number): Promise<boolean> {
      const updated = await db
        .updateTable('organization_invitations')
        .set({ revoked_at: at })
        .where('organization_id', '=', organizationId)
        .where('id', '=', id)
        .where('accepted_at', 'is', null)
        .where('revoked_at', 'is', null)
        .executeTakeFirst();
      return Number(updated.numUpdatedRows) > 0;
    },

    /**
     * Spends the invitation for this user, if it is live and for their address, and makes the
     * membership with its roles (a member already keeps their roles and gains the invitation's).
     */
    async accept(idHash: string, user: { id: string; email: string }, at: number): Promise<InvitationRow | undefined> {
      return db.transaction().execute(async (tx) => {
        const spent = await tx
          .updateTable('organization_invitations')
          .set({ accepted_at: at, accepted_user_id: user.id })
          .where('id_hash', '=', idHash)
          .where('email', '=', user.email)
          .where('accepted_at', 'is', null)
          .where('revoked_at', 'is', null)
          .where('expires_at', '>', at)
          .returningAll()
          .executeTakeFirst();
        if (!spent) return undefined;
        const invitation = rowOf(spent);
        await tx
          .insertInto('organization_members')
          .values({
            organization_id: invitation.organizationId,
            user_id: user.id,
            external_id: null,
            created_at: at,
            added_by: `invitation:${invitation.id}`,
          })
          .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doNothing())
          .execute();
        // The roles that still exist (one deleted since the invitation gives nothing).
        if (invitation.roleIds.length > 0)
          await tx
            .insertInto('organization_member_roles')
            .columns(['organization_id', 'user_id', 'role_id'])
            .expression((eb) =>
              eb
                .selectFrom('organization_roles')
                .select((s) => [s.val(invitation.organizationId).as('organization_id'), s.val(user.id).as('user_id'), 'id as role_id'])
                .where('id', 'in', invitation.roleIds),
            )
            .onConflict((oc) => oc.doNothing())
            .execute();
        return invitation;
      });
    },

    async deleteExpired(before: number): Promise<void> {
      await db.deleteFrom('organization_invitations').where('expires_at', '<', before).where('accepted_at', 'is', null).execute();
    },
  };
}

export type InvitationStore = ReturnType<typeof createInvitationStore>;
