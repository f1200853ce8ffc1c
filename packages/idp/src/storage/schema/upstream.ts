/**
 * Part of Database (../schema.ts): upstream identity providers (issue 26). Each table's owner
 * is named beside it.
 */
export interface UpstreamTables {
  /** connections/ */
  connections: {
    id: string;
    name: string;
    /** 'oidc', 'google', 'microsoft', 'apple' or 'github'. */
    preset: string;
    issuer: string;
    client_id: string;
    /** Sealed (crypto/seal.ts, purpose 'connection-secret'): the client secret, or Apple's PEM private key. */
    client_secret_sealed: string | null;
    /** JSON array of scopes. */
    scopes: string;
    /** JSON array of the client ids (applications) that show this connection. */
    client_ids: string;
    /** 1: the provider's tokens are kept, sealed, with the linked identity. */
    keep_tokens: number;
    apple_team_id: string | null;
    apple_key_id: string | null;
    created_at: number;
    updated_at: number;
  };
  /** factors/upstream/: a user's identity at a connection, by the provider's subject */
  linked_identities: {
    connection_id: string;
    subject: string;
    user_id: string;
    /** The address the provider gave at the last sign-in (display only; never matched on). */
    email: string | null;
    /** Sealed JSON of the provider's tokens, only where the connection keeps them. */
    tokens_sealed: string | null;
    /** The person's name as the provider gave it (Apple: on the first sign-in only; kept). */
    name: string | null;
    linked_at: number;
    last_used_at: number | null;
  };
  /** factors/upstream/: a link to an existing account waiting for the emailed code that proves the account */
  upstream_link_proofs: {
    id: string;
    client_id: string;
    connection_id: string;
    subject: string;
    user_id: string;
    email: string;
    tokens_sealed: string | null;
    name: string | null;
    code_challenge: string;
    otp_hash: string | null;
    attempts: number;
    created_at: number;
    expires_at: number;
    completed_at: number | null;
  };
}
