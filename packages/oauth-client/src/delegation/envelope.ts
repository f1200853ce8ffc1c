import { randomBytes } from 'node:crypto';
import { CompactEncrypt, CompactSign, compactDecrypt, compactVerify, decodeProtectedHeader, errors as joseErrors } from 'jose';
import {
  DELEGATION_CLOCK_SKEW_SECONDS,
  DELEGATION_JTI_MAX_LENGTH,
  DELEGATION_JWE_TYPE,
  DELEGATION_JWT_TYPE,
  DELEGATION_MAX_TTL_SECONDS,
  DELEGATION_OPS,
  type DelegationClaims,
  type DelegationOp,
  type DelegationRequestBodies,
  type DelegationRequestClaims,
  type DelegationResponseClaims,
  type DelegationResults,
} from 'service-protocol';
import { DelegationEnvelopeError } from './errors.js';
import { checkDelegationKey, type DelegationKey } from './keys.js';

/** Options of {@link sealEnvelope}. */
export interface SealEnvelopeOptions {
  /** The claims, complete (`iss`, `aud`, `iat`, `exp`, `jti`, `op`, and `body` or `irt` + `result`). */
  claims: DelegationClaims;
  /** The sender's Ed25519 private key. */
  signingKey: DelegationKey;
  /** The receiver's X25519 public key. */
  encryptionKey: DelegationKey;
  /** Optional `kid` for the outer header: the id of the receiver's key. */
  kid?: string;
}

/** A key, or a function that picks it (it may be async); `undefined` means "no such key". */
export type KeyOrResolver<A> = DelegationKey | ((arg: A) => DelegationKey | undefined | Promise<DelegationKey | undefined>);

/** Options of {@link openEnvelope}. */
export interface OpenEnvelopeOptions {
  /**
   * The receiver's X25519 private key, or a function of the outer protected header (e.g. its
   * `kid`) that returns it.
   */
  decryptionKey: KeyOrResolver<Record<string, unknown>>;
  /**
   * The sender's Ed25519 public key, or a function of the (not yet verified) `iss` that returns
   * the key of that sender, or `undefined` for an unknown sender (`ERR_DELEGATION_ISSUER`).
   */
  verifyKey: KeyOrResolver<string>;
  /** The receiver's own name; `aud` must equal it exactly. */
  audience: string;
  /** The expected sender; `iss` must equal it exactly when given. */
  issuer?: string;
  /** The time to check against: a `Date` or Unix seconds; default now. */
  now?: Date | number;
  /** Tighter lifetime limit, in seconds (1 to 300); default 300. */
  maxTtlSeconds?: number;
  /** The operation the receiver expects (`op` must equal it). */
  expectedOp?: DelegationOp;
  /** For a response: the request's `jti`; `irt` must equal it and the claims must be a response. */
  inResponseTo?: string;
}

const KEY_MANAGEMENT = ['ECDH-ES'];
const CONTENT_ENCRYPTION = ['A256GCM'];
const SIGNATURE = ['EdDSA'];
const REGISTERED = ['iss', 'aud', 'iat', 'exp', 'jti', 'op'] as const;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Seals delegation claims: a nested JWT (RFC 7519 11.2). The claims are signed as a compact
 * JWS (`{ alg: 'EdDSA', typ: 'delegation+jwt' }`) with the sender's Ed25519 key, and that JWS
 * is encrypted as a compact JWE (`{ alg: 'ECDH-ES', enc: 'A256GCM', cty: 'JWT',
 * typ: 'delegation+jwe' }`) to the receiver's X25519 key.
 *
 * It checks the claims' shape (the rules of {@link openEnvelope} that do not depend on the
 * clock), so it never produces an envelope the receiver must refuse as malformed.
 *
 * @throws {@link DelegationEnvelopeError} `ERR_DELEGATION_MALFORMED` or `ERR_DELEGATION_TTL_TOO_LONG` for bad claims
 * @throws {@link DelegationConfigError} a key of the wrong type
 *
 * @example
 * ```ts
 * import { randomUUID } from 'node:crypto';
 * import { sealEnvelope } from 'service-oauth-client/delegation';
 *
 * const now = Math.floor(Date.now() / 1000);
 * const jwe = await sealEnvelope({
 *   claims: { iss: 'client-123', aud: 'https://idp.example.com', iat: now, exp: now + 120, jti: randomUUID(),
 *     op: 'get_user_credentials', body: { userid: 'ann@example.com' } },
 *   signingKey: spEd25519PrivateKey,
 *   encryptionKey: idpX25519PublicKey,
 * });
 * ```
 */
export async function sealEnvelope(options: SealEnvelopeOptions): Promise<string> {
  const { claims, kid } = options;
  const signingKey = checkDelegationKey(options.signingKey, 'ed25519-private', 'signingKey');
  const encryptionKey = checkDelegationKey(options.encryptionKey, 'x25519-public', 'encryptionKey');
  checkShape(claims);
  if (typeof claims.iat !== 'number' || typeof claims.exp !== 'number') throw malformed('iat');
  checkTtl(claims, DELEGATION_MAX_TTL_SECONDS);
  if (kid !== undefined && (typeof kid !== 'string' || kid === '')) throw new TypeError('kid must be a non-empty string');

  const jws = await new CompactSign(encoder.encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'EdDSA', typ: DELEGATION_JWT_TYPE })
    .sign(signingKey);
  return new CompactEncrypt(encoder.encode(jws))
    .setProtectedHeader({
      alg: 'ECDH-ES',
      enc: 'A256GCM',
      cty: 'JWT',
      typ: DELEGATION_JWE_TYPE,
      ...(kid === undefined ? {} : { kid }),
    })
    .encrypt(encryptionKey);
}

/**
 * Opens a delegation envelope and returns its verified claims.
 *
 * In order: decrypts the compact JWE (`alg` `ECDH-ES` and `enc` `A256GCM` only, `cty: JWT`,
 * `typ: delegation+jwe`); verifies the inner JWS (`EdDSA` only, `typ: delegation+jwt`) with the
 * sender's key; then checks the claims: `aud` equals `audience` exactly, `iss` equals `issuer`
 * (when given), `iat` and `exp` are integers with `exp > now`, `iat ≤ now + 30`, and
 * `0 < exp − iat ≤ 300`; `jti` is a string of 1 to 128 characters; `op` is a known operation
 * (and `expectedOp` when given); a request has an object `body`, a response a string `irt` and
 * an object `result`; `irt` equals `inResponseTo` when given.
 *
 * Replays are not checked here: the receiver records each `jti` until its `exp` and refuses it
 * a second time.
 *
 * @throws {@link DelegationEnvelopeError} with one of the codes listed on it; the message never
 *   contains key material or plaintext
 *
 * @example
 * ```ts
 * import { openEnvelope } from 'service-oauth-client/delegation';
 *
 * const claims = await openEnvelope(jwe, {
 *   decryptionKey: idpX25519PrivateKey,
 *   verifyKey: (iss) => spKeys.get(iss), // the SP's Ed25519 public key, by client id
 *   audience: 'https://idp.example.com',
 * });
 * ```
 */
export async function openEnvelope(jwe: string, options: OpenEnvelopeOptions): Promise<DelegationClaims> {
  const now = toUnixSeconds(options.now);
  const maxTtl = options.maxTtlSeconds ?? DELEGATION_MAX_TTL_SECONDS;
  if (!Number.isInteger(maxTtl) || maxTtl < 1 || maxTtl > DELEGATION_MAX_TTL_SECONDS) {
    throw new TypeError(`maxTtlSeconds must be an integer from 1 to ${DELEGATION_MAX_TTL_SECONDS}`);
  }
  if (typeof options.audience !== 'string' || options.audience === '') throw new TypeError('audience must be a non-empty string');

  const jws = await decrypt(jwe, options.decryptionKey);
  const payload = await verify(jws, options.verifyKey);

  let claims: unknown;
  try {
    claims = JSON.parse(decoder.decode(payload));
  } catch {
    throw new DelegationEnvelopeError('ERR_DELEGATION_MALFORMED', 'claims are not JSON');
  }
  checkShape(claims);
  const c = claims as DelegationClaims;
  if (c.aud !== options.audience) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_AUDIENCE', 'envelope is addressed to another audience', { claim: 'aud' });
  }
  if (options.issuer !== undefined && c.iss !== options.issuer) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_ISSUER', 'envelope comes from another issuer', { claim: 'iss' });
  }
  if (c.exp <= now) throw new DelegationEnvelopeError('ERR_DELEGATION_EXPIRED', 'envelope has expired', { claim: 'exp' });
  if (c.iat > now + DELEGATION_CLOCK_SKEW_SECONDS) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_NOT_YET_VALID', 'envelope is issued in the future', { claim: 'iat' });
  }
  checkTtl(c, maxTtl);
  if (options.expectedOp !== undefined && c.op !== options.expectedOp) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_REPLY_MISMATCH', `envelope is for another operation than ${options.expectedOp}`, {
      claim: 'op',
    });
  }
  if (options.inResponseTo !== undefined && (!('irt' in c) || c.irt !== options.inResponseTo)) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_REPLY_MISMATCH', 'envelope answers another request', { claim: 'irt' });
  }
  return c;
}

/** Builds the claims of a request (fresh `jti`, `iat` = now, `exp` = now + `ttlSeconds`). */
export function requestClaims<Op extends DelegationOp>(args: {
  iss: string;
  aud: string;
  op: Op;
  body: DelegationRequestBodies[Op];
  /** Default: 128 random bits, base64url. */
  jti?: string;
  now?: Date | number;
  ttlSeconds: number;
}): DelegationRequestClaims<Op> {
  const iat = toUnixSeconds(args.now);
  const jti = args.jti ?? newJti();
  return {
    iss: args.iss,
    aud: args.aud,
    iat,
    exp: iat + args.ttlSeconds,
    jti,
    op: args.op,
    body: args.body,
  } as DelegationRequestClaims<Op>;
}

/**
 * Builds the claims of the response to `request`: `iss` and `aud` swapped, `irt` = the
 * request's `jti`, same `op`.
 */
export function responseClaims<Op extends DelegationOp>(
  request: DelegationRequestClaims<Op>,
  args: { result: DelegationResults[Op]; jti?: string; now?: Date | number; ttlSeconds: number },
): DelegationResponseClaims<Op> {
  const iat = toUnixSeconds(args.now);
  return {
    iss: request.aud,
    aud: request.iss,
    iat,
    exp: iat + args.ttlSeconds,
    jti: args.jti ?? newJti(),
    irt: request.jti,
    op: request.op,
    result: args.result,
  } as DelegationResponseClaims<Op>;
}

/** A fresh `jti`: 128 random bits, base64url (22 characters). */
export function newJti(): string {
  return randomBytes(16).toString('base64url');
}

async function decrypt(jwe: string, key: OpenEnvelopeOptions['decryptionKey']): Promise<string> {
  if (typeof jwe !== 'string' || jwe.split('.').length !== 5) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', 'envelope is not a compact JWE');
  }
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jwe);
  } catch (cause) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', 'envelope header cannot be decoded', { cause });
  }
  // Pinned: jose would otherwise accept other key management and content encryption algorithms.
  if (header.alg !== 'ECDH-ES' || header.enc !== 'A256GCM') {
    throw new DelegationEnvelopeError(
      'ERR_DELEGATION_DECRYPT',
      `envelope must use alg ECDH-ES and enc A256GCM, not ${JSON.stringify(header.alg)}/${JSON.stringify(header.enc)}`,
    );
  }
  // RFC 7519 11.2 / 5.2: a nested JWT says so with cty "JWT".
  if (header.cty !== 'JWT' || header.typ !== DELEGATION_JWE_TYPE) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', `envelope header must carry cty "JWT" and typ "${DELEGATION_JWE_TYPE}"`);
  }
  if ('zip' in header) throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', 'compressed envelopes are refused');

  const resolved = typeof key === 'function' ? await key(header) : key;
  if (resolved === undefined) throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', 'no decryption key for this envelope');
  checkDelegationKey(resolved, 'x25519-private', 'decryptionKey');
  try {
    const { plaintext } = await compactDecrypt(jwe, resolved, {
      keyManagementAlgorithms: KEY_MANAGEMENT,
      contentEncryptionAlgorithms: CONTENT_ENCRYPTION,
    });
    return decoder.decode(plaintext);
  } catch (cause) {
    // Wrong key and tampering look the same (RFC 7516 11.5: do not tell them apart).
    throw new DelegationEnvelopeError('ERR_DELEGATION_DECRYPT', 'envelope cannot be decrypted with this key (wrong key or tampered)', {
      cause: sanitize(cause),
    });
  }
}

async function verify(jws: string, key: OpenEnvelopeOptions['verifyKey']): Promise<Uint8Array> {
  if (jws.split('.').length !== 3) throw new DelegationEnvelopeError('ERR_DELEGATION_SIGNATURE', 'envelope content is not a compact JWS');
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jws);
  } catch (cause) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_SIGNATURE', 'inner header cannot be decoded', { cause });
  }
  if (header.alg !== 'EdDSA') {
    throw new DelegationEnvelopeError('ERR_DELEGATION_SIGNATURE', `inner JWS must use alg EdDSA, not ${JSON.stringify(header.alg)}`);
  }
  if (header.typ !== DELEGATION_JWT_TYPE) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_SIGNATURE', `inner JWS must carry typ "${DELEGATION_JWT_TYPE}"`);
  }

  let resolved: DelegationKey | undefined;
  if (typeof key === 'function') {
    // The sender is named by the (not yet verified) iss; its own key must then verify it.
    const iss = unverifiedIssuer(jws);
    resolved = await key(iss);
    if (resolved === undefined) {
      throw new DelegationEnvelopeError('ERR_DELEGATION_ISSUER', 'no verification key is known for this issuer', { claim: 'iss' });
    }
  } else {
    resolved = key;
  }
  checkDelegationKey(resolved, 'ed25519-public', 'verifyKey');
  try {
    const { payload } = await compactVerify(jws, resolved, { algorithms: SIGNATURE });
    return payload;
  } catch (cause) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_SIGNATURE', 'inner JWS signature does not verify with the sender key', {
      cause: sanitize(cause),
    });
  }
}

function unverifiedIssuer(jws: string): string {
  try {
    const claims = JSON.parse(decoder.decode(Buffer.from(jws.split('.')[1] as string, 'base64url'))) as unknown;
    const iss = (claims as { iss?: unknown } | null)?.iss;
    if (typeof iss === 'string' && iss !== '') return iss;
  } catch {
    // fall through
  }
  throw new DelegationEnvelopeError('ERR_DELEGATION_MALFORMED', '"iss" claim is missing', { claim: 'iss' });
}

/** Shape rules that do not depend on the clock or the receiver. */
function checkShape(claims: unknown): asserts claims is DelegationClaims {
  if (!isObject(claims)) throw new DelegationEnvelopeError('ERR_DELEGATION_MALFORMED', 'claims are not a JSON object');
  for (const name of REGISTERED) {
    if (!(name in claims)) throw malformed(name, 'is missing');
  }
  if (typeof claims.iss !== 'string' || claims.iss === '') throw malformed('iss');
  if (typeof claims.aud !== 'string' || claims.aud === '') throw malformed('aud', 'must be one string');
  if (!Number.isSafeInteger(claims.iat)) throw malformed('iat');
  if (!Number.isSafeInteger(claims.exp)) throw malformed('exp');
  if (typeof claims.jti !== 'string' || claims.jti === '' || claims.jti.length > DELEGATION_JTI_MAX_LENGTH) {
    throw malformed('jti', `must be a string of 1 to ${DELEGATION_JTI_MAX_LENGTH} characters`);
  }
  if (!(DELEGATION_OPS as readonly string[]).includes(claims.op as string)) throw malformed('op', 'is not a known operation');
  const isResponse = 'result' in claims || 'irt' in claims;
  if (isResponse) {
    if ('body' in claims) throw malformed('body', 'must not appear in a response');
    if (typeof claims.irt !== 'string' || claims.irt === '' || claims.irt.length > DELEGATION_JTI_MAX_LENGTH) throw malformed('irt');
    if (!isObject(claims.result)) throw malformed('result', 'must be an object');
  } else if (!isObject(claims.body)) {
    throw malformed('body', 'must be an object');
  }
}

function checkTtl(claims: { iat: number; exp: number }, maxTtl: number): void {
  const ttl = claims.exp - claims.iat;
  if (ttl <= 0 || ttl > maxTtl) {
    throw new DelegationEnvelopeError('ERR_DELEGATION_TTL_TOO_LONG', `envelope lifetime (exp - iat) must be 1 to ${maxTtl} seconds`, {
      claim: 'exp',
    });
  }
}

function malformed(claim: string, problem = 'has a wrong type'): DelegationEnvelopeError {
  return new DelegationEnvelopeError('ERR_DELEGATION_MALFORMED', `"${claim}" claim ${problem}`, { claim });
}

function toUnixSeconds(now: Date | number | undefined): number {
  if (now === undefined) return Math.floor(Date.now() / 1000);
  if (now instanceof Date) {
    const ms = now.getTime();
    if (Number.isNaN(ms)) throw new TypeError('now is an invalid Date');
    return Math.floor(ms / 1000);
  }
  // 1e11 seconds is the year 5138: a bigger number is almost surely Date.now() milliseconds.
  if (typeof now !== 'number' || !Number.isFinite(now) || now < 0 || now > 1e11) {
    throw new TypeError('now must be a Date or Unix seconds');
  }
  return Math.floor(now);
}

/** jose errors carry no secrets, but keep only the class and code in `cause`. */
function sanitize(err: unknown): unknown {
  if (err instanceof joseErrors.JOSEError) return { name: err.name, code: err.code };
  return err instanceof Error ? { name: err.name } : undefined;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
