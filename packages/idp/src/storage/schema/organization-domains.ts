/**
 * Part of Database (../schema.ts): the domains organizations prove they own, and how their
 * addresses sign in. The table belongs to organization-domains/.
 */
export interface OrganizationDomainTables {
  /** organization-domains/: one domain an organization claims; verified once its DNS record is seen (or an operator vouches). */
  organization_domains: {
    organization_id: string;
    /** Lower-case ASCII (IDNs in punycode), no trailing dot; at most one organization holds it verified. */
    domain: string;
    /** What the TXT record must say (dns-proof.ts); public once published, so kept as is, not hashed. */
    verification_token: string;
    verified_at: number | null;
    /** 'dns', or the operator who vouched (`operator:<email>`, an admin key's id, 'cli'). */
    verified_by: string | null;
    /** The organization's own provider (connections/): its addresses sign in there, never by mailed code. */
    connection_id: string | null;
    /** 1: addresses routed to the connection may still sign in by mailed code. */
    allow_email_code: number;
    /** The organization role a new user with this address joins with automatically; null: no automatic joining. */
    join_role: string | null;
    created_at: number;
    updated_at: number;
  };
}
