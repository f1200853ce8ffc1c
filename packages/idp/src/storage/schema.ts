/**
 * Table shapes. Times are Unix epoch milliseconds in BIGINT columns; booleans are 0/1
 * integers, so the same SQL runs on SQLite and PostgreSQL. Each table belongs to one
 * module (named beside it); no other module reads or writes it, with these deliberate
 * exceptions, each one statement or one transaction that would otherwise cost round trips
 * or leave a half-done change:
 * - factors/device-key/sign-in-store.ts, the trusted-device login: one read of clients, devices, users,
 *   mfa_methods and mfa_remembered, and one write that spends the challenge in spent_tokens
 *   (the statement spent-tokens/ builds, spendQuery) and, only if that went in, stamps
 *   devices and inserts auth_codes, events and webhook_deliveries;
 * - authorization-codes/store.ts, the code exchange's one statement: it also reads clients
 *   and users and records the pair in client_users;
 * - clients/store.ts and users/store.ts, deleting a client or a user: the rows bound to it,
 *   in the other modules' tables (a user's linked identities, link proofs, roles and consents included), in one transaction;
 * - apis/store.ts, assigning a role: it reads users (does the user exist) in the transaction that
 *   inserts user_roles, so an assignment never outlives a user deleted meanwhile; and naming an API's
 *   resource server client, it reads clients (FOR SHARE: a confidential client that exists), which
 *   clients/store.ts clears from apis when it deletes the client;
 * - organizations/store.ts: the member lists read users (their addresses) and what organization roles
 *   grant reads apis and api_permissions (only permissions an API still defines), in one statement each;
 * - token/introspection-store.ts, introspecting an access token (RFC 7662): one read of
 *   revoked_access_tokens and auth_codes (authorization-codes/), refresh_tokens and
 *   refresh_token_families (oidc/), users and devices, so the answer is of one moment, in one round trip
 *   (a machine client's token: revoked_access_tokens and clients);
 * - oidc/store.ts, ending sign-in sessions (endSessions): sub-selects of passkeys and devices (what a
 *   session is bound to), a read of clients (their back-channel logout URIs) and, in the same
 *   transaction, the logout tokens' rows in webhook_deliveries (the one outbox, webhooks/outbox-store.ts
 *   logoutDeliveryRow), so a session never ends without its apps being told.
 */
import type { Kysely } from 'kysely';
import type { AccountTables } from './schema/accounts.js';
import type { AuthorizationTables } from './schema/authorization.js';
import type { FactorTables } from './schema/factors.js';
import type { OperationTables } from './schema/operations.js';
import type { OrganizationDomainTables } from './schema/organization-domains.js';
import type { OrganizationTables } from './schema/organizations.js';
import type { SignInTables } from './schema/sign-in.js';
import type { UpstreamTables } from './schema/upstream.js';

/** Every table, grouped by wing in schema/. */
export interface Database
  extends AccountTables,
    SignInTables,
    FactorTables,
    OperationTables,
    UpstreamTables,
    AuthorizationTables,
    OrganizationTables,
    OrganizationDomainTables {}

export type Db = Kysely<Database>;
