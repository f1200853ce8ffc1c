/**
 * Attack: logging in as someone else without their device. A remembered device signs a
 * single-use server challenge with its non-extractable key; a proof with a forged signature,
 * a replayed nonce, another user's device, a removed device or the wrong crypto version
 * falls back to the email OTP (the same OTP_NEEDED answer), never to a code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey as JoseKey } from 'jose';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';

/** ECDSA-Sig-Value (RFC 3279 2.2.3) from r and s. */
function derSignature(r: Buffer, s: Buffer): Buffer {
  const integer = (n: Buffer) => {
    let bytes = n.subarray(n.findIndex((b) => b !== 0));
    if ((bytes[0] as number) & 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
    return Buffer.concat([Buffer.from([0x02, bytes.length]), bytes]);
  };
  const body = Buffer.concat([integer(r), integer(s)]);
  return Buffer.concat([Buffer.from([0x30, body.length]), body]);
}

describe('device proof', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  /** Registers a device with a key pair the test holds, through the raw wire protocol. */
  async function registerDevice(email: string) {
    const { publicKey, privateKey } = await generateKeyPair('ES256');
    const { kty, crv, x, y } = await exportJWK(publicKey);
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const d = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: { kty, crv, x, y } });
    assert.equal(d.status, 200);
    return { deviceId: d.body.deviceId as string, privateKey };
  }

  async function challenge(): Promise<string> {
    return (await service.post('/v1/device-challenges', {})).body.challenge;
  }

  function proof(key: JoseKey, kid: string, sub: string, nonce: string, cv = 'v1') {
    const payload = new TextEncoder().encode(JSON.stringify({ sub, nonce, iat: Math.floor(Date.now() / 1000) }));
    return new CompactSign(payload).setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid, cv }).sign(key);
  }

  const login = async (email: string, deviceProof: string) => {
    clock += 31_000; // a refused proof falls back to an OTP send: keep clear of the per-recipient window
    return (await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof })).body;
  };

  it('accepts a valid proof once, and refuses the same nonce again', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    const signed = await proof(device.privateKey, device.deviceId, email, await challenge());
    const first = await login(email, signed);
    assert.equal(first.status, 'SUCCESS');
    assert.equal((await login(email, signed)).status, 'OTP_NEEDED');
  });

  it('refuses a validly signed proof with a critical header extension, or a DER-encoded signature', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    const payload = new TextEncoder().encode(JSON.stringify({ sub: email, nonce: await challenge(), iat: Math.floor(Date.now() / 1000) }));
    const withCrit = await new CompactSign(payload)
      .setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid: device.deviceId, cv: 'v1', crit: ['exp'], exp: 1 } as never)
      .sign(device.privateKey, { crit: { exp: true } });
    assert.equal((await login(email, withCrit)).status, 'OTP_NEEDED');
    // The same proof with its r‖s signature re-encoded as DER (what node:crypto signs by default).
    const nonce = await challenge();
    const [h, p, s] = (await proof(device.privateKey, device.deviceId, email, nonce)).split('.') as [string, string, string];
    const raw = Buffer.from(s, 'base64url');
    const der = derSignature(raw.subarray(0, 32), raw.subarray(32));
    assert.equal((await login(email, `${h}.${p}.${der.toString('base64url')}`)).status, 'OTP_NEEDED');
    // And the untouched proof for that nonce still signs in: only the encoding was refused.
    // (Posted without moving the clock: the challenge lives 60 s, and a success sends no OTP.)
    const untouched = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: `${h}.${p}.${s}` });
    assert.equal(untouched.body.status, 'SUCCESS');
  });

  it('refuses a proof signed by another key under the device id', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    const { privateKey: forger } = await generateKeyPair('ES256');
    assert.equal((await login(email, await proof(forger, device.deviceId, email, await challenge()))).status, 'OTP_NEEDED');
  });

  it("refuses another user's device", async () => {
    const victim = uniqueEmail('victim');
    const attacker = uniqueEmail('attacker');
    await registerDevice(victim);
    const mine = await registerDevice(attacker);
    // The attacker's own valid device, claiming the victim's address.
    assert.equal((await login(victim, await proof(mine.privateKey, mine.deviceId, victim, await challenge()))).status, 'OTP_NEEDED');
    assert.equal((await login(victim, await proof(mine.privateKey, mine.deviceId, attacker, await challenge()))).status, 'OTP_NEEDED');
  });

  it('refuses a removed device', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    await service.ctx.devices.revokeById(device.deviceId, Date.now());
    assert.equal((await login(email, await proof(device.privateKey, device.deviceId, email, await challenge()))).status, 'OTP_NEEDED');
  });

  it('refuses an unissued nonce and a proof for another crypto version', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    assert.equal((await login(email, await proof(device.privateKey, device.deviceId, email, 'made-up-nonce'))).status, 'OTP_NEEDED');
    assert.equal(
      (await login(email, await proof(device.privateKey, device.deviceId, email, await challenge(), 'v0'))).status,
      'OTP_NEEDED',
    );
    assert.equal((await login(email, 'not.a.jws')).status, 'OTP_NEEDED');
  });

  it('refuses a challenge issued to another client', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    const other = await service.ctx.clients.create({ name: 'Other', origins: ['http://other.test'] });
    const foreign = await fetch(`${service.url}/v1/device-challenges`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://other.test', 'x-service-key': other.publishableKey },
      body: '{}',
    });
    const { challenge } = await foreign.json();
    assert.equal((await login(email, await proof(device.privateKey, device.deviceId, email, challenge))).status, 'OTP_NEEDED');
  });

  it('refuses a tampered or expired challenge', async () => {
    const email = uniqueEmail();
    const device = await registerDevice(email);
    const [expiry, nonce, mac] = (await challenge()).split('.');
    const later = (Number.parseInt(expiry as string, 36) + 3_600_000).toString(36);
    assert.equal(
      (await login(email, await proof(device.privateKey, device.deviceId, email, `${later}.${nonce}.${mac}`))).status,
      'OTP_NEEDED',
    );
    const stale = await challenge();
    clock += 61_000;
    assert.equal((await login(email, await proof(device.privateKey, device.deviceId, email, stale))).status, 'OTP_NEEDED');
  });

  it('refuses a device public key that is not a point on P-256, without spending the registration', async () => {
    const email = uniqueEmail();
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const offCurve = { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: `${'A'.repeat(42)}E` };
    const bad = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: offCurve });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.code, 'ERR_DEVICE_KEY_INVALID');
    const { publicKey } = await generateKeyPair('ES256');
    const { kty, crv, x, y } = await exportJWK(publicKey);
    const good = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: { kty, crv, x, y } });
    assert.equal(good.status, 200);
  });

  it('refuses a device key with a private part at registration', async () => {
    const email = uniqueEmail();
    const { privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwk = await exportJWK(privateKey);
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const d = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: jwk });
    assert.equal(d.status, 400);
    assert.equal(d.body.code, 'ERR_REQUEST_INVALID');
  });
});
