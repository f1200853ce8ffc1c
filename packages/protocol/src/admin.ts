/**
 * The admin API's answers (/admin/v1, an admin key in `Authorization: Bearer …`): what
 * `service-idp users|devices|clients|events|webhooks` print with --json. Times are Unix epoch
 * milliseconds; a listing pages with `nextCursor` (null on the last page). Refusals are
 * `{ code, message }` (errors.ts).
 */
import type { AdminLinkedIdentity } from './upstream.js';

/** A person who signs in. */
export interface AdminUser {
  id: string;
  email: string;
  createdAt: number;
  /** Set while the user is disabled: no sign-in path sees the account. */
  disabledAt: number | null;
  /** The id a provisioning system (SCIM) knows the user by; null: none. */
  externalId: string | null;
}

/** A remembered browser (device key) or a passkey (WebAuthn credential), for any client. */
export interface AdminDevice {
  id: string;
  clientId: string;
  kind: 'browser' | 'passkey';
  name: string | null;
  browser: string | null;
  os: string | null;
  createdAt: number;
  lastUsedAt: number | null;
  removedAt: number | null;
  /** Passkeys: backed up (synced) at the last use; null for a browser. */
  synced: boolean | null;
}

/** What hangs on a user: devices, the MFA method without its secret, recovery codes without them, client sign-ins. */
export interface AdminUserHoldings {
  devices: AdminDevice[];
  mfa: { method: string; phone: string | null; confirmedAt: number } | null;
  recoveryCodes: { total: number; remaining: number; createdAt: number; usedAt: number[] } | null;
  clientSignIns: Array<{ clientId: string; clientName: string | null; firstSignedInAt: number }>;
}

/** An audit event. */
export interface AdminEvent {
  id: string;
  type: string;
  at: number;
  userId: string | null;
  clientId: string | null;
  deviceId: string | null;
  ip: string | null;
  userAgent: string | null;
  /** Who acted when not the user: 'cli', or an admin key's id. */
  actor: string | null;
  /** Non-secret facts: a reason code, a count. */
  detail: Record<string, string | number | boolean> | null;
}

/** A registered client (never its keys). */
export interface AdminClient {
  id: string;
  name: string;
  origins: string[];
  mfaPolicy: string;
  idTokenSignedResponseAlg: string;
  createdAt: number;
  redirectUris: string[];
  /** `machine`: acts for itself with client_credentials (RFC 6749 4.4), never signs a user in. */
  type: 'confidential' | 'public' | 'machine';
  /** A machine client's public keys for private_key_jwt (RFC 7523); both null: its secret key only. */
  keys: AdminClientKeys;
  postLogoutRedirectUris: string[];
  /** A passkey sign-in also passes this client's MFA. */
  passkeySatisfiesMfa: boolean;
  /** RFC 9449 5.2 `dpop_bound_access_tokens`: every token request of this client must carry a DPoP proof. */
  dpopBoundAccessTokens: boolean;
  /** Where the client hears that a session it got tokens in ended (OIDC Back-/Front-Channel Logout 1.0). */
  logout: AdminClientLogout;
  /** RFC 9126 `require_pushed_authorization_requests`: /authorize takes this client's requests only pushed (POST /oauth/par). */
  requirePushedAuthorizationRequests: boolean;
  /** A third-party application: the user sees a consent page listing what it asks, remembered per user and revocable (never a machine client). */
  thirdParty: boolean;
  /**
   * The application registered itself (RFC 7591 POST /oauth/register, when the operator allows
   * it): public and third-party, deleted when left unused (docs/operations.md, "Clients that register themselves").
   */
  registered: boolean;
  /** It may use the device authorization grant (RFC 8628: `clients update --device-grant yes`). */
  deviceCodeGrant: boolean;
  /** Where this application's codes may go (`clients update --sms-countries`, `--mail-domains`). */
  sendRules: AdminClientSendRules;
}

/** An application's send rules (docs/security.md, SMS pumping and address rules). */
export interface AdminClientSendRules {
  /** ISO 3166 country codes its SMS may go to; null: the service's list (SERVICE_IDP_SMS_COUNTRIES); []: no SMS. */
  smsCountries: string[] | null;
  /** The mail domains its codes may go to (exact match); null: any domain. */
  mailDomains: string[] | null;
}

/** The public keys a machine client signs its client assertions with: a JWKS inline, or its URI. */
export interface AdminClientKeys {
  jwks: { keys: Array<Record<string, unknown>> } | null;
  jwksUri: string | null;
}

/** A client's logout URIs (`clients update --backchannel-logout-uri` and the like); null: none registered. */
export interface AdminClientLogout {
  /** OIDC Back-Channel Logout 1.0: logout tokens are POSTed here. */
  backchannelLogoutUri: string | null;
  /** Every logout token carries `sid`. */
  backchannelLogoutSessionRequired: boolean;
  /** OIDC Front-Channel Logout 1.0: the signed-out page frames it; on one of the client's redirect URI origins. */
  frontchannelLogoutUri: string | null;
  /** The framed URI gets `iss` and `sid`. */
  frontchannelLogoutSessionRequired: boolean;
}

/** An admin key (never the key itself). */
export interface AdminKeyInfo {
  id: string;
  name: string;
  createdAt: number;
  lastUsedAt: number | null;
  revokedAt: number | null;
}

/** A webhook endpoint (never its secret). */
export interface AdminWebhookEndpoint {
  id: string;
  url: string;
  /** ['all'], or the event types it receives. */
  events: string[];
  createdAt: number;
  disabledAt: number | null;
  /** 'operator', or 'failing' when the service disabled it. */
  disabledReason: string | null;
  /** Failed attempts since the last 2xx. */
  failureCount: number;
  failingSince: number | null;
  lastError: string | null;
  lastErrorAt: number | null;
  lastDeliveredAt: number | null;
}

/** GET /admin/v1/users */
export interface AdminUserPage {
  users: AdminUser[];
  nextCursor: string | null;
}
/** GET /admin/v1/users/{id} */
export type AdminUserDetail = AdminUser & AdminUserHoldings;
/** GET /admin/v1/users/{id}/export: everything held about the person. */
export interface AdminUserExport extends AdminUserHoldings {
  account: AdminUser;
  events: AdminEvent[];
  /** Identities at upstream providers linked to the account (never their tokens). */
  identities: AdminLinkedIdentity[];
}
/** GET /admin/v1/users/{id}/devices */
export interface AdminDeviceList {
  devices: AdminDevice[];
}
/** POST /admin/v1/users/{id}/recovery-codes: the new set, shown in this answer only. */
export interface AdminRecoveryCodes {
  recoveryCodes: string[];
}
/** POST /admin/v1/users/{id}/mfa/reset: the second factor removed (with the recovery codes). */
export interface AdminMfaReset {
  method: string;
}
/** GET /admin/v1/events: newest first. */
export interface AdminEventPage {
  events: AdminEvent[];
  nextCursor: string | null;
}
/** GET /admin/v1/clients */
export interface AdminClientList {
  clients: AdminClient[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** POST /admin/v1/clients: the new client's keys, shown once. */
export interface AdminNewClient {
  clientId: string;
  publishableKey: string;
  /** Absent for a public client: it has none. */
  secretKey?: string;
}
/**
 * POST /admin/v1/clients/{id}/secret: a confidential client's new secret key, shown once. The
 * old one stops working at once (no grace period).
 */
export interface AdminClientSecret {
  clientId: string;
  secretKey: string;
}
/** POST /admin/v1/signing-keys/rotate: the new RS256 key's id. */
export interface AdminSigningKeyRotated {
  kid: string;
}
/** GET /admin/v1/admin-keys */
export interface AdminKeyList {
  adminKeys: AdminKeyInfo[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** GET /admin/v1/webhooks */
export interface AdminWebhookList {
  webhooks: AdminWebhookEndpoint[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** A delivery of one event to one endpoint, while the outbox holds it. */
export interface AdminWebhookDelivery {
  /** The webhook-id header's value, the same on every attempt. */
  id: string;
  eventId: string;
  eventType: string | null;
  createdAt: number;
  attempts: number;
  /** pending (not tried yet), retrying (failed, tried again later), delivered, failed (given up). */
  state: 'pending' | 'retrying' | 'delivered' | 'failed';
  lastError: string | null;
  /** When the next attempt is due; null once delivered or given up. */
  nextAttemptAt: number | null;
}
/** GET /admin/v1/webhooks/{id}/deliveries: newest first. */
export interface AdminWebhookDeliveryList {
  deliveries: AdminWebhookDelivery[];
}
/** POST /admin/v1/webhooks: the endpoint and its signing secret, shown once. */
export interface AdminNewWebhook extends AdminWebhookEndpoint {
  secret: string;
}

/**
 * GET|PATCH /admin/v1/clients/{id}/branding: how the hosted pages and the mails present the
 * application. A null field is not set (the pages and mails fall back to the client's name, the
 * design system's colours, the service's sender name). `logoUrl` is absolute, content-addressed
 * and cached for a year (`/branding/logos/<sha256>.<png|jpg|webp>`).
 */
export interface AdminClientBranding {
  clientId: string;
  displayName: string | null;
  /** `#rrggbb`, WCAG AA contrast checked when set. */
  accent: string | null;
  /** The label colour a button on the accent gets (picked for contrast); null without an accent. */
  accentText: string | null;
  termsUrl: string | null;
  privacyUrl: string | null;
  mailSenderName: string | null;
  logoUrl: string | null;
}

/** GET|PATCH /admin/v1/settings: the service's own settings. */
export interface AdminSettings {
  /** What pages and mails call the service where no application is named (default: the issuer's host name). */
  productName: string;
  /** The service's privacy policy for the applications that use it: discovery's `op_policy_uri` (null: not published). */
  policyUrl: string | null;
  /** The service's terms of service: discovery's `op_tos_uri` (null: not published). */
  termsUrl: string | null;
  /** Where developers read how to use the service: discovery's `service_documentation` (null: not published). */
  documentationUrl: string | null;
}

/** Who may use the operator console: a viewer reads, an admin also acts. */
export type OperatorRole = 'viewer' | 'admin';

/** A person allowed into the operator console at /admin (`service-idp operators`). */
export interface AdminOperator {
  id: string;
  /** The address the operator signs in with (through the service's own hosted sign-in). */
  email: string;
  role: OperatorRole;
  createdAt: number;
  /** 'cli', an admin key's id, or `operator:<email>`. */
  addedBy: string;
}
/** GET /admin/v1/operators */
export interface AdminOperatorList {
  operators: AdminOperator[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** GET /admin/v1/signing-keys: the keys in the JWKS, newest first; retired ones verify until they leave it. */
export interface AdminSigningKeyList {
  signingKeys: Array<{ kid: string; alg: string; createdAt: number; retiredAt: number | null }>;
}
/** POST /admin/v1/admin-keys: the new key, shown once. */
export interface AdminNewKey extends AdminKeyInfo {
  key: string;
}
/** GET /admin/v1/dashboard: counts from the audit trail and the webhook outbox. */
export interface AdminDashboard {
  /** The buckets' width (milliseconds); each series has one count per bucket, oldest first. */
  bucketMs: number;
  /** The start of the first bucket. */
  since: number;
  series: {
    signIns: number[];
    signInFailures: number[];
    newDevices: number[];
    otpSends: number[];
    otpRefusals: number[];
  };
  webhooks: {
    /** Deliveries waiting to be sent (or retried). */
    pending: number;
    /** When the oldest of them was queued, or null. */
    oldestPendingAt: number | null;
  };
}

/** GET /admin/session: the signed-in operator and the token the console sends with every call (header x-console-csrf). */
export interface ConsoleSessionInfo {
  operator: { email: string; role: OperatorRole };
  csrfToken: string;
  /** When the session ends at the latest (its absolute limit), and its idle limit in seconds. */
  expiresAt: number;
  idleTimeoutSeconds: number;
}

/** An API resource (`service-idp apis`): its identifier is the audience of the access tokens issued for it. */
export interface AdminApi {
  id: string;
  /** An absolute URI (https, or a urn), fixed once made: the `aud` of its tokens and RFC 8707's `resource`. */
  identifier: string;
  name: string;
  /** The permissions it defines (scope tokens such as `read:notes`), sorted. */
  permissions: string[];
  /**
   * The confidential client its resource server authenticates as at the introspection endpoint
   * (RFC 7662 4): it may learn about this API's tokens. Null: only the client a token was issued to.
   */
  resourceServerClientId: string | null;
  /** Its access tokens also name the user's roles that grant any of its permissions (a `roles` claim). */
  rolesInToken: boolean;
  createdAt: number;
  updatedAt: number;
}
/** GET /admin/v1/apis */
export interface AdminApiList {
  apis: AdminApi[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** One permission of one API, as a role grants it. */
export interface AdminGrant {
  /** The API's identifier. */
  api: string;
  permission: string;
}
/** What a machine client may get with client_credentials (`service-idp clients grant`). */
export interface AdminClientPermissions {
  clientId: string;
  permissions: AdminGrant[];
}
/** A role (`service-idp roles`): a named set of permissions of one or more APIs. */
export interface AdminRole {
  id: string;
  name: string;
  /** Sorted by API identifier, then permission. */
  permissions: AdminGrant[];
  createdAt: number;
  updatedAt: number;
}
/** GET /admin/v1/roles */
export interface AdminRoleList {
  roles: AdminRole[];
  /** The next page's `cursor`; null on the last page. */
  nextCursor: string | null;
}
/** GET /admin/v1/users/{id}/roles: the roles a user holds, by name. */
export interface AdminUserRoles {
  roles: AdminRole[];
}

/**
 * A domain an organization claims (`service-idp orgs domains`): verified by a DNS TXT record
 * (`record`) or an operator's word; once verified, its addresses may be routed to the
 * organization's own provider and join the organization.
 */
export interface AdminOrganizationDomain {
  organizationId: string;
  /** Lower-case ASCII; an internationalized name in punycode. */
  domain: string;
  verified: boolean;
  verifiedAt: number | null;
  /** 'dns', or who vouched for it: an admin key's id, `operator:<email>`, 'cli'. */
  verifiedBy: string | null;
  /** The TXT record to publish to prove ownership (it may be removed once verified). */
  record: { type: 'TXT'; name: string; value: string };
  /** The organization's own provider (a connection): addresses at this domain sign in there, with no button and no mailed code. */
  connectionId: string | null;
  /** With a connection: whether these addresses may still sign in by mailed code. */
  allowEmailCode: boolean;
  /** The organization role new users with these addresses join with; null: they do not join by themselves. */
  joinRole: string | null;
  createdAt: number;
  updatedAt: number;
}
/** GET /admin/v1/organizations/{id}/domains */
export interface AdminOrganizationDomainList {
  domains: AdminOrganizationDomain[];
}

/** An organization (`service-idp orgs`): a customer company whose people sign in. */
export interface AdminOrganization {
  id: string;
  name: string;
  /** The id a provisioning system (SCIM) knows it by; null: none. */
  externalId: string | null;
  /** Its members need a second factor at every application that asks for the organization. */
  mfaRequired: boolean;
  createdAt: number;
  updatedAt: number;
}
/** GET /admin/v1/organizations */
export interface AdminOrganizationList {
  organizations: AdminOrganization[];
  nextCursor: string | null;
}
/** A member of an organization and the organization roles they hold there. */
export interface AdminOrganizationMember {
  organizationId: string;
  userId: string;
  email: string;
  /** Organization role names, sorted. */
  roles: string[];
  externalId: string | null;
  createdAt: number;
  /** Who added them: 'cli', an admin key's id, `operator:<email>`, or `domain:<domain>`. */
  addedBy: string;
}
/** GET /admin/v1/organizations/{id}/members */
export interface AdminOrganizationMemberList {
  members: AdminOrganizationMember[];
}
/** An organization role: one template every organization has, a named set of API permissions. */
export interface AdminOrganizationRole {
  id: string;
  name: string;
  /** Sorted by API identifier, then permission. */
  permissions: AdminGrant[];
  /** A member holding it is that organization's admin: they manage its members and invitations from the account center. */
  managesOrganization: boolean;
  createdAt: number;
  updatedAt: number;
}
/** GET /admin/v1/organization-roles */
export interface AdminOrganizationRoleList {
  roles: AdminOrganizationRole[];
}

/** An invitation to join an organization (`service-idp orgs invitations`); its link is only ever in the mail. */
export interface AdminOrganizationInvitation {
  id: string;
  organizationId: string;
  email: string;
  /** Organization role names it gives, sorted. */
  roles: string[];
  /** pending, accepted, expired or revoked. */
  state: 'pending' | 'accepted' | 'expired' | 'revoked';
  invitedBy: string;
  createdAt: number;
  expiresAt: number;
  acceptedAt: number | null;
}
/** GET /admin/v1/organizations/{id}/invitations */
export interface AdminOrganizationInvitationList {
  invitations: AdminOrganizationInvitation[];
}
