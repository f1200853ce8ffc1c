/**
 * Key handling of the delegation: RFC 8032 7.1 (Ed25519) and RFC 7748 5.2 (X25519) vectors
 * through loadDelegationKey, and every misconfiguration refused with a message naming it.
 */
import assert from 'node:assert/strict';
import { createPublicKey, diffieHellman, generateKeyPairSync, sign } from 'node:crypto';
import { describe, it } from 'node:test';
import { DelegationConfigError, type DelegationKeyKind, loadDelegationKey } from '../src/delegation/index.js';
import {
  ED25519_PKCS8_PREFIX,
  FIXED,
  privatePem,
  publicPem,
  X25519_PKCS8_PREFIX,
  X25519_SPKI_PREFIX,
  x25519PublicFromU,
} from './delegation-fixtures.js';

function pemOf(label: 'PRIVATE KEY' | 'PUBLIC KEY', derHex: string): string {
  const b64 = Buffer.from(derHex, 'hex').toString('base64');
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)?.join('\n')}\n-----END ${label}-----\n`;
}

function rawPublic(key: ReturnType<typeof loadDelegationKey>): string {
  // The raw key is the last 32 bytes of the SPKI DER.
  return (key.type === 'public' ? key : createPublicKey(key)).export({ type: 'spki', format: 'der' }).subarray(-32).toString('hex');
}

describe('RFC 8032 7.1 Ed25519 vectors through loadDelegationKey', () => {
  const vectors = [
    {
      name: 'TEST 1',
      secret: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
      public: 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a',
      message: '',
      signature:
        'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b',
    },
    {
      name: 'TEST 2',
      secret: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
      public: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
      message: '72',
      signature:
        '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
    },
  ];
  for (const v of vectors) {
    it(`${v.name}: signature and public key`, () => {
      const key = loadDelegationKey(pemOf('PRIVATE KEY', ED25519_PKCS8_PREFIX + v.secret), 'ed25519-private', 'TEST');
      assert.equal(sign(null, Buffer.from(v.message, 'hex'), key).toString('hex'), v.signature);
      assert.equal(rawPublic(key), v.public);
      const pub = loadDelegationKey(publicPem(key), 'ed25519-public', 'TEST_PUBLIC');
      assert.equal(rawPublic(pub), v.public);
    });
  }
});

describe('RFC 7748 5.2 X25519 vectors through loadDelegationKey', () => {
  const vectors = [
    {
      scalar: 'a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4',
      u: 'e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c',
      output: 'c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552',
    },
    {
      scalar: '4b66e9d4d1b4673c5ad22691957d6af5c11b6421e0ea01d42ca4169e7918ba0d',
      u: 'e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493',
      output: '95cbde9476e8907d7aade45cb4b873f88b595a68799fa152e6f8f7647aac7957',
    },
  ];
  for (const [i, v] of vectors.entries()) {
    it(`vector ${i + 1}: scalar × u-coordinate`, () => {
      const privateKey = loadDelegationKey(pemOf('PRIVATE KEY', X25519_PKCS8_PREFIX + v.scalar), 'x25519-private', 'SCALAR');
      const publicKey = loadDelegationKey(pemOf('PUBLIC KEY', X25519_SPKI_PREFIX + v.u), 'x25519-public', 'U');
      assert.equal(diffieHellman({ privateKey, publicKey }).toString('hex'), v.output);
    });
  }
  it('the fixture helper builds the same public key', () => {
    const v = vectors[0] as (typeof vectors)[0];
    assert.equal(rawPublic(x25519PublicFromU(v.u)), v.u);
  });
});

function assertConfigError(fn: () => unknown, name: string, pattern: RegExp) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof DelegationConfigError, String(err));
    assert.equal(err.code, 'ERR_DELEGATION_CONFIG');
    assert.equal(err.option, name);
    assert.ok(err.message.startsWith(name), err.message);
    assert.match(err.message, pattern);
    assert.ok(!err.message.includes('BEGIN'), 'message must not echo the key');
    return true;
  });
}

describe('loadDelegationKey: accepted forms', () => {
  const pem = FIXED.spEd25519.privatePem;
  const forms: Record<string, string> = {
    PEM: pem,
    'PEM with literal \\n escapes': pem.trim().replaceAll('\n', '\\n'),
    'PEM with CRLF': pem.replaceAll('\n', '\r\n'),
    'base64 of the PEM': Buffer.from(pem).toString('base64'),
    'base64 of the PEM, wrapped': Buffer.from(pem).toString('base64').replace(/.{60}/g, '$&\n'),
    'base64url of the PEM': Buffer.from(pem).toString('base64url'),
    'surrounding whitespace': `\n  ${pem}  \n`,
  };
  for (const [name, value] of Object.entries(forms)) {
    it(name, () => {
      const key = loadDelegationKey(value, 'ed25519-private', 'K');
      assert.ok(key.equals(FIXED.spEd25519.privateKey));
    });
  }
  it('a KeyObject of the right kind', () => {
    assert.equal(loadDelegationKey(FIXED.idpX25519.publicKey, 'x25519-public', 'K'), FIXED.idpX25519.publicKey);
  });
});

describe('loadDelegationKey: refusals name the variable and the problem', () => {
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const cases: [string, string, DelegationKeyKind, RegExp][] = [
    ['missing', '', 'ed25519-private', /is missing/],
    ['blank', '   ', 'x25519-private', /is missing/],
    ['not PEM', 'hello world', 'ed25519-private', /not a PEM key/],
    ['malformed PEM body', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----', 'ed25519-private', /malformed PEM/],
    ['truncated PEM', FIXED.spEd25519.privatePem.slice(0, 60), 'ed25519-private', /malformed PEM/],
    ['two PEM blocks', FIXED.spEd25519.privatePem + FIXED.spX25519.privatePem, 'ed25519-private', /exactly one PEM block/],
    ['X25519 where Ed25519 belongs', FIXED.spX25519.privatePem, 'ed25519-private', /X25519 key; expected an Ed25519 private key.*swapped/],
    ['Ed25519 where X25519 belongs', FIXED.spEd25519.privatePem, 'x25519-private', /Ed25519 key; expected an X25519 private key.*swapped/],
    ['Ed25519 public where X25519 public belongs', FIXED.idpEd25519.publicPem, 'x25519-public', /swapped/],
    ['RSA PKCS#8', privatePem(rsa.privateKey), 'ed25519-private', /RSA key/],
    ['RSA PKCS#1', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), 'ed25519-private', /RSA key/],
    ['RSA public', publicPem(rsa.publicKey), 'ed25519-public', /RSA key/],
    ['EC', privatePem(ec.privateKey), 'x25519-private', /EC key/],
    ['SEC1 EC', ec.privateKey.export({ type: 'sec1', format: 'pem' }).toString(), 'x25519-private', /EC key/],
    ['public where private belongs', FIXED.spEd25519.publicPem, 'ed25519-private', /public key where a private key belongs/],
    ['private where public belongs', FIXED.idpEd25519.privatePem, 'ed25519-public', /private key where a public key belongs/],
  ];
  for (const [title, value, kind, pattern] of cases) {
    it(title, () => assertConfigError(() => loadDelegationKey(value, kind, 'MY_KEY_PEM'), 'MY_KEY_PEM', pattern));
  }
  it('a public KeyObject where a private one belongs', () => {
    assertConfigError(() => loadDelegationKey(FIXED.spEd25519.publicKey, 'ed25519-private', 'spSigningKey'), 'spSigningKey', /public key/);
  });
});
