import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import {
  BROWSER_CLIENT_CACHE_ENTRIES,
  BROWSER_CLIENT_CACHE_MS,
  CLIENT_REDIRECT_URIS_MAX,
  PAGE_SIZE_MAX,
  REGISTERED_CLIENT_TOUCH_MS,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import { isSigningAlg, SIGNING_ALGS } from '../keys/algs.js';
import { keysetPage, type PageQuery } from '../storage/pagination.js';
import { checkClientKeys } from './keys.js';
import { type ClientMetadataDocuments, isMetadataDocumentClientId } from './metadata-document.js';
import { type ClientSendRules, NO_CLIENT_SEND_RULES, parseCountries, parseMailDomains } from './send-rules.js';
import { type ClientLogout, type ClientRecord, type ClientStore, NO_KEYS, NO_LOGOUT } from './store.js';
import { checkLogout, checkPostLogoutRedirectUris, checkRedirectUri, normalizeOrigin } from './uris.js';

/**
 * The first-party client the hosted sign-in pages use (oidc/): service-web runs on the
 * issuer's own origin against it. Built in: not listed, updated or deleted by operators.
 */
export const HOSTED_CLIENT_ID = 'cli_hosted_signin';
/**
 * The operator console's client (console/): /admin signs operators in through the hosted
 * sign-in like any app with redirects, under a policy no operator can change (MFA required).
 */
export const CONSOLE_CLIENT_ID = 'cli_operator_console';
/**
 * The account center's client (account-center/): /account signs every user in through the hosted
 * sign-in like any app with redirects; no second factor required (it is every user's page).
 */
export const ACCOUNT_CLIENT_ID = 'cli_account_center';
/**
 * The device verification page's client (device-authorization/): /device signs the user in
 * through the hosted sign-in (or the browser's session) before they approve a device.
 */
export const DEVICE_VERIFICATION_CLIENT_ID = 'cli_device_verification';
const firstParty = new Set([HOSTED_CLIENT_ID, CONSOLE_CLIENT_ID, ACCOUNT_CLIENT_ID, DEVICE_VERIFICATION_CLIENT_ID]);

/**
 * The service's own clients (hosted pages, console, account center): no operator's to see,
 * change, brand, give delegation keys or delete. Every such path answers as for an unknown
 * client (404, exit 1 `no client …`), the admin API, the console and the CLI alike.
 */
export const isBuiltInClient = (clientId: string): boolean => firstParty.has(clientId);

/** A built-in client: its origin and, for a client with redirects, its redirect URI and MFA policy. */
export interface FirstPartyClient {
  id: string;
  name: string;
  origin: string;
  publishableKey: string;
  redirectUris?: string[];
  mfaPolicy?: 'optional' | 'required';
}

export interface NewClientKeys {
  clientId: string;
  publishableKey: string;
  /** Absent for a public client: it has none. */
  secretKey?: string;
}

export interface NewClient {
  name: string;
  origins: string[];
  idTokenSignedResponseAlg?: string;
  redirectUris?: string[];
  /** RFC 6749 2.1: no secret key; the token endpoint takes its client_id alone and requires PKCE. */
  public?: boolean;
  /**
   * RFC 6749 4.4: a machine client, which gets tokens for itself with client_credentials and has
   * no origins or redirect URIs; it authenticates by its secret key, or by private_key_jwt when
   * it registers its public keys (`jwks`, or `jwksUri`).
   */
  machine?: boolean;
  jwks?: unknown;
  jwksUri?: string;
  /** OIDC RP-Initiated Logout 1.0 3.1: where the end-session endpoint may send the browser back. */
  postLogoutRedirectUris?: string[];
  /** OIDC Back-Channel and Front-Channel Logout: where the client hears that a session ended. */
  logout?: Partial<ClientLogout>;
  /**
   * The settings `clients update` changes, given at creation so the client never exists in a
   * weaker state first (setMfaPolicy, setPasskeyMfa, setDpop check the same values).
   */
  mfaPolicy?: string;
  passkeySatisfiesMfa?: boolean;
  dpopBoundAccessTokens?: boolean;
  requirePushedAuthorizationRequests?: boolean;
  /** A third-party application (consent page, oidc/consent.ts); not for a machine client. Default false. */
  thirdParty?: boolean;
  /** May use the device authorization grant (RFC 8628); not for a machine client. Default false. */
  deviceCodeGrant?: boolean;
  /** Its SMS countries and mail domains (SendRulesChange): null or absent, the service's rule. */
  sendRules?: SendRulesChange;
  /** A client that registers itself (client-registration/registration.ts): the keyed hash of its registration access token. */
  registrationTokenHash?: string;
}

/**
 * An application's send rules as an operator gives them (`clients update --sms-countries`,
 * PATCH /admin/v1/clients/{id} `smsCountries`): a list replaces the registered one, null removes
 * it (back to the service's rule), absent keeps it. An empty country list sends no SMS at all.
 */
export interface SendRulesChange {
  smsCountries?: string[] | null;
  mailDomains?: string[] | null;
}

/** The addresses of a client an operator replaces together (PATCH /admin/v1/clients/{id}, the console's edit form). */
export interface AddressChange {
  origins?: string[];
  redirectUris?: string[];
  postLogoutRedirectUris?: string[];
  /** A field given replaces the registered one (a URI null removes it); one not given is kept. */
  logout?: Partial<ClientLogout>;
}

export interface ClientService {
  create(input: NewClient): Promise<NewClientKeys>;
  /** The operators' clients (built-in first-party ones are not theirs to see or change). */
  list: () => Promise<ClientRecord[]>;
  /** One of the operators' clients; undefined for an unknown or built-in one. */
  operated(id: string): Promise<ClientRecord | undefined>;
  /** A page of `list`, oldest first (the admin API's and the CLI's listing). */
  page(query: PageQuery): Promise<{ items: ClientRecord[]; nextCursor: string | null }>;
  /**
   * A built-in client of the service itself (oidc/: the hosted sign-in pages), on the
   * issuer's origin. Public: it has no secret, and its codes are redeemed only inside the service.
   */
  ensureFirstParty(input: FirstPartyClient): Promise<void>;
  findById: (id: string) => Promise<ClientRecord | undefined>;
  recordSignIn: (clientId: string, userId: string) => Promise<void>;
  hasSignedIn: (clientId: string, userId: string) => Promise<boolean>;
  /** RS256 (default, the spec's), ES256 or EdDSA: how the client's ID tokens are signed. */
  setIdTokenAlg(clientId: string, alg: string): Promise<void>;
  /** Replaces the client's post-logout redirect URIs (an empty list: the end-session endpoint never redirects for it). */
  setPostLogoutRedirectUris(clientId: string, uris: string[]): Promise<void>;
  /**
   * Replaces the origins, redirect URIs, post-logout redirect URIs and/or logout URIs (one not
   * given is kept), checked as `create` checks them: all of them before anything changes.
   */
  setAddresses(clientId: string, change: AddressChange): Promise<void>;
  /** `optional` (default): users choose whether to enroll in MFA; `required`: no code without it. */
  setMfaPolicy(clientId: string, policy: string): Promise<void>;
  /** `yes` (default): a passkey sign-in also passes the app's MFA (amr `mfa`); `no`: the user's MFA step follows it. */
  setPasskeyMfa(clientId: string, value: string): Promise<void>;
  /** `required`: every token request of the client must carry a DPoP proof (RFC 9449 5.2); `optional` (default): a proof binds the tokens when sent. */
  setDpop(clientId: string, value: string): Promise<void>;
  /** `required`: /authorize takes the client's requests only as pushed ones (RFC 9126); `optional` (default): its choice. */
  setPushedRequests(clientId: string, value: string): Promise<void>;
  /** `yes`: a third-party application, whose users consent to what it asks (oidc/consent.ts); `no` (default): first-party. Not a machine client. */
  setThirdParty(clientId: string, value: string): Promise<void>;
  /** Allows (`yes`) or stops (`no`) the device authorization grant (RFC 8628) for a client that signs users in. */
  setDeviceCodeGrant(clientId: string, value: string): Promise<void>;
  /** Changes the countries its SMS may go to and the mail domains its codes may go to (SendRulesChange), checked before anything changes. */
  setSendRules(clientId: string, change: SendRulesChange): Promise<void>;
  /**
   * A confidential client's new secret key, returned once and stored as its keyed hash. The old
   * one stops at once, with no grace (docs/operations.md): codes and refresh tokens it holds are
   * redeemed only with the new one.
   */
  rotateSecret(clientId: string): Promise<string>;
  /** Deletes the client and everything bound to it; its keys stop working at once. */
  delete(clientId: string): Promise<void>;
  /** The client behind a browser request, if its key is valid and the origin is one of its own. */
  authenticateBrowser(publishableKey: string | undefined, origin: string | undefined): Promise<ClientRecord>;
  /**
   * authenticateBrowser for a request whose answer is worth nothing without a later request
   * that authenticates the client afresh (the device challenge: only an authenticate spends
   * it). The record may be up to BROWSER_CLIENT_CACHE_MS old when changed on another node; a
   * change on this node drops it at once. Only known keys are kept; the origin is checked
   * every time.
   */
  authenticateBrowserCached(publishableKey: string | undefined, origin: string | undefined): Promise<ClientRecord>;
  /** The keyed hash a publishable key is stored as (for reads that join the client, factors/device-key/sign-in-store.ts). */
  publishableKeyHash: (publishableKey: string) => string;
  checkBrowserOrigin: typeof checkBrowserOrigin;
  /** The keyed hash a secret key is stored as (for checks folded into another statement). */
  secretKeyHash: (secretKey: string) => string;
  /** The client behind a backend request, if its secret key matches (constant time). */
  authenticateBackend(clientId: string, secretKey: string): Promise<ClientRecord | undefined>;
  /**
   * The client of a token request: a confidential one by its secret key, a public one by its
   * client_id alone (RFC 6749 2.3, `token_endpoint_auth_method: none`). A confidential client
   * without its secret, or a public one sending a secret, is refused.
   */
  authenticateTokenClient(clientId: string, secretKey: string | undefined): Promise<ClientRecord | undefined>;
  /** A machine client by its secret key (client_secret_basic or _post at the token endpoint), constant time. */
  authenticateMachine(clientId: string, secretKey: string): Promise<ClientRecord | undefined>;
  /** A client that registered itself, with the keyed hash of its registration access token (client-registration/registration.ts). */
  findRegistered(clientId: string): Promise<{ client: ClientRecord; registrationTokenHash: string } | undefined>;
  /** Replaces a registered client's name and redirect URIs (already checked by client-registration/registration.ts). */
  setRegisteredMetadata(clientId: string, name: string, redirectUris: string[]): Promise<boolean>;
  /** Registered clients with no token request since `before` (nor registered since), at most `limit`: the sweep's. */
  unusedRegistered(before: number, limit: number): Promise<string[]>;
  /** Whether client_ids that are URLs name Client ID Metadata Documents (SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS). */
  metadataDocuments: boolean;
  /** Writes the row of a metadata document's client a user allowed (clients/metadata-document.ts): its codes and tokens join it. */
  recordMetadataDocumentClient(client: ClientRecord): Promise<void>;
}

/**
 * Client applications and their two keys: a publishable key for the browser, bound to the
 * client's origins, and a secret key for its backend. Both are stored only as keyed hashes
 * and shown once, at creation.
 */
export function createClientService({
  store,
  hash,
  now,
  metadataDocuments,
}: {
  store: ClientStore;
  hash: SecretHasher;
  now: () => number;
  /** When on: a client_id that is a URL is its Client ID Metadata Document's client, never a row's. */
  metadataDocuments?: ClientMetadataDocuments;
}): ClientService {
  /** A client by id: a URL names its metadata document (none when they are off), anything else a row. */
  const findById = (id: string): Promise<ClientRecord | undefined> =>
    isMetadataDocumentClientId(id) ? (metadataDocuments?.find(id) ?? Promise.resolve(undefined)) : store.findById(id);
  /** Client records by publishable-key hash, for authenticateBrowserCached only (BROWSER_CLIENT_CACHE_MS). */
  const recent = new Map<string, { client: ClientRecord; until: number }>();
  /** Bumped by every change: a read that a change overlapped is not cached. */
  let changes = 0;
  /** Runs a change of the client, then drops its cached record (after: a read made meanwhile may hold the old row). */
  const changing = async <T>(clientId: string, change: () => Promise<T>): Promise<T> => {
    changes += 1;
    try {
      return await change();
    } finally {
      changes += 1;
      for (const [key, entry] of recent) if (entry.client.id === clientId) recent.delete(key);
    }
  };
  return {
    async create(input: NewClient): Promise<NewClientKeys> {
      const idTokenSignedResponseAlg = input.idTokenSignedResponseAlg ?? 'RS256';
      if (!isSigningAlg(idTokenSignedResponseAlg)) throw new Error(`the ID token algorithm is one of ${SIGNING_ALGS.join(', ')}`);
      const mfaPolicy = input.mfaPolicy ?? 'optional';
      if (mfaPolicy !== 'optional' && mfaPolicy !== 'required') throw new Error('the MFA policy is optional or required');
      const name = input.name.trim();
      if (!name || name.length > 100) throw new Error('client name must be 1 to 100 characters');
      const redirectUris = [...new Set((input.redirectUris ?? []).map((uri) => checkRedirectUri(uri)))];
      if (redirectUris.length > CLIENT_REDIRECT_URIS_MAX) throw new Error(`a client has at most ${CLIENT_REDIRECT_URIS_MAX} redirect URIs`);
      if (input.machine && input.public) throw new Error('a client is public or machine, not both');
      if (input.machine && (input.origins.length > 0 || redirectUris.length > 0))
        throw new Error('a machine client signs no user in: it has no --origin or --redirect-uri');
      if (!input.machine && input.origins.length === 0 && redirectUris.length === 0)
        throw new Error('a client needs at least one --origin or --redirect-uri');
      if (!input.machine && (input.jwks != null || input.jwksUri != null))
        throw new Error('only a machine client registers keys (--jwks, --jwks-uri)');
      if (input.machine && input.thirdParty) throw new Error('a machine client signs no user in: it cannot be --third-party');
      if (input.machine && input.deviceCodeGrant) throw new Error('a machine client signs no user in: it cannot use the device grant');
      const keys = await checkClientKeys(input);
      const postLogoutRedirectUris = checkPostLogoutRedirectUris(input.postLogoutRedirectUris ?? []);
      const logout = checkLogout(input.logout ?? {}, NO_LOGOUT, redirectUris);
      const origins = input.origins.map(normalizeOrigin);
      const type = input.public ? 'public' : input.machine ? 'machine' : 'confidential';
      const clientId = randomToken('cli_', 12);
      const publishableKey = randomToken('pk_');
      const secretKey = randomToken('sk_');
      await store.insert(
        {
          id: clientId,
          name,
          origins,
          mfaPolicy,
          idTokenSignedResponseAlg,
          createdAt: now(),
          redirectUris,
          type,
          postLogoutRedirectUris,
          passkeySatisfiesMfa: input.passkeySatisfiesMfa ?? true,
          dpopBoundAccessTokens: input.dpopBoundAccessTokens ?? false,
          requirePushedAuthorizationRequests: input.requirePushedAuthorizationRequests ?? false,
          thirdParty: input.thirdParty ?? false,
          registered: input.registrationTokenHash !== undefined,
          deviceCodeGrant: input.deviceCodeGrant ?? false,
          logout,
          keys,
          sendRules: sendRulesOf(input.sendRules ?? {}, NO_CLIENT_SEND_RULES),
        },
        hash('publishable-key', publishableKey),
        // The column predates public clients and is NOT NULL: a public client's is the hash of a
        // value nobody is shown, and authenticateBackend refuses public clients before comparing.
        hash('secret-key', secretKey),
        input.registrationTokenHash,
      );
      return type === 'public' ? { clientId, publishableKey } : { clientId, publishableKey, secretKey };
    },

    list: async () => (await store.list()).filter((c) => !firstParty.has(c.id)),
    operated: async (id: string) => (firstParty.has(id) ? undefined : store.findById(id)),
    page: (query: PageQuery) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.page(after, limit, [...firstParty])),

    async ensureFirstParty(input: FirstPartyClient): Promise<void> {
      await changing(input.id, () =>
        store.upsertFirstParty(
          {
            id: input.id,
            name: input.name,
            origins: [input.origin],
            mfaPolicy: input.mfaPolicy ?? 'optional',
            idTokenSignedResponseAlg: 'RS256',
            createdAt: now(),
            redirectUris: input.redirectUris ?? [],
            type: 'public',
            keys: NO_KEYS,
            postLogoutRedirectUris: [],
            passkeySatisfiesMfa: true,
            dpopBoundAccessTokens: false,
            requirePushedAuthorizationRequests: false,
            thirdParty: false,
            registered: false,
            deviceCodeGrant: false,
            logout: NO_LOGOUT,
            sendRules: NO_CLIENT_SEND_RULES,
          },
          hash('publishable-key', input.publishableKey),
          hash('secret-key', randomToken('sk_')),
        ),
      );
    },
    findById,
    recordSignIn: (clientId: string, userId: string) => store.recordSignIn(clientId, userId, now()),
    hasSignedIn: (clientId: string, userId: string) => store.hasSignedIn(clientId, userId),

    async setIdTokenAlg(clientId: string, alg: string): Promise<void> {
      if (!isSigningAlg(alg)) throw new Error(`the ID token algorithm is one of ${SIGNING_ALGS.join(', ')}`);
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setIdTokenAlg(clientId, alg))))
        throw new Error(`no client ${clientId}`);
    },

    async setAddresses(clientId: string, change: AddressChange): Promise<void> {
      const client = firstParty.has(clientId) ? undefined : await store.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      const redirectUris = change.redirectUris
        ? [...new Set(change.redirectUris.map((uri) => checkRedirectUri(uri)))]
        : client.redirectUris;
      if (redirectUris.length > CLIENT_REDIRECT_URIS_MAX) throw new Error(`a client has at most ${CLIENT_REDIRECT_URIS_MAX} redirect URIs`);
      const origins = change.origins ? [...new Set(change.origins.map(normalizeOrigin))] : client.origins;
      if (origins.length === 0 && redirectUris.length === 0) throw new Error('a client needs at least one --origin or --redirect-uri');
      const postLogout = change.postLogoutRedirectUris && checkPostLogoutRedirectUris(change.postLogoutRedirectUris);
      // Checked against the redirect URIs as changed: a front-channel URI must stay on one of their origins.
      const logout = checkLogout(change.logout ?? {}, client.logout, redirectUris);
      if (!(await changing(clientId, () => store.setAddresses(clientId, origins, redirectUris)))) throw new Error(`no client ${clientId}`);
      if (postLogout) await changing(clientId, () => store.setPostLogoutRedirectUris(clientId, postLogout));
      if (change.logout) await changing(clientId, () => store.setLogout(clientId, logout));
    },

    async setPostLogoutRedirectUris(clientId: string, uris: string[]): Promise<void> {
      const checked = checkPostLogoutRedirectUris(uris);
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setPostLogoutRedirectUris(clientId, checked))))
        throw new Error(`no client ${clientId}`);
    },

    async setMfaPolicy(clientId: string, policy: string): Promise<void> {
      if (policy !== 'optional' && policy !== 'required') throw new Error('the MFA policy is optional or required');
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setMfaPolicy(clientId, policy))))
        throw new Error(`no client ${clientId}`);
    },

    async setPasskeyMfa(clientId: string, value: string): Promise<void> {
      if (value !== 'yes' && value !== 'no') throw new Error('--passkey-mfa is yes or no');
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setPasskeySatisfiesMfa(clientId, value === 'yes'))))
        throw new Error(`no client ${clientId}`);
    },

    async setDpop(clientId: string, value: string): Promise<void> {
      if (value !== 'required' && value !== 'optional') throw new Error('--dpop is required or optional');
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setDpopBoundAccessTokens(clientId, value === 'required'))))
        throw new Error(`no client ${clientId}`);
    },

    async setPushedRequests(clientId: string, value: string): Promise<void> {
      if (value !== 'required' && value !== 'optional') throw new Error('--par is required or optional');
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.setRequirePushedRequests(clientId, value === 'required'))))
        throw new Error(`no client ${clientId}`);
    },

    async setThirdParty(clientId: string, value: string): Promise<void> {
      if (value !== 'yes' && value !== 'no') throw new Error('--third-party is yes or no');
      const client = firstParty.has(clientId) ? undefined : await store.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      if (client.type === 'machine') throw new Error('a machine client signs no user in: it cannot be --third-party');
      if (!(await changing(clientId, () => store.setThirdParty(clientId, value === 'yes')))) throw new Error(`no client ${clientId}`);
    },

    async setDeviceCodeGrant(clientId: string, value: string): Promise<void> {
      if (value !== 'yes' && value !== 'no') throw new Error('--device-grant is yes or no');
      const client = firstParty.has(clientId) ? undefined : await store.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      if (client.type === 'machine') throw new Error('a machine client signs no user in: it cannot use the device grant');
      if (!(await changing(clientId, () => store.setDeviceCodeGrant(clientId, value === 'yes')))) throw new Error(`no client ${clientId}`);
    },

    async setSendRules(clientId: string, change: SendRulesChange): Promise<void> {
      const client = firstParty.has(clientId) ? undefined : await store.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      const rules = sendRulesOf(change, client.sendRules);
      if (!(await changing(clientId, () => store.setSendRules(clientId, rules)))) throw new Error(`no client ${clientId}`);
    },

    async rotateSecret(clientId: string): Promise<string> {
      const client = firstParty.has(clientId) ? undefined : await store.findById(clientId);
      if (!client) throw new Error(`no client ${clientId}`);
      if (client.type !== 'confidential') throw new Error('a public client has no secret key to rotate');
      const secretKey = randomToken('sk_');
      if (!(await changing(clientId, () => store.setSecretKeyHash(clientId, hash('secret-key', secretKey)))))
        throw new Error(`no client ${clientId}`);
      return secretKey;
    },

    async delete(clientId: string): Promise<void> {
      if (firstParty.has(clientId) || !(await changing(clientId, () => store.delete(clientId)))) throw new Error(`no client ${clientId}`);
    },

    async authenticateBrowser(publishableKey: string | undefined, origin: string | undefined): Promise<ClientRecord> {
      return checkBrowserOrigin(
        publishableKey ? await store.findByPublishableKeyHash(hash('publishable-key', publishableKey)) : undefined,
        origin,
      );
    },

    async authenticateBrowserCached(publishableKey: string | undefined, origin: string | undefined): Promise<ClientRecord> {
      if (!publishableKey) return checkBrowserOrigin(undefined, origin);
      const keyHash = hash('publishable-key', publishableKey);
      const at = now();
      const cached = recent.get(keyHash);
      if (cached && cached.until > at) return checkBrowserOrigin(cached.client, origin);
      const before = changes;
      const client = await store.findByPublishableKeyHash(keyHash);
      recent.delete(keyHash);
      if (client && changes === before) {
        if (recent.size >= BROWSER_CLIENT_CACHE_ENTRIES) recent.delete(recent.keys().next().value as string);
        recent.set(keyHash, { client, until: at + BROWSER_CLIENT_CACHE_MS });
      }
      return checkBrowserOrigin(client, origin);
    },

    publishableKeyHash: (publishableKey: string) => hash('publishable-key', publishableKey),

    checkBrowserOrigin,

    secretKeyHash: (secretKey: string) => hash('secret-key', secretKey),

    async authenticateBackend(clientId: string, secretKey: string): Promise<ClientRecord | undefined> {
      const found = await store.findWithSecretHash(clientId);
      // Compare against a dummy when the client is unknown, so timing does not reveal client ids.
      const expected = found?.secretKeyHash ?? hash('secret-key', 'unknown-client');
      const matches = safeEqual(hash('secret-key', secretKey), expected);
      return found && matches && found.client.type === 'confidential' ? found.client : undefined;
    },

    async authenticateMachine(clientId: string, secretKey: string): Promise<ClientRecord | undefined> {
      const found = await store.findWithSecretHash(clientId);
      const expected = found?.secretKeyHash ?? hash('secret-key', 'unknown-client');
      const matches = safeEqual(hash('secret-key', secretKey), expected);
      return found && matches && found.client.type === 'machine' ? found.client : undefined;
    },

    findRegistered: (clientId: string) => store.findRegistered(clientId),
    setRegisteredMetadata: (clientId: string, name: string, redirectUris: string[]) =>
      changing(clientId, () => store.setRegisteredMetadata(clientId, name, redirectUris)),
    unusedRegistered: (before: number, limit: number) => store.unusedRegistered(before, limit),

    metadataDocuments: metadataDocuments !== undefined,

    async recordMetadataDocumentClient(client: ClientRecord): Promise<void> {
      if (!client.metadataDocument) throw new Error('not a metadata document`s client');
      await store.upsertMetadataDocumentClient(client, hash('publishable-key', randomToken('pk_')), hash('secret-key', randomToken('sk_')));
    },

    async authenticateTokenClient(clientId: string, secretKey: string | undefined): Promise<ClientRecord | undefined> {
      // A metadata document's client is public: it has no secret to send (nor a row to authenticate by one).
      if (isMetadataDocumentClientId(clientId)) return secretKey === undefined ? findById(clientId) : undefined;
      if (secretKey !== undefined) return this.authenticateBackend(clientId, secretKey);
      const client = await store.findById(clientId);
      if (client?.registered) await store.touchRegistered(client.id, now(), REGISTERED_CLIENT_TOUCH_MS);
      return client?.type === 'public' ? client : undefined;
    },
  };
}

/** The rules after a change (otp/send-rules.ts checks each list; a list given replaces, null removes, absent keeps). */
function sendRulesOf(change: SendRulesChange, current: ClientSendRules): ClientSendRules {
  return {
    smsCountries: change.smsCountries === undefined ? current.smsCountries : change.smsCountries && parseCountries(change.smsCountries),
    mailDomains: change.mailDomains === undefined ? current.mailDomains : change.mailDomains && parseMailDomains(change.mailDomains),
  };
}

/** The client a browser request's key named (undefined: none), if the request's origin is one of its own. */
function checkBrowserOrigin(client: ClientRecord | undefined, origin: string | undefined): ClientRecord {
  if (!client) throw new ServiceError('ERR_CLIENT_KEY_INVALID', 'The publishable key is missing or unknown.');
  if (!origin || !client.origins.includes(origin)) {
    throw new ServiceError('ERR_CLIENT_ORIGIN_NOT_ALLOWED', 'This origin is not registered for the publishable key.');
  }
  return client;
}
