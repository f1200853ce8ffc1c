/**
 * Every event type the audit trail records (docs/operations.md lists them with their fields).
 * Names are `area.what_happened`, as Standard Webhooks and most identity services spell them.
 */
export const EVENT_TYPES = [
  'user.created',
  'user.disabled',
  'user.enabled',
  'user.deleted',
  'sign_in.succeeded',
  'sign_in.failed',
  'otp.sent',
  'account.locked',
  'device.registered',
  'device.revoked',
  'device.expired',
  'session.ended',
  'refresh_token.reused',
  'passkey.registered',
  'passkey.revoked',
  'passkey.refused',
  'mfa.enrolled',
  'mfa.changed',
  'mfa.reset',
  'recovery_codes.generated',
  'recovery_codes.used',
  'recovery_codes.regenerated',
  'delegation.called',
  'signing_key.rotated',
  'client.created',
  'client.updated',
  'client.deleted',
  'admin_key.created',
  'admin_key.revoked',
  'webhook.created',
  'webhook.deleted',
  'webhook.enabled',
  'webhook.disabled',
  'webhook.delivery_retried',
  'operator.added',
  'operator.removed',
  'operator.signed_in',
  'operator.refused',
  'account.signed_in',
  'connection.created',
  'connection.updated',
  'connection.deleted',
  'identity.linked',
  'identity.unlinked',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);
