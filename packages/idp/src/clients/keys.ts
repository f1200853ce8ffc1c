import type { JWK } from 'jose';
import { CLIENT_JWKS_KEYS_MAX, REDIRECT_URI_MAX_LENGTH } from '../defaults.js';
import type { ClientKeys } from './store.js';

/** Members only a private or secret key has (RFC 7518 6.2.2, 6.3.2, 6.4; RFC 8037 2): a registered JWKS must hold none. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'];
/** The key types a client assertion may be signed with (token/client-assertion.ts ASSERTION_ALGS). */
const KEY_TYPES = ['RSA', 'EC', 'OKP'];

/**
 * A machine client's public keys for private_key_jwt (RFC 7523 2.2, OIDC Core 9), checked: a JWKS
 * of 1 to CLIENT_JWKS_KEYS_MAX public RSA, EC or OKP keys that jose can import, or an https URI
 * where the client publishes it (http only on loopback, for development). Not both.
 */
export async function checkClientKeys(input: { jwks?: unknown; jwksUri?: string | null }): Promise<ClientKeys> {
  if (input.jwks != null && input.jwksUri != null) throw new Error('give the JWKS or its URI, not both');
  if (input.jwksUri != null) return { jwks: null, jwksUri: checkJwksUri(input.jwksUri) };
  if (input.jwks == null) return { jwks: null, jwksUri: null };
  // jose only when keys are given: the CLI's client commands load without it.
  const { importJWK } = await import('jose');
  const keys = (input.jwks as { keys?: unknown }).keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > CLIENT_JWKS_KEYS_MAX)
    throw new Error(`the JWKS must hold 1 to ${CLIENT_JWKS_KEYS_MAX} keys ({"keys": [...]})`);
  for (const key of keys) {
    if (typeof key !== 'object' || key === null || !KEY_TYPES.includes((key as JWK).kty ?? ''))
      throw new Error('each key of the JWKS must be an RSA, EC or OKP public key');
    if (PRIVATE_MEMBERS.some((member) => member in key)) throw new Error('the JWKS must hold public keys only (a private key was given)');
    try {
      await importJWK(key as JWK, (key as JWK).alg ?? defaultAlgOf(key as JWK));
    } catch {
      throw new Error('a key of the JWKS is not a valid public key');
    }
  }
  return { jwks: { keys: keys as Array<Record<string, unknown>> }, jwksUri: null };
}

function defaultAlgOf(key: JWK): string {
  if (key.kty === 'RSA') return 'RS256';
  if (key.kty === 'EC') return key.crv === 'P-384' ? 'ES384' : key.crv === 'P-521' ? 'ES512' : 'ES256';
  return 'EdDSA';
}

function checkJwksUri(input: string): string {
  if (input.length > REDIRECT_URI_MAX_LENGTH) throw new Error(`the JWKS URI is longer than ${REDIRECT_URI_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error('the JWKS URI must be an absolute URI');
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new Error('the JWKS URI must be https (http only on loopback)');
  if (url.username || url.password || url.hash) throw new Error('the JWKS URI must have no user name, password or fragment');
  return input;
}
