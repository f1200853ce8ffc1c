import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, type JWK, jwtVerify } from 'jose';
import { unacceptedAlg } from '../crypto/jws.js';
import { type SecretHasher, safeEqual } from '../crypto/secrets.js';
import {
  DPOP_NONCE_WINDOW_SECONDS,
  DPOP_PROOF_MAX_AGE_SECONDS,
  DPOP_PROOF_MAX_FUTURE_SECONDS,
  DPOP_PROOF_MAX_LENGTH,
} from '../defaults.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';

/**
 * The JWS algorithms a DPoP proof may use (RFC 9449 4.2: asymmetric only): ES256 first, the
 * device key's (service-web's `dpop()`) and openid-client's default. Ed25519 under both names:
 * `EdDSA` (RFC 8037) and `Ed25519` (RFC 9864's fully-specified one, which oauth4webapi and
 * openid-client 6 send).
 */
export const DPOP_ALGS = ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'RS256', 'PS256'] as const;

/** What a refused proof is answered with (RFC 9449 12.2): a bad proof, or a good one without the current nonce. */
export class DpopError extends Error {
  constructor(
    readonly error: 'invalid_dpop_proof' | 'use_dpop_nonce',
    description: string,
  ) {
    super(description);
    this.name = 'DpopError';
  }
}

/** A request as the proof must describe it. */
export interface DpopRequest {
  /** The DPoP header as received (undefined when absent). */
  header: string | string[] | undefined;
  method: string;
  /** The endpoint's path; the proof's `htu` names it under the issuer (the public URL, whichever node answers). */
  path: string;
  /** The access token presented with the proof (RFC 9449 7: its hash must be the proof's `ath`). */
  accessToken?: string;
}

/** An accepted proof: the JWK SHA-256 thumbprint of its key (RFC 7638), what tokens are bound to (`cnf.jkt`). */
export interface DpopProof {
  jkt: string;
}

export interface DpopVerifier {
  /** The nonce to send now (`DPoP-Nonce`): the same on every node sharing the server secret. */
  nonce(): string;
  /**
   * Checks a proof (RFC 9449 4.3, with a server nonce, 8 and 9) and spends its `jti`, so the
   * same proof is refused on this node and every other; throws a DpopError.
   */
  verify(request: DpopRequest): Promise<DpopProof>;
}

const b64sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

/** `origin + path` of a URL with its query and fragment dropped (RFC 9449 4.3 point 9, RFC 3986 6.2.2-6.2.3 by WHATWG URL). */
function normalisedTarget(value: string): string | undefined {
  try {
    const url = new URL(value);
    return url.origin + url.pathname;
  } catch {
    return undefined;
  }
}

/**
 * DPoP proof verification for the token, userinfo and revocation endpoints. The signature and
 * header (`typ`, `alg`, a public `jwk`) are checked by jose; the claims here. Nonces are not
 * stored: the nonce of a window is a keyed hash of the window's number under the server
 * secret, so every node computes the same one. A `jti` is spent in the one replay table
 * (`spent_tokens`, one atomic insert), keyed by the proof's key and `jti`, until the proof's
 * `iat` leaves the accepted window and the proof would be refused anyway.
 */
export function createDpopVerifier({
  issuer,
  spent,
  hash,
  now,
}: {
  issuer: string;
  spent: Pick<SpentTokenStore, 'spend'>;
  hash: SecretHasher;
  now: () => number;
}): DpopVerifier {
  const nonceOf = (window: number) => hash('dpop-nonce', String(window)).slice(0, 32);
  const windowAt = (at: number) => Math.floor(at / 1000 / DPOP_NONCE_WINDOW_SECONDS);

  return {
    nonce: () => nonceOf(windowAt(now())),

    async verify(request: DpopRequest): Promise<DpopProof> {
      const { header } = request;
      // RFC 9449 4.3 points 1-2: exactly one header holding one JWT (a repeated header arrives joined by commas).
      if (header === undefined) throw new DpopError('invalid_dpop_proof', 'A DPoP proof is required.');
      if (typeof header !== 'string' || header.length > DPOP_PROOF_MAX_LENGTH || /[\s,]/.test(header))
        throw new DpopError('invalid_dpop_proof', 'Send exactly one DPoP proof.');
      const at = now();
      // Point 5, said plainly: the algorithm named, so a client can tell it from a broken proof.
      const alg = unacceptedAlg(header, DPOP_ALGS);
      if (alg !== undefined)
        throw new DpopError('invalid_dpop_proof', `The DPoP proof algorithm ${alg} is not accepted; use one of ${DPOP_ALGS.join(' ')}.`);
      let payload: Record<string, unknown>;
      let jwk: JWK;
      try {
        // Points 3-7: typ dpop+jwt, an allowed asymmetric alg, a public key in `jwk` that verifies the signature.
        const verified = await jwtVerify(header, EmbeddedJWK, {
          typ: 'dpop+jwt',
          algorithms: [...DPOP_ALGS],
          currentDate: new Date(at),
        });
        payload = verified.payload;
        jwk = verified.protectedHeader.jwk as JWK;
      } catch {
        throw new DpopError('invalid_dpop_proof', 'The DPoP proof is malformed or its signature does not verify.');
      }
      const { jti, htm, htu, iat, ath, nonce } = payload;
      if (typeof jti !== 'string' || jti.length === 0 || jti.length > 200)
        throw new DpopError('invalid_dpop_proof', 'The DPoP proof has no usable jti.');
      // Point 8: the method and URL of this request.
      if (htm !== request.method) throw new DpopError('invalid_dpop_proof', 'The DPoP proof is for another HTTP method.');
      if (typeof htu !== 'string' || normalisedTarget(htu) !== normalisedTarget(issuer + request.path))
        throw new DpopError('invalid_dpop_proof', 'The DPoP proof is for another URL.');
      // Point 11: made just now (a window around our clock).
      const nowSeconds = at / 1000;
      if (typeof iat !== 'number' || iat < nowSeconds - DPOP_PROOF_MAX_AGE_SECONDS || iat > nowSeconds + DPOP_PROOF_MAX_FUTURE_SECONDS)
        throw new DpopError('invalid_dpop_proof', 'The DPoP proof is too old or from the future.');
      // Point 12 (RFC 9449 7.1): a proof sent with an access token covers that token.
      if (request.accessToken !== undefined && (typeof ath !== 'string' || !safeEqual(ath, b64sha256(request.accessToken))))
        throw new DpopError('invalid_dpop_proof', 'The DPoP proof does not cover this access token (ath).');
      // Point 10 (RFC 9449 8, 9): the current nonce or the previous window's.
      const window = windowAt(at);
      if (typeof nonce !== 'string' || !(safeEqual(nonce, nonceOf(window)) || safeEqual(nonce, nonceOf(window - 1))))
        throw new DpopError('use_dpop_nonce', 'Use the DPoP-Nonce this answer carries.');
      const jkt = await calculateJwkThumbprint(jwk, 'sha256');
      // RFC 9449 11.1: a proof is used once, on whichever node it reaches first.
      const first = await spent.spend(
        {
          purpose: 'dpop-proof',
          idHash: hash('dpop-proof', `${jkt} ${jti}`),
          expiresAt: (iat + DPOP_PROOF_MAX_AGE_SECONDS + 1) * 1000,
        },
        at,
      );
      if (!first) throw new DpopError('invalid_dpop_proof', 'This DPoP proof was already used.');
      return { jkt };
    },
  };
}
