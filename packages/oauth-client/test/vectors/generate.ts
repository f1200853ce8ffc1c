/**
 * Writes delegation-v1.json, the published test vector of the delegation envelope.
 *
 *   node --import tsx packages/oauth-client/test/vectors/generate.ts
 *
 * Keys are fixed: each private key is the PKCS#8 DER `prefix || seed` (RFC 8410) where the
 * 32-byte seed is SHA-256 of a fixed label, so any language can derive them again. The inner
 * JWS is deterministic (Ed25519, RFC 8032), the outer JWE is not (ECDH-ES uses a fresh
 * ephemeral key and AES-GCM a fresh IV), so running this again changes only the `jwe` fields.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CompactSign } from 'jose';
import { requestClaims, responseClaims, sealEnvelope } from '../../src/delegation/index.js';
import { ED25519_PKCS8_PREFIX, FIXED, SEED_LABELS, SERVICE_URL, SP_ID, seedOf, X25519_PKCS8_PREFIX } from '../delegation-fixtures.js';

export const VECTOR_NOW = 1_767_225_600; // 2026-01-01T00:00:00Z

const encoder = new TextEncoder();

/** The inner JWS exactly as sealEnvelope makes it: header `{"alg":"EdDSA","typ":"delegation+jwt"}`, payload JSON.stringify(claims). */
export function innerJws(claims: object, key: typeof FIXED.spEd25519.privateKey): Promise<string> {
  return new CompactSign(encoder.encode(JSON.stringify(claims))).setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt' }).sign(key);
}

async function main() {
  const request = requestClaims({
    iss: SP_ID,
    aud: SERVICE_URL,
    op: 'initiate_mfa_change',
    body: { userid: 'ann@example.com', mfaMethod: 'sms', phoneNumber: '+15555550100' },
    jti: 'tI9vUq1Zr0m3Yx6HkV2wQg',
    now: VECTOR_NOW,
    ttlSeconds: 120,
  });
  const response = responseClaims(request, {
    result: { session_id: 'mcs_7bW3nJ0cQyL5', status: 'otp_sent', message: 'A code was sent to the new phone number' },
    jti: 'Rk2hX8pLq4sN1vB7cT0zEw',
    now: VECTOR_NOW + 1,
    ttlSeconds: 60,
  });

  const key = (name: keyof typeof FIXED, prefix: string) => ({
    seed_label: SEED_LABELS[name],
    seed_hex: seedOf(SEED_LABELS[name]),
    pkcs8_der_prefix_hex: prefix,
    private_pem: FIXED[name].privatePem,
    public_pem: FIXED[name].publicPem,
  });

  const vector = {
    name: 'service delegation envelope v1',
    description:
      'Nested JWT (RFC 7519 11.2): claims signed as a compact JWS (EdDSA/Ed25519) by the sender, then encrypted as a compact JWE ' +
      '(ECDH-ES over X25519, A256GCM) to the receiver. seed_hex = SHA-256(seed_label); private key = PKCS#8 DER prefix || seed. ' +
      'The JWE is randomised (ephemeral key, IV): open it with the receiver key at `now`; the inner JWS is deterministic.',
    now: VECTOR_NOW,
    sp_id: SP_ID,
    service_audience: SERVICE_URL,
    rules: {
      outer_header: { alg: 'ECDH-ES', enc: 'A256GCM', cty: 'JWT', typ: 'delegation+jwe' },
      inner_header: { alg: 'EdDSA', typ: 'delegation+jwt' },
      max_ttl_seconds: 300,
      clock_skew_seconds: 30,
      jti_max_length: 128,
      content_type: 'application/jose',
    },
    keys: {
      sp_ed25519: key('spEd25519', ED25519_PKCS8_PREFIX),
      sp_x25519: key('spX25519', X25519_PKCS8_PREFIX),
      idp_ed25519: key('idpEd25519', ED25519_PKCS8_PREFIX),
      idp_x25519: key('idpX25519', X25519_PKCS8_PREFIX),
    },
    request: {
      from: 'SP: signed with sp_ed25519, encrypted to idp_x25519',
      claims: request,
      inner_jws: await innerJws(request, FIXED.spEd25519.privateKey),
      jwe: await sealEnvelope({ claims: request, signingKey: FIXED.spEd25519.privateKey, encryptionKey: FIXED.idpX25519.publicKey }),
    },
    response: {
      from: 'service: signed with idp_ed25519, encrypted to sp_x25519',
      claims: response,
      inner_jws: await innerJws(response, FIXED.idpEd25519.privateKey),
      jwe: await sealEnvelope({ claims: response, signingKey: FIXED.idpEd25519.privateKey, encryptionKey: FIXED.spX25519.publicKey }),
    },
  };
  const out = fileURLToPath(new URL('./delegation-v1.json', import.meta.url));
  writeFileSync(out, `${JSON.stringify(vector, null, 2)}\n`);
  console.log(`wrote ${out}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
