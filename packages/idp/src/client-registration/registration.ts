/**
 * Clients that register themselves (RFC 7591) and manage their registration (RFC 7592), when
 * the operator allows it (SERVICE_IDP_CLIENT_REGISTRATION): `open` to anyone, for public
 * native clients on loopback or private-use redirect URIs only; `initial-token` with an initial
 * access token an operator made (`clients registration-token`). Every registered client is
 * public (PKCE, no secret), third-party (the user sees the consent page) and marked
 * `registered`; it is changed or deleted with its registration access token, and the sweep
 * deletes it when it has made no token request for SERVICE_IDP_REGISTERED_CLIENT_UNUSED_DAYS.
 * Metadata is checked before anything is stored; tokens are kept as keyed hashes only.
 */
import { type ClientInformation, Paths } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { checkRedirectUri } from '../clients/uris.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { CLIENT_REDIRECT_URIS_MAX, CLIENT_REGISTRATIONS_PER_IP, REDIRECT_URI_MAX_LENGTH } from '../defaults.js';
import { OAuthError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { Db } from '../storage/schema.js';
import type { Throttle } from '../throttle/service.js';

export type RegistrationPolicy = 'off' | 'open' | 'initial-token';

/** The metadata the service keeps of a registered client; everything else a client sends is checked for size and not stored. */
interface CheckedMetadata {
  name: string;
  redirectUris: string[];
  /** grant_types named urn:ietf:params:oauth:grant-type:device_code (RFC 8628). */
  deviceCodeGrant: boolean;
}

const NAME_MAX = 100;
/** Any other member: a string at most this long, an array at most CLIENT_REDIRECT_URIS_MAX items of such strings. */
const OTHER_STRING_MAX = REDIRECT_URI_MAX_LENGTH;
/** RFC 8628 3.4: the device authorization grant, which a registered client may ask for (device-authorization/). */
const DEVICE_CODE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';
const GRANT_TYPES = ['authorization_code', 'refresh_token', DEVICE_CODE_GRANT_TYPE];
const RESPONSE_TYPES = ['code'];
const UNNAMED = 'Unnamed application';
// biome-ignore lint/suspicious/noControlCharactersInRegex: the control characters are what it finds.
const HIDDEN_CHARACTERS = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

const metadataError = (message: string) => new OAuthError('invalid_client_metadata', message);
const redirectError = (message: string) => new OAuthError('invalid_redirect_uri', message);

/** RFC 8252 7.3 and 8.3: http only to this machine; the host is read by the URL parser after checkRedirectUri refused user info. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * One redirect URI a client registers for itself: a URI as an operator's must be
 * (checkRedirectUri: no fragment, no credentials, no `javascript:`/`data:`, RFC 3986
 * characters), no wildcard, and https, loopback http or a private-use scheme; under the `open`
 * policy, loopback http or a private-use scheme only (a native app's; an https URI would let
 * anyone register a client that sends codes to any web site).
 */
function checkRegisteredRedirectUri(input: unknown, policy: RegistrationPolicy): string {
  if (typeof input !== 'string') throw redirectError('each redirect URI is a string');
  let uri: string;
  try {
    uri = checkRedirectUri(input);
  } catch (error) {
    throw redirectError((error as Error).message);
  }
  if (uri.includes('*')) throw redirectError('a redirect URI has no wildcard');
  const url = new URL(uri);
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'http') {
    if (!LOOPBACK_HOSTS.has(url.hostname))
      throw redirectError('an http redirect URI must be on a loopback address (127.0.0.1, [::1] or localhost)');
    return uri;
  }
  if (scheme === 'https') {
    if (policy === 'open')
      throw redirectError('open registration takes loopback http or private-use scheme redirect URIs only (a native app)');
    return uri;
  }
  return uri;
}

/** RFC 7591 2: the metadata of a registration or an update (RFC 7592 2.2), refused as a whole on the first fault. */
export function checkRegistrationMetadata(body: unknown, policy: RegistrationPolicy): CheckedMetadata {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw metadataError('the metadata is a JSON object');
  const metadata = body as Record<string, unknown>;
  for (const [member, value] of Object.entries(metadata)) {
    if (member.length > 100) throw metadataError('a metadata member name is longer than 100 characters');
    if (typeof value === 'string' && value.length > OTHER_STRING_MAX)
      throw metadataError(`${member.slice(0, 100)} is longer than ${OTHER_STRING_MAX} characters`);
    if (Array.isArray(value)) {
      if (value.length > CLIENT_REDIRECT_URIS_MAX)
        throw metadataError(`${member.slice(0, 100)} has more than ${CLIENT_REDIRECT_URIS_MAX} items`);
      if (value.some((item) => typeof item !== 'string' || item.length > OTHER_STRING_MAX))
        throw metadataError(`${member.slice(0, 100)} holds only strings of at most ${OTHER_STRING_MAX} characters`);
    }
    if (typeof value === 'object' && value !== null && !Array.isArray(value))
      throw metadataError(`${member.slice(0, 100)}: no object member is accepted (jwks: a registered client is public, it has no keys)`);
  }
  const method = metadata.token_endpoint_auth_method;
  if (method !== undefined && method !== 'none')
    throw metadataError('a registered client is public: token_endpoint_auth_method is none (PKCE, no secret)');
  const allowed = (member: string, values: string[]) => {
    const given = metadata[member];
    if (given === undefined) return;
    if (!Array.isArray(given) || given.some((value) => !values.includes(value as string)))
      throw metadataError(`${member} takes only ${values.join(', ')}`);
  };
  allowed('grant_types', GRANT_TYPES);
  allowed('response_types', RESPONSE_TYPES);
  const name = metadata.client_name;
  if (name !== undefined && (typeof name !== 'string' || name.trim().length === 0 || name.trim().length > NAME_MAX))
    throw metadataError(`client_name is 1 to ${NAME_MAX} characters`);
  // The consent page and the console show the name: no line breaks or other controls, no bidi overrides that reorder what is shown.
  if (typeof name === 'string' && HIDDEN_CHARACTERS.test(name))
    throw metadataError('client_name holds no control or bidirectional formatting characters');
  const uris = metadata.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) throw redirectError('redirect_uris is required: at least one');
  const redirectUris = [...new Set(uris.map((uri) => checkRegisteredRedirectUri(uri, policy)))];
  const grants = metadata.grant_types;
  const deviceCodeGrant = Array.isArray(grants) && grants.includes(DEVICE_CODE_GRANT_TYPE);
  return { name: typeof name === 'string' ? name.trim() : UNNAMED, redirectUris, deviceCodeGrant };
}

export interface ClientRegistration {
  readonly policy: RegistrationPolicy;
  /** RFC 7591 3: registers a client from its metadata; `initialToken` is the request's bearer token (`initial-token` policy). */
  register(input: { metadata: unknown; initialToken: string | undefined; ip: string }): Promise<ClientInformation>;
  /** RFC 7592 2.1: the client's registration, for its registration access token. */
  read(clientId: string, token: string | undefined): Promise<ClientInformation>;
  /** RFC 7592 2.2: replaces its metadata (name and redirect URIs), checked as at registration. */
  update(clientId: string, token: string | undefined, metadata: unknown): Promise<ClientInformation>;
  /** RFC 7592 2.3: deletes the client and everything bound to it. */
  remove(clientId: string, token: string | undefined): Promise<void>;
  /** An initial access token for one registration (`clients registration-token`), shown once, kept as its keyed hash. */
  issueInitialToken(ttlHours: number): Promise<{ token: string; expiresAt: number }>;
  /** Deletes the registered clients with no token request for `unusedDays` (the periodic sweep); returns how many. */
  sweepUnused(at: number): Promise<number>;
}

/** Refused registration access token: RFC 7592 3 answers 401 and says no more (an unknown client looks the same). */
export const invalidRegistrationToken = () =>
  new OAuthError('invalid_token', 'The registration access token is missing or invalid for this client.', 401);

const initialAccessTokenHash = (hash: SecretHasher, token: string) => hash('initial-access-token', token);

/**
 * An initial access token (RFC 7591 3) for one registration under the `initial-token` policy,
 * good for `ttlHours`: returned once, stored as its keyed hash (`clients registration-token`).
 */
export async function issueInitialAccessToken(
  { db, hash, now }: { db: Db; hash: SecretHasher; now: () => number },
  ttlHours: number,
): Promise<{ token: string; expiresAt: number }> {
  const token = randomToken('iat_');
  const at = now();
  const expiresAt = at + ttlHours * 60 * 60 * 1000;
  await db
    .insertInto('client_registration_tokens')
    .values({ token_hash: initialAccessTokenHash(hash, token), created_at: at, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

export function createClientRegistration(deps: {
  db: Db;
  clients: ClientService;
  throttle: Throttle;
  events: EventLog;
  hash: SecretHasher;
  now: () => number;
  issuer: string;
  policy: RegistrationPolicy;
  unusedDays: number;
}): ClientRegistration {
  const { db, clients, throttle, events, hash, now, issuer, policy } = deps;
  const tokenHash = (token: string) => hash('registration-access-token', token);
  const initialHash = (token: string) => initialAccessTokenHash(hash, token);

  const information = (client: ClientRecord, token: string): ClientInformation => ({
    client_id: client.id,
    client_id_issued_at: Math.floor(client.createdAt / 1000),
    client_name: client.name,
    redirect_uris: client.redirectUris,
    grant_types: client.deviceCodeGrant ? GRANT_TYPES : GRANT_TYPES.filter((type) => type !== DEVICE_CODE_GRANT_TYPE),
    response_types: RESPONSE_TYPES,
    token_endpoint_auth_method: 'none',
    registration_access_token: token,
    registration_client_uri: `${issuer}${Paths.registration}/${encodeURIComponent(client.id)}`,
  });

  /** The registered client the token belongs to; a wrong token and an unknown client are refused alike, in constant time. */
  const authorized = async (clientId: string, token: string | undefined): Promise<ClientRecord> => {
    const found = clientId.length <= 200 ? await clients.findRegistered(clientId) : undefined;
    const expected = found?.registrationTokenHash ?? tokenHash('unknown-client');
    const matches = safeEqual(tokenHash(token ?? ''), expected);
    if (!found || !matches || !token) throw invalidRegistrationToken();
    return found.client;
  };

  const liveInitialToken = async (token: string): Promise<boolean> =>
    (await db
      .selectFrom('client_registration_tokens')
      .select('token_hash')
      .where('token_hash', '=', initialHash(token))
      .where('expires_at', '>', now())
      .executeTakeFirst()) !== undefined;

  return {
    policy,

    async register({ metadata, initialToken, ip }) {
      if (policy === 'off') throw new OAuthError('invalid_request', 'Client registration is off.');
      await throttle.consume(
        `client-registration:ip:${ip}`,
        CLIENT_REGISTRATIONS_PER_IP,
        'Too many client registrations from this network. Try again later.',
      );
      // Checked before the metadata (a wrong token learns nothing of it) but spent only once the metadata passed.
      if (policy === 'initial-token' && !(initialToken && (await liveInitialToken(initialToken))))
        throw new OAuthError('invalid_token', 'An initial access token is required to register a client.', 401);
      const checked = checkRegistrationMetadata(metadata, policy);
      if (policy === 'initial-token') {
        // Single use: the one statement that deletes it decides which of two concurrent registrations gets it.
        const spent = await db
          .deleteFrom('client_registration_tokens')
          .where('token_hash', '=', initialHash(initialToken as string))
          .where('expires_at', '>', now())
          .executeTakeFirst();
        if (Number(spent.numDeletedRows) === 0)
          throw new OAuthError('invalid_token', 'An initial access token is required to register a client.', 401);
      }
      const token = randomToken('rat_');
      const keys = await clients.create({
        name: checked.name,
        origins: [],
        redirectUris: checked.redirectUris,
        public: true,
        thirdParty: true,
        deviceCodeGrant: checked.deviceCodeGrant,
        registrationTokenHash: tokenHash(token),
      });
      await events.record({ type: 'client.registered', clientId: keys.clientId, detail: { policy } });
      const client = await clients.findById(keys.clientId);
      return information(client as ClientRecord, token);
    },

    async read(clientId, token) {
      return information(await authorized(clientId, token), token as string);
    },

    async update(clientId, token, metadata) {
      const client = await authorized(clientId, token);
      const given = (metadata ?? {}) as Record<string, unknown>;
      // RFC 7592 2.2: the body names the client it updates, and carries no secret (a public client has none).
      if (given.client_id !== clientId) throw metadataError('client_id must be the client being updated');
      if ('client_secret' in given) throw metadataError('a registered client has no client_secret');
      const { client_id: _id, registration_access_token: _t, registration_client_uri: _u, client_id_issued_at: _at, ...rest } = given;
      const checked = checkRegistrationMetadata(rest, policy);
      await clients.setRegisteredMetadata(client.id, checked.name, checked.redirectUris);
      if (checked.deviceCodeGrant !== client.deviceCodeGrant)
        await clients.setDeviceCodeGrant(client.id, checked.deviceCodeGrant ? 'yes' : 'no');
      await events.record({ type: 'client.updated', clientId, detail: { registered: true } });
      const updated = { ...client, name: checked.name, redirectUris: checked.redirectUris, deviceCodeGrant: checked.deviceCodeGrant };
      return information(updated, token as string);
    },

    async remove(clientId, token) {
      await authorized(clientId, token);
      await clients.delete(clientId);
      await events.record({ type: 'client.deleted', clientId, detail: { reason: 'registration' } });
    },

    issueInitialToken: (ttlHours) => issueInitialAccessToken({ db, hash, now }, ttlHours),

    async sweepUnused(at) {
      await db.deleteFrom('client_registration_tokens').where('expires_at', '<=', at).execute();
      const before = at - deps.unusedDays * 24 * 60 * 60 * 1000;
      let deleted = 0;
      for (const clientId of await clients.unusedRegistered(before, 100)) {
        try {
          await clients.delete(clientId);
        } catch {
          continue; // deleted meanwhile (by itself, or on another node)
        }
        deleted += 1;
        await events.record({ type: 'client.deleted', clientId, detail: { reason: 'unused' } });
      }
      return deleted;
    },
  };
}
