import { ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID } from '../clients/service.js';
import type { AuditEvent } from '../events/store.js';
import type { EventType } from '../events/types.js';
import type { MessageKey } from '../i18n/messages/en.js';

/**
 * The event types the account page's activity shows, each with its words (page.account.event.*,
 * in every language). A message with `{app}` names the application; one with `{connection}` the
 * upstream provider. Every type of events/types.ts is here or in ACTIVITY_HIDDEN (a test derives
 * the shown set from the type list: test/account-center/account-activity.test.ts).
 */
export const ACTIVITY_SHOWN = {
  'user.created': 'page.account.event.userCreated',
  'user.disabled': 'page.account.event.userDisabled',
  'user.enabled': 'page.account.event.userEnabled',
  'sign_in.succeeded': 'page.account.event.signedIn',
  'device.registered': 'page.account.event.deviceRegistered',
  'device.revoked': 'page.account.event.deviceRevoked',
  'device.expired': 'page.account.event.deviceExpired',
  'session.ended': 'page.account.event.sessionEnded',
  'refresh_token.reused': 'page.account.event.refreshReused',
  'passkey.registered': 'page.account.event.passkeyRegistered',
  'passkey.revoked': 'page.account.event.passkeyRevoked',
  'passkey.refused': 'page.account.event.passkeyRefused',
  'mfa.enrolled': 'page.account.event.mfaEnrolled',
  'mfa.changed': 'page.account.event.mfaChanged',
  'mfa.reset': 'page.account.event.mfaReset',
  'recovery_codes.generated': 'page.account.event.recoveryGenerated',
  'recovery_codes.used': 'page.account.event.recoveryUsed',
  'recovery_codes.regenerated': 'page.account.event.recoveryRegenerated',
  'operator.signed_in': 'page.account.event.operatorSignedIn',
  'operator.refused': 'page.account.event.operatorRefused',
  'account.signed_in': 'page.account.event.accountSignedIn',
  'account.app_signed_out': 'page.account.event.appSignedOut',
  'identity.linked': 'page.account.event.identityLinked',
  'identity.unlinked': 'page.account.event.identityUnlinked',
  'consent.granted': 'page.account.event.consentGranted',
  'consent.revoked': 'page.account.event.consentRevoked',
  'device.authorization_approved': 'page.account.event.deviceAuthorizationApproved',
  'device.authorization_denied': 'page.account.event.deviceAuthorizationDenied',
} as const satisfies Partial<Record<EventType, MessageKey>>;

const NAMES_NO_USER = 'recorded without the user (before the address is proven: the trail collects no addresses of non-users)';
const SERVICE_WIDE = 'an operator’s change to the service, not to an account: it names no user';
const ROLES_UNSHOWN = 'what an operator’s roles let the user do in their APIs: the account page shows no roles (docs/authorization.md)';

/** The event types the activity leaves out, each with why. */
export const ACTIVITY_HIDDEN = {
  'user.deleted': 'the account is gone: there is no page left to show it on',
  'user.updated':
    'an operator’s bookkeeping (the external id a provisioning system knows the user by): nothing the user did or must act on',
  'sign_in.failed': NAMES_NO_USER,
  'otp.sent': NAMES_NO_USER,
  'send_budget.exhausted': SERVICE_WIDE,
  'account.locked': NAMES_NO_USER,
  'delegation.called': 'an app’s backend call, recorded without the user; what it changed is recorded as its own event (mfa.changed …)',
  'signing_key.rotated': SERVICE_WIDE,
  'client.created': SERVICE_WIDE,
  'client.updated': SERVICE_WIDE,
  'client.deleted': SERVICE_WIDE,
  'client.registered': 'an application that registered itself (RFC 7591), before any user signed in to it: it names no user',
  'settings.updated': SERVICE_WIDE,
  'admin_key.created': SERVICE_WIDE,
  'admin_key.revoked': SERVICE_WIDE,
  'webhook.created': SERVICE_WIDE,
  'webhook.deleted': SERVICE_WIDE,
  'webhook.enabled': SERVICE_WIDE,
  'webhook.disabled': SERVICE_WIDE,
  'webhook.delivery_retried': SERVICE_WIDE,
  'operator.added': SERVICE_WIDE,
  'operator.removed': SERVICE_WIDE,
  'connection.created': SERVICE_WIDE,
  'connection.updated': SERVICE_WIDE,
  'connection.deleted': SERVICE_WIDE,
  'api.created': SERVICE_WIDE,
  'api.updated': SERVICE_WIDE,
  'api.deleted': SERVICE_WIDE,
  'role.created': SERVICE_WIDE,
  'role.updated': SERVICE_WIDE,
  'role.deleted': SERVICE_WIDE,
  'role.assigned': ROLES_UNSHOWN,
  'role.unassigned': ROLES_UNSHOWN,
  'client.permissions_granted': SERVICE_WIDE,
  'organization.created': SERVICE_WIDE,
  'organization.updated': SERVICE_WIDE,
  'organization.deleted': SERVICE_WIDE,
  'organization.member_added': SERVICE_WIDE,
  'organization.member_removed': SERVICE_WIDE,
  'organization.member_roles_changed': SERVICE_WIDE,
  'organization_role.created': SERVICE_WIDE,
  'organization_role.updated': SERVICE_WIDE,
  'organization_role.deleted': SERVICE_WIDE,
  'organization.invitation_sent': SERVICE_WIDE,
  'organization.invitation_revoked': SERVICE_WIDE,
  'organization.domain_added': SERVICE_WIDE,
  'organization.domain_verified': SERVICE_WIDE,
  'organization.domain_updated': SERVICE_WIDE,
  'organization.domain_removed': SERVICE_WIDE,
} as const satisfies Partial<Record<EventType, string>>;

// Every event type is shown or hidden, never both: a new type fails to compile until it is placed.
type Placed = keyof typeof ACTIVITY_SHOWN | keyof typeof ACTIVITY_HIDDEN;
const everyTypePlaced: [EventType] extends [Placed] ? true : never = true;
void everyTypePlaced;

export type ShownType = keyof typeof ACTIVITY_SHOWN;
export const isShown = (type: string): type is ShownType => Object.hasOwn(ACTIVITY_SHOWN, type);

/** One line of the activity: the event, the application it names (its id and stored name) and the upstream connection's name. */
export interface ActivityEntry {
  event: AuditEvent & { type: ShownType };
  /** The application the event is about: a hosted sign-in's app (detail.app), else the event's client; null when none. */
  appId: string | null;
  /** The application's name as registered; undefined for a client since deleted. */
  appName: string | undefined;
  /** identity.*: the connection's name (its id when the connection is gone). */
  connectionName: string | undefined;
}

/** The application an event is about: the hosted sign-in records the app it served in `detail.app`. */
export function appIdOf(event: Pick<AuditEvent, 'clientId' | 'detail'>): string | null {
  const app = event.detail?.app;
  return event.clientId === HOSTED_CLIENT_ID && typeof app === 'string' ? app : event.clientId;
}

/** The service's own clients are named in the page's language, not by their stored (English) names. */
export const FIRST_PARTY_APP_NAMES: Readonly<Record<string, MessageKey>> = {
  [ACCOUNT_CLIENT_ID]: 'page.account.app.account',
  [CONSOLE_CLIENT_ID]: 'page.account.app.console',
  [HOSTED_CLIENT_ID]: 'page.account.app.hosted',
};
