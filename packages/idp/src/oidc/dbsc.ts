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
}: {
  store: Pick<OidcStore, 'findDbsc' | 'bindDbsc'>;
  spent: Pick<SpentTokenStore, 'spend'>;
  hash: SecretHasher;
  issuer: string;
  now: () => number;
}): DbscService {
  const secure = issuer.startsWith('https:');
  const cookieName = secure ? '__Host-service_session_bound' : 'service_session_bound';
  const attributes = `Path=/; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const challenges = createSignedTokens(hash, { purpose: 'dbsc-challenge', visibleFields: 0, maxLength: 128 });
  const cookies = createSignedTokens(hash, { purpose: 'dbsc-cookie', visibleFields: 0, maxLength: 128 });
  const sessionHash = (session: string) => hash('sign-in-session', session);

  const newChallenge = (session: string) =>
    challenges.issue({ visible: [], bound: [sessionHash(session)] }, now() + DBSC_CHALLENGE_TTL_SECONDS * 1000);
  const shortCookie = (session: string) => {
    const value = cookies.issue({ visible: [], bound: [sessionHash(session)] }, now() + DBSC_COOKIE_TTL_SECONDS * 1000);
    return `${cookieName}=${value}; ${attributes}; Max-Age=${DBSC_COOKIE_TTL_SECONDS}`;
  };
  const config = (id: string): DbscSessionConfig => ({
    session_identifier: id,
    refresh_url: DBSC_REFRESH_PATH,
    scope: { origin: new URL(issuer).origin, include_site: false, scope_specification: [] },
    credentials: [{ type: 'cookie', name: cookieName, attributes }],
    allowed_refresh_initiators: [],
  });

  /** The proof's challenge (`jti`) is ours, for this session, live, and used now for the first time. */
  async function spendChallenge(session: string, payload: JWTPayload): Promise<void> {
    const jti = typeof payload.jti === 'string' ? payload.jti : '';
    const checked = challenges.check(jti, [sessionHash(session)], now());
    if (!checked.ok) throw refused('The DBSC proof does not answer a live challenge of this session.');
    const first = await spent.spend(
      { purpose: 'dbsc-challenge', idHash: hash('dbsc-challenge', jti), expiresAt: checked.expiresAt },
      now(),
    );
    if (!first) throw refused('This DBSC challenge was already answered.');
  }

  const verifyOptions = () => ({ typ: 'dbsc+jwt', algorithms: [...DBSC_ALGS], currentDate: new Date(now()) });

  return {
    cookieName,

    registrationHeader: (session: string) =>
      `(${DBSC_ALGS.join(' ')});path="${DBSC_REGISTRATION_PATH}";challenge="${newChallenge(session)}"`,

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
      await spendChallenge(session, payload);
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
      let payload: JWTPayload;
      try {
        const stored = JSON.parse(bound.jwk) as JWK;
        const key = await importJWK(stored, stored.alg);
        payload = (await jwtVerify(response, key, verifyOptions())).payload;
      } catch {
        throw refused('The DBSC refresh proof is not signed by the session`s key.');
      }
      await spendChallenge(session, payload);
      return { kind: 'refreshed', cookie: shortCookie(session), config: config(bound.id) };
    },

    async usable(session, boundCookie) {
      const bound = await store.findDbsc(sessionHash(session), now());
      if (!bound?.jwk) return true;
      return boundCookie !== undefined && cookies.check(boundCookie, [sessionHash(session)], now()).ok;
    },
  };
}
