/**
 * The delegation envelope: a nested JWT (RFC 7519 11.2), EdDSA inside, ECDH-ES/A256GCM
 * outside. Each refusal is asserted by its stable code; the clock is fixed with `now`.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync, type KeyObject, randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { CompactEncrypt, CompactSign } from 'jose';
import {
  DELEGATION_CLOCK_SKEW_SECONDS,
  DELEGATION_CONTENT_TYPE,
  DELEGATION_MAX_TTL_SECONDS,
  type DelegationClaims,
  DelegationConfigError,
  DelegationEnvelopeError,
  type DelegationEnvelopeErrorCode,
  type DelegationRequestClaims,
  type OpenEnvelopeOptions,
  openEnvelope,
  requestClaims,
  responseClaims,
  sealEnvelope,
} from '../src/delegation/index.js';
import { FIXED, randomPair, SERVICE_URL, SP_ID } from './delegation-fixtures.js';

const NOW = 1_767_225_600; // 2026-01-01T00:00:00Z
const encoder = new TextEncoder();

function request(overrides: Record<string, unknown> = {}): DelegationRequestClaims {
  return {
    ...requestClaims({
      iss: SP_ID,
      aud: SERVICE_URL,
      op: 'initiate_mfa_change',
      body: { userid: 'ann@example.com', mfaMethod: 'sms', phoneNumber: '+15555550100' },
      jti: 'req-1',
      now: NOW,
      ttlSeconds: 120,
    }),
    ...overrides,
  } as DelegationRequestClaims;
}

/** What the service does: opens a request from the SP. */
function serviceOpens(overrides: Partial<OpenEnvelopeOptions> = {}): OpenEnvelopeOptions {
  return {
    decryptionKey: FIXED.idpX25519.privateKey,
    verifyKey: FIXED.spEd25519.publicKey,
    audience: SERVICE_URL,
    issuer: SP_ID,
    now: NOW,
    ...overrides,
  };
}

function sealRequest(claims: DelegationClaims = request()): Promise<string> {
  return sealEnvelope({ claims, signingKey: FIXED.spEd25519.privateKey, encryptionKey: FIXED.idpX25519.publicKey });
}

/** An independent nested-JWT builder straight on jose, to make envelopes sealEnvelope refuses to make. */
async function sealRaw(args: {
  claims: unknown;
  innerHeader?: Record<string, unknown>;
  signKey?: KeyObject;
  outerHeader?: Record<string, unknown>;
  encKey?: KeyObject | Uint8Array;
}): Promise<string> {
  const jws = await new CompactSign(encoder.encode(JSON.stringify(args.claims)))
    .setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt', ...args.innerHeader } as { alg: string })
    .sign(args.signKey ?? FIXED.spEd25519.privateKey);
  return new CompactEncrypt(encoder.encode(jws))
    .setProtectedHeader({ alg: 'ECDH-ES', enc: 'A256GCM', cty: 'JWT', typ: 'delegation+jwe', ...args.outerHeader } as {
      alg: string;
      enc: string;
    })
    .encrypt(args.encKey ?? FIXED.idpX25519.publicKey);
}

async function assertRefused(promise: Promise<unknown>, code: DelegationEnvelopeErrorCode) {
  await assert.rejects(promise, (err: unknown) => {
    assert.ok(err instanceof DelegationEnvelopeError, `expected DelegationEnvelopeError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return true;
  });
}

describe('delegation envelope: round trip', () => {
  it('seals a request the service opens, with every claim intact', async () => {
    const claims = request();
    const jwe = await sealRequest(claims);
    assert.equal(jwe.split('.').length, 5);
    const header = JSON.parse(Buffer.from(jwe.split('.')[0] as string, 'base64url').toString());
    assert.deepEqual(
      { ...header, epk: undefined },
      {
        alg: 'ECDH-ES',
        enc: 'A256GCM',
        cty: 'JWT',
        typ: 'delegation+jwe',
        epk: undefined,
      },
    );
    assert.equal(header.epk.crv, 'X25519');
    assert.equal(jwe.split('.')[1], '', 'ECDH-ES direct key agreement has an empty encrypted key');
    assert.deepEqual(await openEnvelope(jwe, serviceOpens({ expectedOp: 'initiate_mfa_change' })), claims);
  });

  it('seals a response bound to the request, which the SP opens', async () => {
    const req = request();
    const res = responseClaims(req, { result: { session_id: 's-1', status: 'otp_sent' }, jti: 'res-1', now: NOW, ttlSeconds: 60 });
    assert.equal(res.iss, SERVICE_URL);
    assert.equal(res.aud, SP_ID);
    assert.equal(res.irt, 'req-1');
    const jwe = await sealEnvelope({ claims: res, signingKey: FIXED.idpEd25519.privateKey, encryptionKey: FIXED.spX25519.publicKey });
    const opened = await openEnvelope(jwe, {
      decryptionKey: FIXED.spX25519.privateKey,
      verifyKey: FIXED.idpEd25519.publicKey,
      audience: SP_ID,
      issuer: SERVICE_URL,
      now: NOW,
      expectedOp: 'initiate_mfa_change',
      inResponseTo: 'req-1',
    });
    assert.deepEqual(opened, res);
  });

  it('picks the sender key by iss and the decryption key by header', async () => {
    const jwe = await sealEnvelope({
      claims: request(),
      signingKey: FIXED.spEd25519.privateKey,
      encryptionKey: FIXED.idpX25519.publicKey,
      kid: 'idp-x25519-1',
    });
    const seen: unknown[] = [];
    const opened = await openEnvelope(
      jwe,
      serviceOpens({
        decryptionKey: (header) => {
          seen.push(header.kid);
          return FIXED.idpX25519.privateKey;
        },
        verifyKey: async (iss) => {
          seen.push(iss);
          return iss === SP_ID ? FIXED.spEd25519.publicKey : undefined;
        },
      }),
    );
    assert.equal(opened.jti, 'req-1');
    assert.deepEqual(seen, ['idp-x25519-1', SP_ID]);
  });

  it('accepts iat within the clock skew and exp one second ahead', async () => {
    const skewed = request({ iat: NOW + DELEGATION_CLOCK_SKEW_SECONDS, exp: NOW + DELEGATION_CLOCK_SKEW_SECONDS + 60 });
    assert.deepEqual(await openEnvelope(await sealRequest(skewed), serviceOpens()), skewed);
    const last = request({ iat: NOW - 299, exp: NOW + 1 });
    assert.deepEqual(await openEnvelope(await sealRequest(last), serviceOpens()), last);
  });

  it('exports the wire constants', () => {
    assert.equal(DELEGATION_MAX_TTL_SECONDS, 300);
    assert.equal(DELEGATION_CLOCK_SKEW_SECONDS, 30);
    assert.equal(DELEGATION_CONTENT_TYPE, 'application/jose');
  });
});

describe('delegation envelope: refusals', () => {
  it('wrong decryption key: ERR_DELEGATION_DECRYPT', async () => {
    const jwe = await sealRequest();
    await assertRefused(openEnvelope(jwe, serviceOpens({ decryptionKey: randomPair('x25519').privateKey })), 'ERR_DELEGATION_DECRYPT');
  });

  it('tampered ciphertext (one bit flipped): ERR_DELEGATION_DECRYPT', async () => {
    const parts = (await sealRequest()).split('.');
    const ciphertext = Buffer.from(parts[3] as string, 'base64url');
    ciphertext[5] = (ciphertext[5] as number) ^ 0x01;
    parts[3] = ciphertext.toString('base64url');
    await assertRefused(openEnvelope(parts.join('.'), serviceOpens()), 'ERR_DELEGATION_DECRYPT');
  });

  it('tampered protected header (AAD) or tag: ERR_DELEGATION_DECRYPT', async () => {
    const parts = (await sealRequest()).split('.');
    const tag = Buffer.from(parts[4] as string, 'base64url');
    tag[0] = (tag[0] as number) ^ 0x80;
    await assertRefused(
      openEnvelope([...parts.slice(0, 4), tag.toString('base64url')].join('.'), serviceOpens()),
      'ERR_DELEGATION_DECRYPT',
    );
    const header = JSON.parse(Buffer.from(parts[0] as string, 'base64url').toString());
    const reencoded = Buffer.from(JSON.stringify({ ...header, kid: 'x' })).toString('base64url');
    await assertRefused(openEnvelope([reencoded, ...parts.slice(1)].join('.'), serviceOpens()), 'ERR_DELEGATION_DECRYPT');
  });

  it('signed by another Ed25519 key: ERR_DELEGATION_SIGNATURE', async () => {
    const jwe = await sealEnvelope({
      claims: request(),
      signingKey: randomPair('ed25519').privateKey,
      encryptionKey: FIXED.idpX25519.publicKey,
    });
    await assertRefused(openEnvelope(jwe, serviceOpens()), 'ERR_DELEGATION_SIGNATURE');
  });

  it('a sender the resolver does not know: ERR_DELEGATION_ISSUER', async () => {
    const jwe = await sealRequest(request({ iss: 'other-client' }));
    await assertRefused(
      openEnvelope(jwe, serviceOpens({ issuer: undefined, verifyKey: (iss) => (iss === SP_ID ? FIXED.spEd25519.publicKey : undefined) })),
      'ERR_DELEGATION_ISSUER',
    );
  });

  it('expired (exp = now): ERR_DELEGATION_EXPIRED', async () => {
    const jwe = await sealRequest(request({ iat: NOW - 120, exp: NOW }));
    await assertRefused(openEnvelope(jwe, serviceOpens()), 'ERR_DELEGATION_EXPIRED');
  });

  it('iat beyond the clock skew in the future: ERR_DELEGATION_NOT_YET_VALID', async () => {
    const iat = NOW + DELEGATION_CLOCK_SKEW_SECONDS + 1;
    const jwe = await sealRequest(request({ iat, exp: iat + 60 }));
    await assertRefused(openEnvelope(jwe, serviceOpens()), 'ERR_DELEGATION_NOT_YET_VALID');
  });

  it('lifetime over the maximum: ERR_DELEGATION_TTL_TOO_LONG, and sealEnvelope refuses to make one', async () => {
    const long = request({ iat: NOW, exp: NOW + DELEGATION_MAX_TTL_SECONDS + 1 });
    await assertRefused(openEnvelope(await sealRaw({ claims: long }), serviceOpens()), 'ERR_DELEGATION_TTL_TOO_LONG');
    await assertRefused(sealRequest(long), 'ERR_DELEGATION_TTL_TOO_LONG');
    const backwards = request({ iat: NOW, exp: NOW });
    await assertRefused(
      openEnvelope(await sealRaw({ claims: { ...backwards, exp: NOW + 1, iat: NOW + 1 } }), serviceOpens()),
      'ERR_DELEGATION_TTL_TOO_LONG',
    );
    await assertRefused(openEnvelope(await sealRaw({ claims: backwards }), serviceOpens({ now: NOW - 1 })), 'ERR_DELEGATION_TTL_TOO_LONG');
  });

  it('a tighter maxTtlSeconds is applied', async () => {
    const jwe = await sealRequest(request({ iat: NOW, exp: NOW + 120 }));
    await assertRefused(openEnvelope(jwe, serviceOpens({ maxTtlSeconds: 60 })), 'ERR_DELEGATION_TTL_TOO_LONG');
    await assert.rejects(openEnvelope(jwe, serviceOpens({ maxTtlSeconds: 301 })), TypeError);
  });

  it('wrong audience (even a near one): ERR_DELEGATION_AUDIENCE', async () => {
    for (const aud of ['https://other.example.com', `${SERVICE_URL}/`, SERVICE_URL.toUpperCase()]) {
      await assertRefused(openEnvelope(await sealRequest(request({ aud })), serviceOpens()), 'ERR_DELEGATION_AUDIENCE');
    }
    await assertRefused(
      openEnvelope(await sealRaw({ claims: request({ aud: [SERVICE_URL] }) }), serviceOpens()),
      'ERR_DELEGATION_MALFORMED',
    );
  });

  it('wrong issuer: ERR_DELEGATION_ISSUER', async () => {
    const jwe = await sealRequest(request({ iss: 'client-999' }));
    await assertRefused(openEnvelope(jwe, serviceOpens()), 'ERR_DELEGATION_ISSUER');
  });

  it('wrong irt, or a request where a response is expected: ERR_DELEGATION_REPLY_MISMATCH', async () => {
    const res = responseClaims(request(), { result: { status: 'success' } as never, jti: 'res-1', now: NOW, ttlSeconds: 60 });
    const jwe = await sealEnvelope({ claims: res, signingKey: FIXED.idpEd25519.privateKey, encryptionKey: FIXED.spX25519.publicKey });
    const spOpens = {
      decryptionKey: FIXED.spX25519.privateKey,
      verifyKey: FIXED.idpEd25519.publicKey,
      audience: SP_ID,
      issuer: SERVICE_URL,
      now: NOW,
    };
    await assertRefused(openEnvelope(jwe, { ...spOpens, inResponseTo: 'req-2' }), 'ERR_DELEGATION_REPLY_MISMATCH');
    await assertRefused(openEnvelope(jwe, { ...spOpens, expectedOp: 'verify_mfa_change' }), 'ERR_DELEGATION_REPLY_MISMATCH');
    const asRequest = await sealEnvelope({
      claims: { ...request(), iss: SERVICE_URL, aud: SP_ID },
      signingKey: FIXED.idpEd25519.privateKey,
      encryptionKey: FIXED.spX25519.publicKey,
    });
    await assertRefused(openEnvelope(asRequest, { ...spOpens, inResponseTo: 'req-1' }), 'ERR_DELEGATION_REPLY_MISMATCH');
  });

  it('inner alg other than EdDSA (ES256): ERR_DELEGATION_SIGNATURE', async () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwe = await sealRaw({ claims: request(), innerHeader: { alg: 'ES256' }, signKey: privateKey });
    await assertRefused(openEnvelope(jwe, serviceOpens()), 'ERR_DELEGATION_SIGNATURE');
  });

  it('inner typ missing or different: ERR_DELEGATION_SIGNATURE', async () => {
    await assertRefused(
      openEnvelope(await sealRaw({ claims: request(), innerHeader: { typ: 'JWT' } }), serviceOpens()),
      'ERR_DELEGATION_SIGNATURE',
    );
  });

  it('outer alg other than ECDH-ES (dir, ECDH-ES+A256KW) or enc other than A256GCM: ERR_DELEGATION_DECRYPT', async () => {
    const dir = await sealRaw({ claims: request(), outerHeader: { alg: 'dir' }, encKey: randomBytes(32) });
    await assertRefused(openEnvelope(dir, serviceOpens()), 'ERR_DELEGATION_DECRYPT');
    const kw = await sealRaw({ claims: request(), outerHeader: { alg: 'ECDH-ES+A256KW' } });
    await assertRefused(openEnvelope(kw, serviceOpens()), 'ERR_DELEGATION_DECRYPT');
    const gcm128 = await sealRaw({ claims: request(), outerHeader: { enc: 'A128GCM' } });
    await assertRefused(openEnvelope(gcm128, serviceOpens()), 'ERR_DELEGATION_DECRYPT');
  });

  it('outer cty or typ missing: ERR_DELEGATION_DECRYPT', async () => {
    await assertRefused(
      openEnvelope(await sealRaw({ claims: request(), outerHeader: { cty: undefined } }), serviceOpens()),
      'ERR_DELEGATION_DECRYPT',
    );
    await assertRefused(
      openEnvelope(await sealRaw({ claims: request(), outerHeader: { typ: 'JWT' } }), serviceOpens()),
      'ERR_DELEGATION_DECRYPT',
    );
  });

  it('a bare JWS, JSON or garbage: ERR_DELEGATION_DECRYPT', async () => {
    const jws = await new CompactSign(encoder.encode(JSON.stringify(request())))
      .setProtectedHeader({ alg: 'EdDSA', typ: 'delegation+jwt' })
      .sign(FIXED.spEd25519.privateKey);
    for (const input of [jws, '{"status":"success"}', '', 'a.b.c.d.e']) {
      await assertRefused(openEnvelope(input, serviceOpens()), 'ERR_DELEGATION_DECRYPT');
    }
  });

  it('missing or ill-typed claims: ERR_DELEGATION_MALFORMED', async () => {
    const cases: Record<string, unknown>[] = [
      { jti: undefined },
      { jti: '' },
      { jti: 'x'.repeat(129) },
      { iat: undefined },
      { exp: '1767225700' },
      { op: 'delete_user' },
      { body: undefined },
      { body: 'text' },
    ];
    for (const overrides of cases) {
      const claims = JSON.parse(JSON.stringify(request(overrides)));
      await assertRefused(openEnvelope(await sealRaw({ claims }), serviceOpens()), 'ERR_DELEGATION_MALFORMED');
      await assertRefused(sealRequest(claims), 'ERR_DELEGATION_MALFORMED');
    }
    await assertRefused(openEnvelope(await sealRaw({ claims: [1, 2] }), serviceOpens()), 'ERR_DELEGATION_MALFORMED');
  });

  it('messages carry neither plaintext nor key material', async () => {
    const secretish = 'user-secret-userid@example.com';
    const jwe = await sealRequest(request({ body: { userid: secretish, mfaMethod: 'email' } }));
    for (const opts of [serviceOpens({ audience: 'x' }), serviceOpens({ decryptionKey: randomPair('x25519').privateKey })]) {
      await assert.rejects(openEnvelope(jwe, opts), (err: Error) => {
        const text = `${err.message} ${JSON.stringify(err.cause ?? '')}`;
        assert.ok(!text.includes(secretish));
        assert.ok(!text.includes('PRIVATE'));
        return true;
      });
    }
  });

  it('sealEnvelope refuses keys of the wrong kind with DelegationConfigError', async () => {
    await assert.rejects(
      sealEnvelope({ claims: request(), signingKey: FIXED.spX25519.privateKey, encryptionKey: FIXED.idpX25519.publicKey }),
      (err: unknown) => err instanceof DelegationConfigError && /signingKey/.test(err.message),
    );
    await assert.rejects(
      sealEnvelope({ claims: request(), signingKey: FIXED.spEd25519.privateKey, encryptionKey: FIXED.idpX25519.privateKey }),
      (err: unknown) => err instanceof DelegationConfigError && /encryptionKey is a private key/.test(err.message),
    );
  });
});
