/**
 * OAuth Client ID Metadata Documents (draft-ietf-oauth-client-id-metadata-document, adopted by
 * MCP): a client_id that is an https URL names a JSON document, published there by the client,
 * holding its metadata. Such a client is public and third-party; its name, logo and redirect URIs
 * are the document's. Off unless the operator turns it on (SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS).
 *
 * The fetch is a request the service makes to an address anyone chooses, so it goes through the
 * webhooks' address guard (webhooks/target.ts: no loopback, private, link-local... in
 * production, checked on every address the name resolves to at connect time), follows no
 * redirect, reads at most CLIENT_METADATA_DOCUMENT_MAX_BYTES within CLIENT_METADATA_DOCUMENT_TIMEOUT_MS.
 * A document is kept in this process for its Cache-Control max-age, bounded (defaults.ts): the
 * cached copy is what is enforced until it expires, so a document changed meanwhile takes effect
 * only then. Nothing is stored in the database for a document; a row in `clients` is written
 * only once a user allows the client (clients/service.ts recordMetadataDocumentClient), for the
 * statements that join its codes and refresh tokens to it.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import {
  CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES,
  CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS,
  CLIENT_METADATA_DOCUMENT_CACHE_MIN_SECONDS,
  CLIENT_METADATA_DOCUMENT_MAX_BYTES,
  CLIENT_METADATA_DOCUMENT_REFUSED_CACHE_SECONDS,
  CLIENT_METADATA_DOCUMENT_TIMEOUT_MS,
  CLIENT_METADATA_DOCUMENT_URL_MAX_LENGTH,
  CLIENT_REDIRECT_URIS_MAX,
} from '../defaults.js';
import {
  checkedLookup,
  type HostResolver,
  isInternalHost,
  normalizeHost,
  RefusedAddressError,
  systemResolver,
} from '../webhooks/target.js';
import { NO_CLIENT_SEND_RULES } from './send-rules.js';
import { type ClientRecord, NO_KEYS, NO_LOGOUT } from './store.js';
import { checkRedirectUri, loopbackIpRedirect } from './uris.js';

/** The port the client service looks URL client_ids up through; wired once, in clients/wing.ts. */
export interface ClientMetadataDocuments {
  /** The client a client_id URL stands for, from its document as cached; undefined when the document is refused. */
  find(clientId: string): Promise<ClientRecord | undefined>;
}

/** Whether a client_id is a URL (never one of ours: those are `cli_…`); such an id is looked up only through its document. */
export const isMetadataDocumentClientId = (clientId: string): boolean => /^https?:\/\//i.test(clientId);

/** Why a document was refused, for the log line (never the document's content). */
export class RefusedDocumentError extends Error {
  override name = 'RefusedDocumentError';
}

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '::1', 'localhost']);

/**
 * The client_id as a URL the draft allows (3): https (http to a loopback host too, outside
 * production, for local tests and development), a path, no fragment, no user name or password,
 * no query (the draft's SHOULD NOT, made a rule), and in the canonical form the URL parser
 * gives (so no dot segments, no upper-case host: the id is compared verbatim with the document's).
 */
export function checkClientIdUrl(clientId: string, production: boolean): URL {
  if (clientId.length > CLIENT_METADATA_DOCUMENT_URL_MAX_LENGTH) throw new RefusedDocumentError('client_id URL too long');
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new RefusedDocumentError('client_id is not a URL');
  }
  const loopback = LOOPBACK_HOSTS.has(normalizeHost(url.hostname));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && !production))
    throw new RefusedDocumentError('client_id URL must be https');
  if (url.username || url.password || url.hash || url.search || url.pathname === '/' || url.href !== clientId)
    throw new RefusedDocumentError('client_id URL is not in the form the draft allows');
  return url;
}

/**
 * A redirect URI a document may list: on the client_id's own origin, or a loopback IP
 * literal over http (RFC 8252 7.3, native apps and CLIs: any port). Never another site, a
 * private-use scheme (anyone can claim one on a device) nor javascript: and the like.
 */
function checkDocumentRedirectUri(uri: unknown, origin: string): string {
  if (typeof uri !== 'string') throw new RefusedDocumentError('a redirect URI is not a string');
  try {
    checkRedirectUri(uri);
  } catch (error) {
    throw new RefusedDocumentError((error as Error).message);
  }
  if (new URL(uri).origin === origin || loopbackIpRedirect(uri)) return uri;
  throw new RefusedDocumentError('a redirect URI is neither on the client_id`s origin nor a loopback address');
}

/** The document as a client record, or RefusedDocumentError: the draft's rules (4.1) and ours. */
export function clientOfDocument(clientId: string, url: URL, body: string, fetchedAt: number): ClientRecord {
  let document: unknown;
  try {
    document = JSON.parse(body);
  } catch {
    throw new RefusedDocumentError('the document is not JSON');
  }
  if (typeof document !== 'object' || document === null || Array.isArray(document))
    throw new RefusedDocumentError('the document is not a JSON object');
  const field = (name: string) => (document as Record<string, unknown>)[name];
  // 4.1: compared as strings, exactly; the document must say it is the client it was fetched as.
  if (field('client_id') !== clientId) throw new RefusedDocumentError('the document`s client_id is not its URL');
  // 4.1: a document is no place for a shared secret; we take public clients only.
  if (field('client_secret') !== undefined || field('client_secret_expires_at') !== undefined)
    throw new RefusedDocumentError('the document holds a client secret');
  const method = field('token_endpoint_auth_method');
  if (method !== undefined && method !== 'none') throw new RefusedDocumentError('only token_endpoint_auth_method none is supported');
  const grants = field('grant_types');
  if (grants !== undefined && (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')))
    throw new RefusedDocumentError('grant_types other than authorization_code and refresh_token');
  const responses = field('response_types');
  if (responses !== undefined && (!Array.isArray(responses) || responses.some((r) => r !== 'code')))
    throw new RefusedDocumentError('response_types other than code');
  const uris = field('redirect_uris');
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > CLIENT_REDIRECT_URIS_MAX)
    throw new RefusedDocumentError(`redirect_uris must list 1 to ${CLIENT_REDIRECT_URIS_MAX} URIs`);
  const redirectUris = [...new Set(uris.map((uri) => checkDocumentRedirectUri(uri, url.origin)))];
  const given = field('client_name');
  const name = typeof given === 'string' && given.trim() ? given.trim().slice(0, 100) : url.host;
  const logo = field('logo_uri');
  const logoUri = typeof logo === 'string' && logo.startsWith('https://') && URL.canParse(logo) ? logo : null;
  return {
    id: clientId,
    name,
    origins: [],
    mfaPolicy: 'optional',
    idTokenSignedResponseAlg: 'RS256',
    createdAt: fetchedAt,
    redirectUris,
    type: 'public',
    keys: NO_KEYS,
    postLogoutRedirectUris: [],
    passkeySatisfiesMfa: true,
    dpopBoundAccessTokens: false,
    logout: NO_LOGOUT,
    requirePushedAuthorizationRequests: false,
    thirdParty: true,
    sendRules: NO_CLIENT_SEND_RULES,
    registered: false,
    deviceCodeGrant: false,
    metadataDocument: { logoUri },
  };
}

/** Seconds the answer may be used for (Cache-Control max-age; no-store and no-cache: none), within the bounds. */
export function cacheSeconds(cacheControl: string | undefined): number {
  const directives = (cacheControl ?? '')
    .toLowerCase()
    .split(',')
    .map((d) => d.trim());
  const maxAge = directives.map((d) => /^max-age=(\d{1,10})$/.exec(d)?.[1]).find((v) => v !== undefined);
  const seconds = directives.includes('no-store') || directives.includes('no-cache') ? 0 : maxAge === undefined ? 0 : Number(maxAge);
  return Math.min(Math.max(seconds, CLIENT_METADATA_DOCUMENT_CACHE_MIN_SECONDS), CLIENT_METADATA_DOCUMENT_CACHE_MAX_SECONDS);
}

/** One GET: the body (at most maxBytes) and Cache-Control of a 200 answer; anything else throws. */
function get(url: URL, agent: HttpAgent, signal: AbortSignal, maxBytes: number): Promise<{ body: string; cacheControl?: string }> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(
      url,
      { method: 'GET', agent, signal, headers: { accept: 'application/json', 'user-agent': 'service-idp-client-metadata' } },
      (response) => {
        // 3xx included: the draft's document is at the client_id itself, never followed elsewhere.
        if (response.statusCode !== 200) {
          response.destroy();
          return reject(new RefusedDocumentError(`HTTP ${response.statusCode}`));
        }
        const declared = Number(response.headers['content-length'] ?? 0);
        if (declared > maxBytes) {
          response.destroy();
          return reject(new RefusedDocumentError('document too large'));
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            response.destroy();
            reject(new RefusedDocumentError('document too large'));
          } else chunks.push(chunk);
        });
        response.on('end', () => {
          const cacheControl = response.headers['cache-control'];
          resolve({ body: Buffer.concat(chunks).toString('utf8'), ...(cacheControl ? { cacheControl } : {}) });
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end();
  });
}

export interface MetadataDocumentSettings {
  production: boolean;
  now: () => number;
  /** Resolves the documents' hosts (tests pass their own, as for webhooks). */
  resolve?: HostResolver;
  /** Tests shorten it; defaults.ts holds the real one. */
  timeoutMs?: number;
  /** A refused document, for the log (its reason, never its content). */
  onRefused?: (clientId: string, error: unknown) => void;
}

/**
 * The fetcher and its per-process cache. Outside production, internal addresses are allowed
 * (tests and development serve documents from loopback), as for webhooks; in production never.
 * Concurrent look-ups of one URL share one fetch. A document fetched and refused is remembered
 * as refused for CLIENT_METADATA_DOCUMENT_REFUSED_CACHE_SECONDS.
 */
export function createMetadataDocuments({
  production,
  now,
  resolve = systemResolver,
  timeoutMs = CLIENT_METADATA_DOCUMENT_TIMEOUT_MS,
  onRefused = () => {},
}: MetadataDocumentSettings): ClientMetadataDocuments {
  const allowInternal = !production;
  const lookup = checkedLookup(resolve, allowInternal);
  // No keep-alive: each fetch connects (and is checked) afresh.
  const agents = { http: new HttpAgent({ lookup }), https: new HttpsAgent({ lookup }) };
  /** Documents by client_id: a client, or undefined for one fetched and refused. */
  const cache = new Map<string, { client: ClientRecord | undefined; until: number }>();
  const remember = (clientId: string, client: ClientRecord | undefined, until: number) => {
    cache.delete(clientId);
    if (cache.size >= CLIENT_METADATA_DOCUMENT_CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(clientId, { client, until });
  };
  const inFlight = new Map<string, Promise<ClientRecord | undefined>>();

  async function fetchDocument(clientId: string): Promise<ClientRecord | undefined> {
    let url: URL;
    try {
      url = checkClientIdUrl(clientId, production);
    } catch (error) {
      // Not a URL we fetch: nothing was requested, nothing to remember.
      onRefused(clientId, error);
      return undefined;
    }
    try {
      // An address literal or a localhost name never reaches the lookup.
      if (!allowInternal && isInternalHost(url.hostname)) throw new RefusedAddressError();
      const answer = await get(
        url,
        url.protocol === 'https:' ? agents.https : agents.http,
        AbortSignal.timeout(timeoutMs),
        CLIENT_METADATA_DOCUMENT_MAX_BYTES,
      );
      const at = now();
      const client = clientOfDocument(clientId, url, answer.body, at);
      remember(clientId, client, at + cacheSeconds(answer.cacheControl) * 1000);
      return client;
    } catch (error) {
      remember(clientId, undefined, now() + CLIENT_METADATA_DOCUMENT_REFUSED_CACHE_SECONDS * 1000);
      onRefused(clientId, error);
      return undefined;
    }
  }

  return {
    async find(clientId: string): Promise<ClientRecord | undefined> {
      const cached = cache.get(clientId);
      if (cached && cached.until > now()) return cached.client;
      const running = inFlight.get(clientId);
      if (running) return running;
      const fetching = fetchDocument(clientId).finally(() => inFlight.delete(clientId));
      inFlight.set(clientId, fetching);
      return fetching;
    },
  };
}
