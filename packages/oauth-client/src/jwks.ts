/**
 * Remote key set (JWKS, RFC 7517 5) cache, shared by every call in the process and keyed by
 * URL. Rules:
 * - a key set is used for at most `maxAgeMs` after it was fetched, then fetched again;
 * - a token whose `kid` is not in the set triggers a re-fetch, but a URL is fetched at most
 *   once per `cooldownMs` (counted from the start of the last attempt, failed or not), so
 *   tokens with made-up `kid`s cannot flood the key server;
 * - concurrent callers share one in-flight fetch;
 * - a failed fetch is not retried during the cooldown; keys past their max age are never used.
 */
import { type CryptoKey, createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey, errors as joseErrors } from 'jose';
import { JWKS_CACHE_MAX_AGE_MS, JWKS_COOLDOWN_MS, JWKS_TIMEOUT_MS, RSA_MIN_MODULUS_BITS } from './defaults.js';
import { JWTVerificationError } from './errors.js';

type LocalKeySet = ReturnType<typeof createLocalJWKSet>;
type GetKeyArgs = Parameters<JWTVerifyGetKey>;

/** Picks the key for a token's (already checked) header. */
export type KeySetResolver = (...args: GetKeyArgs) => Promise<CryptoKey>;

interface Entry {
  keys?: LocalKeySet;
  fetchedAt: number;
  lastAttemptAt: number;
  pending?: Promise<void>;
}

export interface JwksCacheOptions {
  maxAgeMs?: number;
  cooldownMs?: number;
  timeoutMs?: number;
  /** Clock in milliseconds; tests replace it. */
  now?: () => number;
}

export class JwksCache {
  readonly #entries = new Map<string, Entry>();
  readonly #maxAgeMs: number;
  readonly #cooldownMs: number;
  readonly #timeoutMs: number;
  readonly #now: () => number;

  constructor(options: JwksCacheOptions = {}) {
    this.#maxAgeMs = options.maxAgeMs ?? JWKS_CACHE_MAX_AGE_MS;
    this.#cooldownMs = options.cooldownMs ?? JWKS_COOLDOWN_MS;
    this.#timeoutMs = options.timeoutMs ?? JWKS_TIMEOUT_MS;
    this.#now = options.now ?? Date.now;
  }

  /** A key resolver for `url`, backed by this cache. */
  resolver(url: string | URL): KeySetResolver {
    const href = new URL(url).href;
    return (header, token) => this.getKey(href, header, token);
  }

  /** Forgets every cached key set. */
  clear(): void {
    this.#entries.clear();
  }

  async getKey(href: string, ...args: GetKeyArgs): Promise<CryptoKey> {
    let entry = this.#entries.get(href);
    if (!entry) {
      entry = { fetchedAt: Number.NEGATIVE_INFINITY, lastAttemptAt: Number.NEGATIVE_INFINITY };
      this.#entries.set(href, entry);
    }
    if (entry.pending) await entry.pending.catch(() => {});
    if (!entry.keys || this.#now() - entry.fetchedAt >= this.#maxAgeMs) {
      if (!this.#mayFetch(entry)) {
        throw new JWTVerificationError('key set fetch failed recently; retrying after the cooldown', {
          code: 'ERR_JWKS_UNAVAILABLE',
        });
      }
      await this.#fetch(entry, href);
    }
    let key: CryptoKey;
    try {
      key = await lookup(entry, args);
    } catch (err) {
      if (!(err instanceof joseErrors.JWKSNoMatchingKey)) throw mapLookupError(err);
      if (entry.pending) {
        await entry.pending.catch(() => {});
      } else if (this.#mayFetch(entry)) {
        await this.#fetch(entry, href);
      } else {
        throw mapLookupError(err);
      }
      try {
        key = await lookup(entry, args);
      } catch (retryErr) {
        throw mapLookupError(retryErr);
      }
    }
    const bits = (key.algorithm as { modulusLength?: unknown }).modulusLength;
    if (typeof bits === 'number' && bits < RSA_MIN_MODULUS_BITS) {
      throw new JWTVerificationError(`key set RSA key has ${bits} bits; at least ${RSA_MIN_MODULUS_BITS} are required`, {
        code: 'ERR_JWKS_KEY_TOO_SHORT',
      });
    }
    return key;
  }

  #mayFetch(entry: Entry): boolean {
    return this.#now() - entry.lastAttemptAt >= this.#cooldownMs;
  }

  #fetch(entry: Entry, href: string): Promise<void> {
    if (entry.pending) return entry.pending;
    entry.lastAttemptAt = this.#now();
    const pending = fetchKeySet(href, this.#timeoutMs)
      .then((keys) => {
        entry.keys = keys;
        entry.fetchedAt = this.#now();
      })
      .finally(() => {
        if (entry.pending === pending) delete entry.pending;
      });
    entry.pending = pending;
    return pending;
  }
}

async function lookup(entry: Entry, args: GetKeyArgs): Promise<CryptoKey> {
  if (!entry.keys) throw new joseErrors.JWKSNoMatchingKey();
  return entry.keys(...args);
}

function mapLookupError(err: unknown): JWTVerificationError {
  if (err instanceof JWTVerificationError) return err;
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys) {
    return new JWTVerificationError('no single key in the key set matches the token header', {
      code: 'ERR_JWKS_NO_MATCHING_KEY',
      cause: err,
    });
  }
  return new JWTVerificationError('key from the key set cannot be used', { code: 'ERR_JWKS_UNAVAILABLE', cause: err });
}

async function fetchKeySet(href: string, timeoutMs: number): Promise<LocalKeySet> {
  try {
    const response = await fetch(href, {
      headers: { accept: 'application/jwk-set+json, application/json' },
      redirect: 'error',
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      throw new Error(`key set answered HTTP ${response.status}`);
    }
    return createLocalJWKSet((await response.json()) as JSONWebKeySet);
  } catch (cause) {
    throw new JWTVerificationError(`key set could not be fetched from ${href}`, { code: 'ERR_JWKS_UNAVAILABLE', cause });
  }
}

/** The process-wide cache used by exchangeCodeForClaims. */
export const sharedJwksCache = new JwksCache();
