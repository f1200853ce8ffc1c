/**
 * Threat: a client the operator deleted (an app taken down, a leaked publishable key) keeps
 * signing users in because a node cached its record. Only the device-challenge request takes
 * its client from the per-process cache (BROWSER_CLIENT_CACHE_MS): a challenge is a nonce bound
 * to the client's id, worth nothing until an authenticate request, which reads the client
 * afresh, spends it. So while another node's deletion has not reached this node's cache, the
 * deleted client still gets challenges and nothing more; a deletion on this node, and the cache
 * time on any node, end even that.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CompactSign } from 'jose';
import { createClientService } from '../../src/clients/service.js';
import { createClientStore } from '../../src/clients/store.js';
import { createSecretHasher } from '../../src/crypto/secrets.js';
import { loadServerSecret } from '../../src/crypto/server-secret.js';
import { BROWSER_CLIENT_CACHE_MS } from '../../src/defaults.js';
import {
  APP_ORIGIN,
  newRawDevice,
  type RawDevice,
  sendClock,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

describe('a deleted client gets no working login from the client cache', () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
  });
  after(() => service.close());

  const call = async (key: string, path: string, body: unknown, origin = APP_ORIGIN) => {
    const response = await fetch(service.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'x-service-key': key },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  /** A remembered device of the client whose publishable key is `key` (wire protocol, test mode). */
  const registerOn = async (key: string, email: string): Promise<RawDevice> => {
    const device = await newRawDevice();
    const started = await call(key, '/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    const { deviceToken, code: otp } = started.body;
    assert.equal((await call(key, '/v1/email-otp/verify', { userid: email, deviceToken, otp })).status, 200);
    const registered = await call(key, '/v1/devices', { userid: email, deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    return { ...device, deviceId: registered.body.deviceId };
  };
  const proofFrom = (challenge: string, device: RawDevice, email: string) =>
    new CompactSign(new TextEncoder().encode(JSON.stringify({ sub: email, nonce: challenge, iat: Math.floor(Date.now() / 1000) })))
      .setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid: device.deviceId as string, cv: 'v1' })
      .sign(device.privateKey);
  const challengeFor = (key: string, origin?: string) => call(key, '/v1/device-challenges', {}, origin);

  it('deleted through another node: challenges for at most the cache time, never a code', async () => {
    const keys = await service.ctx.clients.create({ name: 'Doomed', origins: [APP_ORIGIN] });
    const email = uniqueEmail();
    const device = await registerOn(keys.publishableKey, email);
    const first = await challengeFor(keys.publishableKey); // cached from here on
    const signedIn = await call(keys.publishableKey, '/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await proofFrom(first.body.challenge, device, email),
    });
    assert.equal(signedIn.body.status, 'SUCCESS');

    // Another node (or the CLI) deletes the client: its own cache, not this node's, forgets it.
    const otherNode = createClientService({
      store: createClientStore(service.ctx.db),
      hash: createSecretHasher(loadServerSecret(service.ctx.config.dataDir)),
      now: clock.now,
    });
    await otherNode.delete(keys.clientId);

    const stale = await challengeFor(keys.publishableKey);
    assert.equal(stale.status, 200, 'within the cache time this node still issues a challenge');
    const withProof = await call(keys.publishableKey, '/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await proofFrom(stale.body.challenge, device, email),
    });
    assert.deepEqual([withProof.status, withProof.body.code], [401, 'ERR_CLIENT_KEY_INVALID']);
    const withoutProof = await call(keys.publishableKey, '/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    assert.deepEqual([withoutProof.status, withoutProof.body.code], [401, 'ERR_CLIENT_KEY_INVALID']);
    const info = await fetch(`${service.url}/v1/client`, { headers: { origin: APP_ORIGIN, 'x-service-key': keys.publishableKey } });
    assert.equal(info.status, 401);

    clock.at += BROWSER_CLIENT_CACHE_MS;
    const expired = await challengeFor(keys.publishableKey);
    assert.deepEqual([expired.status, expired.body.code], [401, 'ERR_CLIENT_KEY_INVALID']);
  });

  it('deleted on this node: refused at once; the origin is checked on a cached record too', async () => {
    const keys = await service.ctx.clients.create({ name: 'Doomed here', origins: [APP_ORIGIN] });
    assert.equal((await challengeFor(keys.publishableKey)).status, 200);
    const elsewhere = await challengeFor(keys.publishableKey, 'https://evil.example');
    assert.deepEqual([elsewhere.status, elsewhere.body.code], [403, 'ERR_CLIENT_ORIGIN_NOT_ALLOWED']);
    await service.ctx.clients.delete(keys.clientId);
    const refused = await challengeFor(keys.publishableKey);
    assert.deepEqual([refused.status, refused.body.code], [401, 'ERR_CLIENT_KEY_INVALID']);
  });
});
