/**
 * Part of Database (../schema.ts): organizations, their members and the organization roles.
 * Every table belongs to organizations/ (the foreign keys cascade from users, apis and
 * organizations, so no other module deletes these rows).
 */
export interface OrganizationTables {
  /** organizations/: a customer company whose people sign in */
  organizations: {
    id: string;
    name: string;
    /** The id a provisioning system (SCIM) knows it by; unique when set. */
    external_id: string | null;
    /** 1: its members need a second factor at every application that asks for the organization. */
    mfa_required: number;
    created_at: number;
    updated_at: number;
    /** The user who made it in the account center (self-service); null for the operator's. */
    created_by: string | null;
  };
  /** organizations/: a user who belongs to an organization */
  organization_members: {
    organization_id: string;
    user_id: string;
    external_id: string | null;
    created_at: number;
    /** 'cli', an admin key's id, `operator:<email>`, or `domain:<domain>` (joined by a verified domain). */
    added_by: string;
  };
  /** organizations/: the service-wide template of organization roles (every organization has them) */
  organization_roles: {
    id: string;
    name: string;
    created_at: number;
    updated_at: number;
    /** 1: a member holding it manages that organization from the account center (its admin there). */
    manages_organization: number;
  };
  /** organizations/: what an organization role grants: (API, permission) pairs */
  organization_role_permissions: {
    role_id: string;
    api_id: string;
    permission: string;
  };
  /** organizations/invitations.ts: an address invited to join an organization with organization roles */
  organization_invitations: {
    /** The keyed hash of the link's token (never the token). */
    id_hash: string;
    /** inv_…: what the operator lists, resends and revokes it by. */
    id: string;
    organization_id: string;
    /** The canonical address that may accept it, and no other. */
    email: string;
    /** The organization roles it gives, as ids, comma-separated ('' for none). */
    role_ids: string;
    invited_by: string;
    created_at: number;
    expires_at: number;
    accepted_at: number | null;
    accepted_user_id: string | null;
    revoked_at: number | null;
  };
  /** organizations/: the roles a member holds in one organization */
  organization_member_roles: {
    organization_id: string;
    user_id: string;
    role_id: string;
  };
}
