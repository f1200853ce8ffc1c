import type {
  AdminClient,
  AdminClientList,
  AdminClientSecret,
  AdminDevice,
  AdminDeviceList,
  AdminEvent,
  AdminEventPage,
  AdminKeyInfo,
  AdminKeyList as AdminKeyListAnswer,
  AdminLinkedIdentity,
  AdminMfaReset,
  AdminNewClient,
  AdminRecoveryCodes,
  AdminSigningKeyRotated,
  AdminUser,
  AdminUserDetail,
  AdminUserExport,
  AdminUserPage,
} from 'service-protocol';
import { Type } from 'typebox';
import { PAGE_SIZE_DEFAULT } from '../defaults.js';
import { BODY_ERRORS, errorResponses, PageParams, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import { SIGNING_ALGS } from '../keys/algs.js';

/** The admin API's request and answer schemas, beside its routes (routes.ts, console-api.ts); answers typed by the protocol's admin types. */
export const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
export const Time = Type.Integer({ description: 'Unix epoch milliseconds' });
/** A time a query names (a filter's bound), in Unix epoch milliseconds. */
export const EpochMs = (description: string) => Type.Integer({ minimum: 0, maximum: 999_999_999_999_999, description });
export const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
/** `limit` and `cursor` of a paged listing (http/schemas.ts). */
export const Page = PageParams;
/** A listing's page request from its query (the default page size when none is given). */
/** A page's size: the query's limit, or the default. */
export const pageSize = (limit: number | undefined) => limit ?? PAGE_SIZE_DEFAULT;

export const pageOf = (query: { limit?: number; cursor?: string }) => ({
  limit: query.limit ?? PAGE_SIZE_DEFAULT,
  ...(query.cursor ? { cursor: query.cursor } : {}),
});
export const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
/** A route with a body may also be refused for its size (413) or media type (415), after the key. */
export const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);

export const User = wireBody<AdminUser>()(
  Type.Object({
    id: Type.String(),
    email: Type.String(),
    createdAt: Time,
    disabledAt: Nullable(Time),
    externalId: Nullable(Type.String()),
  }),
);
export const Device = wireBody<AdminDevice>()(
  Type.Object({
    id: Type.String(),
    clientId: Type.String(),
    kind: Type.Union([Type.Literal('browser'), Type.Literal('passkey')], {
      description: 'browser: a remembered browser (device key); passkey: a WebAuthn credential',
    }),
    name: Nullable(Type.String()),
    browser: Nullable(Type.String()),
    os: Nullable(Type.String()),
    createdAt: Time,
    lastUsedAt: Nullable(Time),
    removedAt: Nullable(Time),
    synced: Nullable(Type.Boolean({ description: 'passkeys: backed up (synced) at the last use; null for a browser' })),
  }),
);
export const Holdings = {
  devices: Type.Array(Device),
  mfa: Nullable(Type.Object({ method: Type.String(), phone: Nullable(Type.String()), confirmedAt: Time })),
  recoveryCodes: Nullable(Type.Object({ total: Type.Integer(), remaining: Type.Integer(), createdAt: Time, usedAt: Type.Array(Time) })),
  clientSignIns: Type.Array(Type.Object({ clientId: Type.String(), clientName: Nullable(Type.String()), firstSignedInAt: Time })),
};
export const Event = wireBody<AdminEvent>()(
  Type.Object({
    id: Type.String(),
    type: Type.String(),
    at: Time,
    userId: Nullable(Type.String()),
    clientId: Nullable(Type.String()),
    deviceId: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    userAgent: Nullable(Type.String()),
    actor: Nullable(Type.String()),
    detail: Nullable(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]))),
  }),
);
const LogoutUri = (description: string) => Nullable(Type.String({ maxLength: 2000, description }));

/** A client's logout registration as answers show it. */
export const ClientLogout = Type.Object({
  backchannelLogoutUri: LogoutUri('OIDC Back-Channel Logout 1.0: where logout tokens are POSTed'),
  backchannelLogoutSessionRequired: Type.Boolean(),
  frontchannelLogoutUri: LogoutUri("OIDC Front-Channel Logout 1.0: framed by the signed-out page; on a redirect URI's origin"),
  frontchannelLogoutSessionRequired: Type.Boolean(),
});

/** A change of it (POST and PATCH /clients): a field given replaces the registered one, a URI null removes it. */
export const ClientLogoutChange = Type.Partial(ClientLogout, { additionalProperties: false });

/** A JWKS of public keys (RFC 7517 5), as a machine client registers it for private_key_jwt. */
export const Jwks = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown()), { minItems: 1, maxItems: 10 }) });
export const ClientKeys = Type.Object({ jwks: Nullable(Jwks), jwksUri: Nullable(Type.String()) });

export const Client = wireBody<AdminClient>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    origins: Type.Array(Type.String()),
    mfaPolicy: Type.String(),
    idTokenSignedResponseAlg: Type.String(),
    createdAt: Time,
    redirectUris: Type.Array(Type.String()),
    type: Type.Union([Type.Literal('confidential'), Type.Literal('public'), Type.Literal('machine')]),
    /** A machine client's public keys for private_key_jwt (`clients create --machine --jwks-uri`). */
    keys: ClientKeys,
    postLogoutRedirectUris: Type.Array(Type.String()),
    /** A passkey sign-in also passes this client's MFA (`clients update --passkey-mfa`). */
    passkeySatisfiesMfa: Type.Boolean(),
    /** Every token request must carry a DPoP proof (`clients update --dpop required`, RFC 9449 5.2). */
    dpopBoundAccessTokens: Type.Boolean(),
    logout: ClientLogout,
    /** /authorize takes this client's requests only pushed (`clients update --par required`, RFC 9126). */
    requirePushedAuthorizationRequests: Type.Boolean(),
    /** A third-party application: its users consent to what it asks (`clients update --third-party yes`). */
    thirdParty: Type.Boolean(),
    /** It registered itself (RFC 7591, /oauth/register): public, third-party, swept when unused. */
    registered: Type.Boolean(),
    /** It may use the device authorization grant (RFC 8628; `clients update --device-grant yes`). */
    deviceCodeGrant: Type.Boolean(),
    /** Where its codes may go (`clients update --sms-countries`, `--mail-domains`; otp/send-rules.ts). */
    sendRules: Type.Object({ smsCountries: Nullable(Type.Array(Type.String())), mailDomains: Nullable(Type.Array(Type.String())) }),
  }),
);
export const AdminKey = wireBody<AdminKeyInfo>()(
  Type.Object({
    id: Type.String(),
    name: Type.String(),
    createdAt: Time,
    lastUsedAt: Nullable(Time),
    revokedAt: Nullable(Time),
  }),
);
export const UserPage = wireBody<AdminUserPage>()(Type.Object({ users: Type.Array(User), nextCursor: Nullable(Type.String()) }));
export const UserDetail = wireBody<AdminUserDetail>()(Type.Object({ ...User.properties, ...Holdings }));
/** A user's identity at an upstream provider (the export, `users/{id}/identities`). */
export const LinkedIdentity = wireBody<AdminLinkedIdentity>()(
  Type.Object({
    connectionId: Type.String(),
    subject: Type.String({ description: "the provider's subject: what the link is by" }),
    userId: Type.String(),
    email: Nullable(Type.String({ description: 'the address the provider gave at the last sign-in (shown, never matched)' })),
    name: Nullable(Type.String({ description: "the person's name as the provider gave it (Apple: on the first sign-in only; kept)" })),
    linkedAt: Time,
    lastUsedAt: Nullable(Time),
  }),
);
export const UserExport = wireBody<AdminUserExport>()(
  Type.Object({ account: User, ...Holdings, events: Type.Array(Event), identities: Type.Array(LinkedIdentity) }),
);
export const DeviceList = wireBody<AdminDeviceList>()(Type.Object({ devices: Type.Array(Device) }));
export const MfaReset = wireBody<AdminMfaReset>()(Type.Object({ method: Type.String() }));
export const RecoveryCodes = wireBody<AdminRecoveryCodes>()(Type.Object({ recoveryCodes: Type.Array(Type.String()) }));
export const EventPage = wireBody<AdminEventPage>()(Type.Object({ events: Type.Array(Event), nextCursor: Nullable(Type.String()) }));
export const ClientList = wireBody<AdminClientList>()(Type.Object({ clients: Type.Array(Client), nextCursor: Nullable(Type.String()) }));
export const NewClient = wireBody<AdminNewClient>()(
  Type.Object({ clientId: Type.String(), publishableKey: Type.String(), secretKey: Type.Optional(Type.String()) }),
);
export const ClientSecret = wireBody<AdminClientSecret>()(Type.Object({ clientId: Type.String(), secretKey: Type.String() }));
export const SigningKeyRotated = wireBody<AdminSigningKeyRotated>()(Type.Object({ kid: Type.String() }));
export const AdminKeyList = wireBody<AdminKeyListAnswer>()(
  Type.Object({ adminKeys: Type.Array(AdminKey), nextCursor: Nullable(Type.String()) }),
);
export const UserParams = Type.Object({ id: Id });
export const IdTokenAlg = Type.Union(SIGNING_ALGS.map((alg) => Type.Literal(alg)));
