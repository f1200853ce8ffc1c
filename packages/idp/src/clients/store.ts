import { IMMUTABLE_ROW_CACHE_ENTRIES } from '../defaults.js';
import { isSigningAlg, type SigningAlg } from '../keys/algs.js';
import { afterRow, type PageStart } from '../storage/pagination.js';
import type { Database, Db } from '../storage/schema.js';
import type { ClientSendRules } from './send-rules.js';

export interface ClientRecord {
  id: string;
  name: string;
  origins: string[];
  mfaPolicy: 'optional' | 'required';
  /** OIDC Dynamic Client Registration `id_token_signed_response_alg`. */
  idTokenSignedResponseAlg: SigningAlg;
  createdAt: number;
  /** Where the authorization endpoint may send codes: compared by exact string match (RFC 9700 2.1). */
  redirectUris: string[];
  /**
   * RFC 6749 2.1: a public client has no secret key and must use PKCE; a machine client acts for
   * itself (client_credentials, RFC 6749 4.4) and never signs a user in.
   */
  type: 'confidential' | 'public' | 'machine';
  /** A machine client's public keys for private_key_jwt (RFC 7523): inline, or where it publishes them; both null: its secret key only. */
  keys: ClientKeys;
  /** Where the end-session endpoint may return (OIDC RP-Initiated Logout 1.0 3.1): exact string match. */
  postLogoutRedirectUris: string[];
  /** A passkey sign-in (user verification required) also passes this app's MFA; false: the user's MFA step follows it. Default true. */
  passkeySatisfiesMfa: boolean;
  /** RFC 9449 5.2: every token request of this client must carry a DPoP proof. Default false. */
  dpopBoundAccessTokens: boolean;
  /** OIDC Back-Channel Logout 1.0 2.2 and Front-Channel Logout 1.0 2 (oidc/backchannel-logout.ts, oidc/logout-routes.ts). */
  logout: ClientLogout;
  /** RFC 9126 require_pushed_authorization_requests: /authorize takes this client's requests only as a pushed request_uri. Default false. */
  requirePushedAuthorizationRequests: boolean;
  /**
   * A third-party application: the user sees a consent page listing what it asks before its
   * code is issued (oidc/consent.ts). Default false (first-party: no consent page). Never a machine client.
   */
  thirdParty: boolean;
  /** The countries its SMS may go to and the mail domains its codes may go to (otp/send-rules.ts); null: the service's rule. */
  sendRules: ClientSendRules;
  /**
   * The client registered itself (RFC 7591, client-registration/registration.ts): public and third-party,
   * changed or deleted with its registration access token, swept when left unused. Default false.
   */
  registered: boolean;
  /** The client may use the device authorization grant (RFC 8628, device-authorization/). Default false; never a machine client. */
  deviceCodeGrant: boolean;
  /**
   * Set only on a client whose client_id is the https URL of its Client ID Metadata Document
   * (clients/metadata-document.ts): public and third-party, with no row in `clients`; its name,
   * redirect URIs and logo are the document's, as cached.
   */
  metadataDocument?: { logoUri: string | null };
  /**
   * Set only on the built-in hosted client as it acts for a pending authorization request
   * (oidc/service.ts hostedClientFor): the application the user signs in to, which mails and
   * pages name and brand, never the built-in client.
   */
  app?: { id: string; name: string };
}

/** The public keys a machine client signs its assertions with (private_key_jwt). */
export interface ClientKeys {
  jwks: { keys: Array<Record<string, unknown>> } | null;
  jwksUri: string | null;
}

export const NO_KEYS: ClientKeys = { jwks: null, jwksUri: null };

/** Where a client hears that a session it got tokens in ended; every field null/false when it registered none. */
export interface ClientLogout {
  /** POSTed a logout token (`logout_token` form field) when a session ends. */
  backchannelLogoutUri: string | null;
  /** Every logout token carries `sid` (we always send it when the session had one). */
  backchannelLogoutSessionRequired: boolean;
  /** Loaded in a hidden iframe of the signed-out page; on one of the client's redirect URI origins. */
  frontchannelLogoutUri: string | null;
  /** The framed URI gets `iss` and `sid` as query parameters. */
  frontchannelLogoutSessionRequired: boolean;
}

export const NO_LOGOUT: ClientLogout = {
  backchannelLogoutUri: null,
  backchannelLogoutSessionRequired: false,
  frontchannelLogoutUri: null,
  frontchannelLogoutSessionRequired: false,
};

/** The application a client record stands for in mails and pages: the requesting app for the hosted client, else itself. */
export const appOf = (client: Pick<ClientRecord, 'id' | 'name' | 'app'>): { id: string; name: string } =>
  client.app ?? { id: client.id, name: client.name };

/** A name the client gave itself (registration, metadata document): pages mark it unverified. */
export const isNameUnverified = (client: Pick<ClientRecord, 'registered' | 'metadataDocument'>): boolean =>
  client.registered || client.metadataDocument !== undefined;

type Row = Database['clients'];

/** A clients row as the flows see it (also for reads that join it, factors/device-key/sign-in-store.ts). */
export function toRecord(row: Row): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    origins: JSON.parse(row.origins) as string[],
    mfaPolicy: row.mfa_policy === 'required' ? 'required' : 'optional',
    idTokenSignedResponseAlg: isSigningAlg(row.id_token_signed_response_alg) ? row.id_token_signed_response_alg : 'RS256',
    createdAt: Number(row.created_at),
    redirectUris: JSON.parse(row.redirect_uris) as string[],
    type: row.client_type === 'public' || row.client_type === 'machine' ? row.client_type : 'confidential',
    keys: { jwks: row.jwks ? (JSON.parse(row.jwks) as ClientKeys['jwks']) : null, jwksUri: row.jwks_uri ?? null },
    postLogoutRedirectUris: JSON.parse(row.post_logout_redirect_uris) as string[],
    passkeySatisfiesMfa: Number(row.passkey_satisfies_mfa ?? 1) !== 0,
    dpopBoundAccessTokens: Number(row.dpop_bound_access_tokens ?? 0) !== 0,
    logout: {
      backchannelLogoutUri: row.backchannel_logout_uri ?? null,
      backchannelLogoutSessionRequired: Number(row.backchannel_logout_session_required ?? 0) !== 0,
      frontchannelLogoutUri: row.frontchannel_logout_uri ?? null,
      frontchannelLogoutSessionRequired: Number(row.frontchannel_logout_session_required ?? 0) !== 0,
    },
    requirePushedAuthorizationRequests: Number(row.require_pushed_authorization_requests ?? 0) !== 0,
    thirdParty: Number(row.third_party ?? 0) !== 0,
    registered: Number(row.registered ?? 0) !== 0,
    deviceCodeGrant: Number(row.device_code_grant ?? 0) !== 0,
    sendRules: {
      smsCountries: row.sms_countries ? (JSON.parse(row.sms_countries) as string[]) : null,
      mailDomains: row.mail_domains ? (JSON.parse(row.mail_domains) as string[]) : null,
    },
  };
}

const sendRuleColumns = (rules: ClientSendRules) => ({
  sms_countries: rules.smsCountries && JSON.stringify(rules.smsCountries),
  mail_domains: rules.mailDomains && JSON.stringify(rules.mailDomains),
});

const logoutColumns = (logout: ClientLogout) => ({
  backchannel_logout_uri: logout.backchannelLogoutUri,
  backchannel_logout_session_required: logout.backchannelLogoutSessionRequired ? 1 : 0,
  frontchannel_logout_uri: logout.frontchannelLogoutUri,
  frontchannel_logout_session_required: logout.frontchannelLogoutSessionRequired ? 1 : 0,
});

function rowOf(client: ClientRecord, publishableKeyHash: string, secretKeyHash: string, registrationTokenHash?: string): Row {
  return {
    id: client.id,
    name: client.name,
    origins: JSON.stringify(client.origins),
    mfa_policy: client.mfaPolicy,
    id_token_signed_response_alg: client.idTokenSignedResponseAlg,
    publishable_key_hash: publishableKeyHash,
    secret_key_hash: secretKeyHash,
    created_at: client.createdAt,
    redirect_uris: JSON.stringify(client.redirectUris),
    client_type: client.type,
    post_logout_redirect_uris: JSON.stringify(client.postLogoutRedirectUris),
    passkey_satisfies_mfa: client.passkeySatisfiesMfa ? 1 : 0,
    dpop_bound_access_tokens: client.dpopBoundAccessTokens ? 1 : 0,
    ...logoutColumns(client.logout),
    require_pushed_authorization_requests: client.requirePushedAuthorizationRequests ? 1 : 0,
    third_party: client.thirdParty ? 1 : 0,
    registered: client.registered ? 1 : 0,
    device_code_grant: client.deviceCodeGrant ? 1 : 0,
    registration_token_hash: registrationTokenHash ?? null,
    last_used_at: null,
    jwks: client.keys.jwks ? JSON.stringify(client.keys.jwks) : null,
    jwks_uri: client.keys.jwksUri,
    ...sendRuleColumns(client.sendRules),
  };
}

export function createClientStore(db: Db) {
  const recorded = new Set<string>();
  return {
    /** `registrationTokenHash`: a registered client's registration access token (RFC 7592), by keyed hash. */
    async insert(client: ClientRecord, publishableKeyHash: string, secretKeyHash: string, registrationTokenHash?: string): Promise<void> {
      await db
        .insertInto('clients')
        .values(rowOf(client, publishableKeyHash, secretKeyHash, registrationTokenHash))
        .execute();
    },

    /** A registered client and the keyed hash of its registration access token; undefined for any other client. */
    async findRegistered(id: string): Promise<{ client: ClientRecord; registrationTokenHash: string } | undefined> {
      const row = await db
        .selectFrom('clients')
        .selectAll()
        .where('id', '=', id)
        .where('registered', '=', 1)
        .where('registration_token_hash', 'is not', null)
        .executeTakeFirst();
      return row ? { client: toRecord(row), registrationTokenHash: row.registration_token_hash as string } : undefined;
    },

    /** Replaces what a registered client said of itself (RFC 7592 2.2: name and redirect URIs); false when it is not one. */
    async setRegisteredMetadata(id: string, name: string, redirectUris: string[]): Promise<boolean> {
      const result = await db
        .updateTable('clients')
        .set({ name, redirect_uris: JSON.stringify(redirectUris) })
        .where('id', '=', id)
        .where('registered', '=', 1)
        .executeTakeFirst();
      return Number(result.numUpdatedRows) > 0;
    },

    /** Marks a registered client used now, at most once per `everyMs` (one write per token request would be waste). */
    async touchRegistered(id: string, at: number, everyMs: number): Promise<void> {
      await db
        .updateTable('clients')
        .set({ last_used_at: at })
        .where('id', '=', id)
        .where('registered', '=', 1)
        .where((w) => w.or([w('last_used_at', 'is', null), w('last_used_at', '<', at - everyMs)]))
        .execute();
    },

    /** Registered clients whose last token request (or, with none, their registration) is before `before`, at most `limit`. */
    async unusedRegistered(before: number, limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom('clients')
        .select('id')
        .where('registered', '=', 1)
        .where((w) => w.or([w('last_used_at', '<', before), w.and([w('last_used_at', 'is', null), w('created_at', '<', before)])]))
        .limit(limit)
        .execute();
      return rows.map((row) => row.id);
    },

    /** Inserts a built-in client, or brings its origins and key up to date (every node may run this at start). */
    async upsertFirstParty(client: ClientRecord, publishableKeyHash: string, secretKeyHash: string): Promise<void> {
      await db
        .insertInto('clients')
        .values(rowOf(client, publishableKeyHash, secretKeyHash))
        .onConflict((oc) =>
          oc.column('id').doUpdateSet({
            origins: JSON.stringify(client.origins),
            publishable_key_hash: publishableKeyHash,
            redirect_uris: JSON.stringify(client.redirectUris),
            mfa_policy: client.mfaPolicy,
          }),
        )
        .execute();
    },

    /**
     * The row of a client known by its metadata document (clients/metadata-document.ts), written
     * when a user allows it: what the code and refresh token statements join. Its name and
     * redirect URIs follow the document (for listings); the flows read the document itself.
     */
    async upsertMetadataDocumentClient(client: ClientRecord, publishableKeyHash: string, secretKeyHash: string): Promise<void> {
      await db
        .insertInto('clients')
        .values(rowOf(client, publishableKeyHash, secretKeyHash))
        .onConflict((oc) => oc.column('id').doUpdateSet({ name: client.name, redirect_uris: JSON.stringify(client.redirectUris) }))
        .execute();
    },

    async findByPublishableKeyHash(hash: string): Promise<ClientRecord | undefined> {
      const row = await db.selectFrom('clients').selectAll().where('publishable_key_hash', '=', hash).executeTakeFirst();
      return row && toRecord(row);
    },

    async findWithSecretHash(id: string): Promise<{ client: ClientRecord; secretKeyHash: string } | undefined> {
      const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
      return row && { client: toRecord(row), secretKeyHash: row.secret_key_hash };
    },

    /** A confidential client's new secret key hash; false for an unknown or public client. */
    async setSecretKeyHash(id: string, secretKeyHash: string): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ secret_key_hash: secretKeyHash })
        .where('id', '=', id)
        .where('client_type', 'in', ['confidential', 'machine'])
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setIdTokenAlg(id: string, alg: SigningAlg): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ id_token_signed_response_alg: alg })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setAddresses(id: string, origins: string[], redirectUris: string[]): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ origins: JSON.stringify(origins), redirect_uris: JSON.stringify(redirectUris) })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setPostLogoutRedirectUris(id: string, uris: string[]): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ post_logout_redirect_uris: JSON.stringify(uris) })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setMfaPolicy(id: string, policy: ClientRecord['mfaPolicy']): Promise<boolean> {
      const row = await db.updateTable('clients').set({ mfa_policy: policy }).where('id', '=', id).returning('id').executeTakeFirst();
      return row !== undefined;
    },

    async setPasskeySatisfiesMfa(id: string, satisfies: boolean): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ passkey_satisfies_mfa: satisfies ? 1 : 0 })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setLogout(id: string, logout: ClientLogout): Promise<boolean> {
      const row = await db.updateTable('clients').set(logoutColumns(logout)).where('id', '=', id).returning('id').executeTakeFirst();
      return row !== undefined;
    },

    async setDpopBoundAccessTokens(id: string, required: boolean): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ dpop_bound_access_tokens: required ? 1 : 0 })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setRequirePushedRequests(id: string, required: boolean): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ require_pushed_authorization_requests: required ? 1 : 0 })
        .where('id', '=', id)
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setDeviceCodeGrant(id: string, allowed: boolean): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ device_code_grant: allowed ? 1 : 0 })
        .where('id', '=', id)
        .where('client_type', '!=', 'machine')
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setThirdParty(id: string, thirdParty: boolean): Promise<boolean> {
      const row = await db
        .updateTable('clients')
        .set({ third_party: thirdParty ? 1 : 0 })
        .where('id', '=', id)
        .where('client_type', '!=', 'machine')
        .returning('id')
        .executeTakeFirst();
      return row !== undefined;
    },

    async setSendRules(id: string, rules: ClientSendRules): Promise<boolean> {
      const row = await db.updateTable('clients').set(sendRuleColumns(rules)).where('id', '=', id).returning('id').executeTakeFirst();
      return row !== undefined;
    },

    /** Remembers that the user signed in to the client (idempotent). */
    /**
     * Once per client and user: a `client_users` row is never updated, and deleted only with
     * its client (`delete` below, maybe by another process), whose id is never reused and
     * never authenticates again. So a pair recorded once needs no second write; every token
     * request used to make one.
     */
    async recordSignIn(clientId: string, userId: string, now: number): Promise<void> {
      const pair = `${clientId} ${userId}`;
      if (recorded.has(pair)) return;
      await db
        .insertInto('client_users')
        .values({ client_id: clientId, user_id: userId, first_signed_in_at: now })
        .onConflict((oc) => oc.columns(['client_id', 'user_id']).doNothing())
        .execute();
      if (recorded.size >= IMMUTABLE_ROW_CACHE_ENTRIES) recorded.clear();
      recorded.add(pair);
    },

    async hasSignedIn(clientId: string, userId: string): Promise<boolean> {
      const row = await db
        .selectFrom('client_users')
        .select('user_id')
        .where('client_id', '=', clientId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row !== undefined;
    },

    async findById(id: string): Promise<ClientRecord | undefined> {
      const row = await db.selectFrom('clients').selectAll().where('id', '=', id).executeTakeFirst();
      return row && toRecord(row);
    },

    async list(): Promise<ClientRecord[]> {
      const rows = await db.selectFrom('clients').selectAll().orderBy('created_at').execute();
      return rows.map(toRecord);
    },

    /** A page of the clients but `excluded` (the built-in ones), oldest first. */
    async page(after: PageStart, limit: number, excluded: string[]): Promise<ClientRecord[]> {
      let query = db.selectFrom('clients').selectAll().where('id', 'not in', excluded).orderBy('created_at').orderBy('id').limit(limit);
      if (after) query = query.where(afterRow(after));
      return (await query.execute()).map(toRecord);
    },

    /**
     * Deletes the client and everything bound to it (its devices and what hangs on them,
     * pending registrations and MFA steps, unspent codes, refresh tokens, sign-in records and sessions it got codes in, delegation keys, branding, the APIs' resource server naming it) in
     * one transaction. The users stay: they may use other clients. False when unknown.
     */
    async delete(id: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const devices = tx.selectFrom('devices').select('id').where('client_id', '=', id);
        await tx.deleteFrom('mfa_remembered').where('device_id', 'in', devices).execute();
        await tx.deleteFrom('mfa_sessions').where('client_id', '=', id).execute();
        await tx.deleteFrom('devices').where('client_id', '=', id).execute();
        await tx.deleteFrom('registrations').where('client_id', '=', id).execute();
        await tx.deleteFrom('auth_codes').where('client_id', '=', id).execute();
        const families = tx.selectFrom('refresh_token_families').select('id').where('client_id', '=', id);
        await tx.deleteFrom('refresh_tokens').where('family_id', 'in', families).execute();
        await tx.deleteFrom('refresh_token_families').where('client_id', '=', id).execute();
        await tx.deleteFrom('client_users').where('client_id', '=', id).execute();
        await tx.deleteFrom('session_clients').where('client_id', '=', id).execute();
        await tx.deleteFrom('delegation_sp_keys').where('client_id', '=', id).execute();
        await tx.deleteFrom('client_branding').where('client_id', '=', id).execute();
        await tx.deleteFrom('consents').where('client_id', '=', id).execute();
        const row = await tx.deleteFrom('clients').where('id', '=', id).returning('id').executeTakeFirst();
        // After the client's row: an API naming it meanwhile (apis/store.ts reads it FOR SHARE) is cleared too.
        await tx.updateTable('apis').set({ resource_server_client_id: null }).where('resource_server_client_id', '=', id).execute();
        for (const pair of recorded) if (pair.startsWith(`${id} `)) recorded.delete(pair);
        return row !== undefined;
      });
    },
  };
}

export type ClientStore = ReturnType<typeof createClientStore>;
