import { EmbeddedJWK, importJWK, type JWK, type JWTPayload, jwtVerify } from 'jose';
import type { DbscSessionConfig } from 'service-protocol';
import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { createSignedTokens } from '../crypto/signed-token.js';
import { DBSC_CHALLENGE_TTL_SECONDS, DBSC_COOKIE_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { OidcStore } from './store.js';

/** The algorithms a DBSC key may use, as the draft's registration header offers them (ES256 first). */
export const DBSC_ALGS = ['ES256', 'RS256'] as const;
/** The DBSC paths, under the hosted pages' /signin (same origin and cookie path as the session). */
export const DBSC_REGISTRATION_PATH = '/signin/dbsc/registration';
export const DBSC_REFRESH_PATH = '/signin/dbsc/refresh';

/** The short cookie of a bound session (`__Host-` with an https issuer). */
export const boundCookieName = (issuer: string) => (issuer.startsWith('https:') ? '__Host-service_session_bound' : 'service_session_bound');

/**
 * What /authorize makes of a presented session cookie: `use` it (unbound, or bound with its live
 * short cookie), `renew` it first (bound to the hosted page's WebCrypto key, its short cookie gone:
 * the renewal interstitial), or `ignore` it (bound by DBSC, its short cookie gone: the browser
 * that holds the key refreshes before it asks; anyone else signs in).
 */
export type SessionUse = 'use' | 'renew' | 'ignore';

/** A refresh answered with a challenge (403, `Secure-Session-Challenge`), or a new short cookie. */
export type DbscRefresh =
  | { kind: 'challenge'; challenge: string; id: string }
  | { kind: 'refreshed'; cookie: string; config: DbscSessionConfig };

export interface DbscService {
  /** The bound cookie's name (`__Host-` with an https issuer). */
  readonly cookieName: string;
  /** `Secure-Session-Registration` for a session just set: the algorithms, the path and a challenge bound to the session. */
  registrationHeader(session: string): string;
  /** Binds the session to the key of the browser's `Secure-Session-Response`, and issues the first short cookie. */
  register(session: string | undefined, response: string | undefined): Promise<{ cookie: string; config: DbscSessionConfig }>;
  /** Without a proof: a challenge; with one, signed by the session's key: a new short cookie. */
  refresh(session: string | undefined, sessionId: string | undefined, response: string | undefined): Promise<DbscRefresh>;
  /** Whether a session cookie may be honoured: an unbound session, or a bound one with its live short cookie. */
  usable(session: string, bound: string | undefined): Promise<boolean>;
  /** What /authorize does with the session cookie (SessionUse). */
  use(session: string, bound: string | undefined): Promise<SessionUse>;
  /**
   * The fallback for browsers without DBSC: binds a session just set to the hosted page's
   * WebCrypto key (a P-256 public JWK) and returns the first short cookie; undefined when the
   * key is no usable P-256 point (the session then stays unbound).
   */
  bindPageKey(session: string, jwk: unknown): Promise<string | undefined>;
  /** A renewal challenge for the interstitial (the same codec, purpose and lifetime as DBSC's). */
  challenge(session: string): string;
  /** The fallback's renewal: a proof signed by the page's key over a live challenge of this session → a new short cookie. */
  renew(session: string | undefined, proof: string): Promise<string>;
  /** Set-Cookie that drops the short cookie (a sign-out, a browser that cannot renew). */
  readonly clearedCookie: string;
}

const refused = (message: string) => new ServiceError('ERR_SESSION_INVALID', message);

/**
 * Device Bound Session Credentials (W3C draft) for the service's SSO session: at sign-in the
 * answer offers registration; the browser makes a key (in hardware where it can) and proves it
 * over our challenge; from then on the session counts only with a short-lived cookie that the
 * browser renews by signing a fresh challenge with that key. The long session cookie, copied,
 * is worth nothing; the short one is worth its remaining minutes. Challenges are signed tokens
 * (crypto/signed-token.ts) bound to the session's hash, spent once in `spent_tokens`; the
 * short cookie is a signed token bound to the session's hash, so no node needs a table for it.
 */
export function createDbsc({
  store,
  spent,
  hash,
  issuer,
  now,
  cookieSeconds = DBSC_COOKIE_TTL_SECONDS,
}: {
  store: Pick<OidcStore, 'findDbsc' | 'bindDbsc' | 'bindPageKey'>;
  spent: Pick<SpentTokenStore, 'spend'>;
  hash: SecretHasher;
  issuer: string;
  now: () => number;
  /** The short cookie's lifetime (defaults.ts; tests shorten it). */
  cookieSeconds?: number;
}): DbscService {
  const secure = issuer.startsWith('https:');
  const cookieName = boundCookieName(issuer);
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const challenges = createSignedTokens(hash, { purpose: 'dbsc-challenge', visibleFields: 0, maxLength: 128 });
  // Registration challenges are a codec of their own, issued only with a sign-in's answer: the
  // renewal page's and refresh's challenges (which the long cookie alone gets) never register a key.
  const registrations = createSignedTokens(hash, { purpose: 'dbsc-registration', visibleFields: 0, maxLength: 128 });
  const cookies = createSignedTokens(hash, { purpose: 'dbsc-cookie', visibleFields: 0, maxLength: 128 });
  const sessionHash = (session: string) => hash('sign-in-session', session);

  const newChallenge = (session: string, codec = challenges) =>
    codec.issue({ visible: [], bound: [sessionHash(session)] }, now() + DBSC_CHALLENGE_TTL_SECONDS * 1000);
  const shortCookie = (session: string) => {
    const value = cookies.issue({ visible: [], bound: [sessionHash(session)] }, now() + cookieSeconds * 1000);
    return `${cookieName}=${value}; ${attributes}; Max-Age=${cookieSeconds}`;
  };
  const config = (id: string): DbscSessionConfig => ({
    session_identifier: id,
    refresh_url: DBSC_REFRESH_PATH,
    scope: { origin: new URL(issuer).origin, include_site: false, scope_specification: [] },
    credentials: [{ type: 'cookie', name: cookieName, attributes }],
    allowed_refresh_initiators: [],
  });

  /** The proof's challenge (`jti`) is ours (of this codec), for this session, live, and used now for the first time. */
  async function spendChallenge(session: string, payload: JWTPayload, codec = challenges): Promise<void> {
    const jti = typeof payload.jti === 'string' ? payload.jti : '';
    const checked = codec.check(jti, [sessionHash(session)], now());
    if (!checked.ok) throw refused('The DBSC proof does not answer a live challenge of this session.');
    const first = await spent.spend(
      {
        purpose: 'dbsc-challenge',
        idHash: hash(codec === registrations ? 'dbsc-registration' : 'dbsc-challenge', jti),
        expiresAt: checked.expiresAt,
      },
      now(),
    );
    if (!first) throw refused('This DBSC challenge was already answered.');
  }

  const verifyOptions = () => ({ typ: 'dbsc+jwt', algorithms: [...DBSC_ALGS], currentDate: new Date(now()) });

  /** A proof signed by the session's stored key, over a live challenge of this session, spent now. */
  async function proven(session: string, storedJwk: string, proof: string): Promise<void> {
    let payload: JWTPayload;
    try {
      const stored = JSON.parse(storedJwk) as JWK;
      const key = await importJWK(stored, stored.alg);
      payload = (await jwtVerify(proof, key, verifyOptions())).payload;
    } catch {
      throw refused('The proof is not signed by the session`s key.');
    }
    await spendChallenge(session, payload);
  }
  const live = (session: string, boundCookie: string | undefined) =>
    boundCookie !== undefined && cookies.check(boundCookie, [sessionHash(session)], now()).ok;

  return {
    cookieName,

    registrationHeader: (session: string) =>
      `(${DBSC_ALGS.join(' ')});path="${DBSC_REGISTRATION_PATH}";challenge="${newChallenge(session, registrations)}"`,

    async register(session, response) {
      if (!session || !response) throw refused('A DBSC registration needs the session and its proof.');
      let payload: JWTPayload;
      let jwk: JWK;
      let verifiedAlg: string;
      try {
        // The draft's registration JWT: typ dbsc+jwt, the new public key in the header, jti = our challenge.
        const verified = await jwtVerify(response, EmbeddedJWK, verifyOptions());
        payload = verified.payload;
        jwk = verified.protectedHeader.jwk as JWK;
        verifiedAlg = verified.protectedHeader.alg;
      } catch {
        throw refused('The DBSC registration proof does not verify.');
      }
      // Only a sign-in answer's challenge: a session bound to the page's key is never rebound
      // with the renewal page's challenge, which the long cookie alone gets.
      await spendChallenge(session, payload, registrations);
      const id = randomToken('dbsc_', 16);
      const publicJwk = {
        ...Object.fromEntries(Object.entries(jwk).filter(([k]) => ['kty', 'crv', 'x', 'y', 'n', 'e'].includes(k))),
        alg: verifiedAlg,
      };
      if (!(await store.bindDbsc(sessionHash(session), JSON.stringify(publicJwk), id, now())))
        throw refused('This session is over, or already bound to a key.');
      return { cookie: shortCookie(session), config: config(id) };
    },

    async refresh(session, sessionId, response) {
      if (!session) throw refused('No service session.');
      const bound = await store.findDbsc(sessionHash(session), now());
      if (!bound?.jwk || !bound.id || sessionId !== bound.id) throw refused('No DBSC session of that id here.');
      if (!response) return { kind: 'challenge', challenge: newChallenge(session), id: bound.id };
      await proven(session, bound.jwk, response);
      return { kind: 'refreshed', cookie: shortCookie(session), config: config(bound.id) };
    },

    async usable(session, boundCookie) {
      const bound = await store.findDbsc(sessionHash(session), now());
      if (!bound?.jwk) return true;
      return live(session, boundCookie);
    },

    async use(session, boundCookie) {
      const bound = await store.findDbsc(sessionHash(session), now());
      if (!bound?.jwk || live(session, boundCookie)) return 'use';
      return bound.id ? 'ignore' : 'renew';
    },

    async bindPageKey(session, jwk) {
      const { kty, crv, x, y } = (jwk ?? {}) as JWK;
      const publicJwk = { kty, crv, x, y, alg: 'ES256' };
      try {
        if (kty !== 'EC' || crv !== 'P-256') return undefined;
        await importJWK(publicJwk, 'ES256'); // a point on the curve, or it throws
      } catch {
        return undefined;
      }
      if (!(await store.bindPageKey(sessionHash(session), JSON.stringify(publicJwk), now()))) return undefined;
      return shortCookie(session);
    },

    challenge: (session) => newChallenge(session),

    async renew(session, proof) {
      if (!session) throw refused('No service session.');
      const bound = await store.findDbsc(sessionHash(session), now());
      // Only a session the page's key binds renews here; a DBSC-bound one renews by DBSC alone.
      if (!bound?.jwk || bound.id) throw refused('No session of this browser`s key here.');
      await proven(session, bound.jwk, proof);
      return shortCookie(session);
    },

    clearedCookie: `${cookieName}=; ${attributes}; Max-Age=0`,
  };
}
