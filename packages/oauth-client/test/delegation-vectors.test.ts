/**
 * The published vector (test/vectors/delegation-v1.json) still opens with its fixed keys at its
 * fixed `now`, and its inner JWS is byte-identical when signed again (Ed25519 is deterministic).
 * A change of the format breaks this test: publish a new version (v2) instead.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { CompactSign, compactDecrypt, decodeProtectedHeader } from 'jose';
import { loadDelegationKey, openEnvelope } from '../src/delegation/index.js';
import { SEED_LABELS, seedOf } from './delegation-fixtures.js';

interface VectorKey {
  seed_label: string;
  seed_hex: string;
  pkcs8_der_prefix_hex: string;
  private_pem: string;
  public_pem: string;
}
interface Message {
  claims: Record<string, unknown>;
  inner_jws: string;
  jwe: string;
}
const vector = JSON.parse(readFileSync(new URL('./vectors/delegation-v1.json', import.meta.url), 'utf8')) as {
  now: number;
  sp_id: string;
  service_audience: string;
  keys: Record<'sp_ed25519' | 'sp_x25519' | 'idp_ed25519' | 'idp_x25519', VectorKey>;
  request: Message;
  response: Message;
};

const keys = {
  spSign: loadDelegationKey(vector.keys.sp_ed25519.private_pem, 'ed25519-private', 'sp_ed25519'),
  spVerify: loadDelegationKey(vector.keys.sp_ed25519.public_pem, 'ed25519-public', 'sp_ed25519'),
  spDecrypt: loadDelegationKey(vector.keys.sp_x25519.private_pem, 'x25519-private', 'sp_x25519'),
  idpSign: loadDelegationKey(vector.keys.idp_ed25519.private_pem, 'ed25519-private', 'idp_ed25519'),
  idpVerify: loadDelegationKey(vector.keys.idp_ed25519.public_pem, 'ed25519-public', 'idp_ed25519'),
  idpDecrypt: loadDelegationKey(vector.keys.idp_x25519.private_pem, 'x25519-private', 'idp_x25519'),
};

async function resign(claims: object, key: typeof keys.spSign): Promise<string> {
  return new CompactSign(new TextEncoder().encode(JSON.stringify(claims)))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt' })
    .sign(key);
}

describe('delegation-v1 test vector', () => {
  it('keys are PKCS#8 prefix || SHA-256(label), with matching public keys', () => {
    const labels: Record<string, string> = {
      sp_ed25519: SEED_LABELS.spEd25519,
      sp_x25519: SEED_LABELS.spX25519,
      idp_ed25519: SEED_LABELS.idpEd25519,
      idp_x25519: SEED_LABELS.idpX25519,
    };
    for (const [name, k] of Object.entries(vector.keys)) {
      assert.equal(k.seed_label, labels[name]);
      assert.equal(k.seed_hex, seedOf(k.seed_label));
      const derived = createPrivateKey({ key: Buffer.from(k.pkcs8_der_prefix_hex + k.seed_hex, 'hex'), format: 'der', type: 'pkcs8' });
      assert.equal(derived.export({ type: 'pkcs8', format: 'pem' }), k.private_pem, name);
      assert.equal(createPublicKey(derived).export({ type: 'spki', format: 'pem' }), k.public_pem, name);
    }
  });

  it('request: the service opens it at `now` and gets the claims', async () => {
    const claims = await openEnvelope(vector.request.jwe, {
      decryptionKey: keys.idpDecrypt,
      verifyKey: keys.spVerify,
      audience: vector.service_audience,
      issuer: vector.sp_id,
      now: vector.now,
      expectedOp: 'initiate_mfa_change',
    });
    assert.deepEqual(claims, vector.request.claims);
  });

  it('response: the SP opens it at `now`, bound to the request jti', async () => {
    const claims = await openEnvelope(vector.response.jwe, {
      decryptionKey: keys.spDecrypt,
      verifyKey: keys.idpVerify,
      audience: vector.sp_id,
      issuer: vector.service_audience,
      now: vector.now,
      expectedOp: 'initiate_mfa_change',
      inResponseTo: vector.request.claims.jti as string,
    });
    assert.deepEqual(claims, vector.response.claims);
  });

  it('the JWE plaintext is the inner JWS, and the inner JWS is byte-identical when signed again', async () => {
    for (const [message, decryptKey, signKey] of [
      [vector.request, keys.idpDecrypt, keys.spSign],
      [vector.response, keys.spDecrypt, keys.idpSign],
    ] as const) {
      assert.deepEqual(decodeProtectedHeader(message.jwe), {
        ...decodeProtectedHeader(message.jwe),
        alg: 'ECDH-ES',
        enc: 'A256GCM',
        cty: 'JWT',
        typ: 'delegation+jwe',
      });
      const { plaintext } = await compactDecrypt(message.jwe, decryptKey);
      assert.equal(new TextDecoder().decode(plaintext), message.inner_jws);
      assert.equal(await resign(message.claims, signKey), message.inner_jws);
    }
  });

  it('a minute after expiry, the same vector is refused', async () => {
    await assert.rejects(
      openEnvelope(vector.request.jwe, {
        decryptionKey: keys.idpDecrypt,
        verifyKey: keys.spVerify,
        audience: vector.service_audience,
        now: (vector.request.claims.exp as number) + 60,
      }),
      { code: 'ERR_DELEGATION_EXPIRED' },
    );
  });
});
