/**
 * What init() sets up and every later call runs with: the transport, the client, the crypto
 * version, the globals to use, and the login steps in progress.
 */
import { CRYPTO_VERSIONS, type CryptoVersion } from 'service-protocol';
import { isNonEmptyString, normalizeBaseUrl } from './checks.js';
import type { NewDeviceKey } from './device-proof.js';
import type { HttpConfig } from './http.js';
import { failure, invalid } from './results.js';
import type { FailureResult, InitOptions } from './types.js';

/**
 * Base URL used when init() gets none: a service-idp started locally with its defaults
 * (`service-idp start` listens on 127.0.0.1:8080). Pass your deployment's URL in production.
 */
export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
/** Request timeout when init() gets none, as the spec states. */
export const DEFAULT_TIMEOUT_MS = 15_000;
/** Device-proof scheme when init() gets none, as the spec states. */
export const DEFAULT_CRYPTO_VERSION: CryptoVersion = 'v1';

/** Globals the client uses; inject them for tests or non-browser runtimes. */
export interface ServiceClientDeps {
  indexedDB?: IDBFactory;
  fetch?: typeof fetch;
  crypto?: Crypto;
}

/** Login state kept in memory between the steps of one flow, per normalized email. */
export interface PendingLogin {
  deviceToken?: string;
  sessionId?: string;
  /** authenticate's rememberDevice. */
  remember?: boolean;
  /** A stored device record whose proof the service did not accept. */
  stale?: boolean;
  /**
   * Set when verifyDevice handed the login to MFA (FINALIZE_REGISTRATION_NEEDED or MFA_REQUIRED):
   * the device key the service registered (if any) stays in memory until verifyMfa succeeds.
   */
  registration?: { key?: NewDeviceKey | undefined };
}

export interface Session {
  http: HttpConfig;
  clientId: string;
  /** The service's issuer (GET /v1/client), put in every SUCCESS with a code as `iss` (RFC 9207). */
  iss: string;
  cryptoVersion: CryptoVersion;
  /** The client's injected globals (a global is read only when there is none). */
  deps: ServiceClientDeps;
}

/** The core client's session: also the login steps in progress (the client's own map, cleared by init). */
export interface LoginSession extends Session {
  pending: Map<string, PendingLogin>;
}

/**
 * init()'s checks, in this order, and the transport they configure: INVALID_API_KEY without a
 * key, INVALID_REQUEST for a bad base URL or option, NETWORK_ERROR without a fetch.
 */
export function httpConfig(
  deps: ServiceClientDeps,
  apiKey: unknown,
  baseUrl: unknown,
  options: InitOptions | undefined,
): { http: HttpConfig; cryptoVersion: CryptoVersion; status?: undefined } | FailureResult {
  if (!isNonEmptyString(apiKey)) return failure('INVALID_API_KEY', 'An API key is required');
  const base = normalizeBaseUrl(baseUrl);
  if (base === undefined) return invalid('baseUrl must be an http(s) URL');
  const opts: InitOptions = options ?? {};
  if (typeof opts !== 'object') return invalid('options must be an object');
  const cryptoVersion = (opts.cryptoVersion ?? DEFAULT_CRYPTO_VERSION) as CryptoVersion;
  if (!CRYPTO_VERSIONS.includes(cryptoVersion)) return invalid(`Unknown cryptoVersion ${String(cryptoVersion)}`);
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0)) return invalid('timeoutMs must be a positive number');
  const { authorizationRequest } = opts;
  if (authorizationRequest !== undefined && !isNonEmptyString(authorizationRequest)) return invalid('Bad authorizationRequest');
  const fetchFn = deps.fetch ?? (typeof fetch === 'function' ? fetch.bind(globalThis) : undefined);
  if (fetchFn === undefined) return failure('NETWORK_ERROR', 'fetch is not available');
  return { http: { baseUrl: base, apiKey, timeoutMs, fetch: fetchFn, authorizationRequest }, cryptoVersion };
}

/** Passes a failure on; SESSION_EXPIRED also ends the user's login in progress. */
export function forgetIfExpired(session: LoginSession, email: string, result: FailureResult): FailureResult {
  if (result.status === 'SESSION_EXPIRED') session.pending.delete(email);
  return result;
}
