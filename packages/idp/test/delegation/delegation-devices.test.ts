/**
 * Device operations of the application's backend: listDevices, revokeDevice and
 * revokeAllDevices through ServiceDelegationClient (service-oauth-client) against the running
 * service, over the signed and encrypted delegation envelope. An application acts only on users
 * who signed in to it, and only on their devices for that application.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ServiceDelegationClient } from 'service-oauth-client';
import {
  APP_ORIGIN,
  claimsOf,
  delegationFor,
  loginWithDevice,
  type RawDevice,
  registerRawDevice,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('device delegation', () => {
  let service: TestService;
  let sp: ServiceDelegationClient;
  let other: ServiceDelegationClient;
  /** The per-address send window would refuse a second OTP at once; the envelopes need the real clock, so clear it. */
  const clearSendWindow = () => service.ctx.db.deleteFrom('rate_counters').execute();
  const clientFor = async (clientId: string) => (await delegationFor(service, clientId)).client;
  before(async () => {
    service = await startTestService({ testMode: true });
    sp = await clientFor(service.clientId);
    // A second application on the same service, whose backend has its own delegation keys.
    other = await clientFor((await service.ctx.clients.create({ name: 'Other App', origins: [APP_ORIGIN] })).clientId);
  });
  after(() => service.close());

  /** A remembered device of `email`, whose sign-in was exchanged with the client (so the user signed in to it). */
  const signedInDevice = async (email: string) => {
    await clearSendWindow();
    const device = await registerRawDevice(service, email, CHROME_LINUX);
    const claims = await claimsOf(service, device.code);
    assert.equal(claims.device_id, device.deviceId, 'the ID token names the device');
    return { ...device, sub: claims.sub as string };
  };
  const trusted = async (device: RawDevice, email: string) => {
    await clearSendWindow();
    return (await loginWithDevice(service, device, email)).status === 'SUCCESS';
  };

  it('lists the user’s devices for this application, by email or user id', async () => {
    const email = uniqueEmail('backend');
    const before = Date.now();
    const device = await signedInDevice(email);
    const listed = await sp.listDevices(email);
    const createdAt = listed.devices[0]?.created_at as number;
    assert.ok(createdAt >= before && createdAt <= Date.now());
    assert.deepEqual(listed, {
      status: 'success',
      devices: [
        {
          id: device.deviceId,
          name: 'Chrome 131 on Linux',
          browser: 'Chrome 131',
          os: 'Linux',
          created_at: createdAt,
          last_used_at: null,
        },
      ],
    });
    assert.deepEqual(await sp.listDevices(device.sub), listed);
  });

  it('revokes one device: its next sign-in needs the email OTP; the other device stays', async () => {
    const email = uniqueEmail('backend');
    const lost = await signedInDevice(email);
    const kept = await signedInDevice(email);
    assert.deepEqual(await sp.revokeDevice(email, lost.deviceId), { status: 'success', message: 'Device revoked.' });
    assert.equal(await trusted(lost, email), false);
    assert.equal(await trusted(kept, email), true);
    assert.deepEqual(
      (await sp.listDevices(email)).devices.map((d) => d.id),
      [kept.deviceId],
    );
    const again = await sp.revokeDevice(email, lost.deviceId);
    assert.equal(again.status, 'failed', 'an already revoked device is not found');
  });

  it('revokes all devices of the user', async () => {
    const email = uniqueEmail('backend');
    const a = await signedInDevice(email);
    const b = await signedInDevice(email);
    const all = await sp.revokeAllDevices(email);
    assert.deepEqual([all.status, all.revoked], ['success', 2]);
    assert.equal(await trusted(a, email), false);
    assert.equal(await trusted(b, email), false);
    assert.deepEqual((await sp.listDevices(email)).devices, []);
  });

  it('another application cannot list or revoke the devices of a user who never signed in to it', async () => {
    const email = uniqueEmail('backend');
    const device = await signedInDevice(email);
    for (const userid of [email, device.sub]) {
      assert.deepEqual(await other.listDevices(userid), {
        status: 'failed',
        devices: [],
        message: 'No such user has signed in to this application.',
      });
      assert.equal((await other.revokeDevice(userid, device.deviceId)).status, 'failed');
      assert.deepEqual([(await other.revokeAllDevices(userid)).status, (await other.revokeAllDevices(userid)).revoked], ['failed', 0]);
    }
    assert.equal(await trusted(device, email), true, 'the device is untouched');
    assert.equal((await sp.listDevices(email)).devices.length, 1);
  });

  it('refuses unknown, foreign and malformed device ids without any change', async () => {
    const email = uniqueEmail('backend');
    const victim = uniqueEmail('victim');
    const mine = await signedInDevice(email);
    const theirs = await signedInDevice(victim);
    for (const deviceId of ['dev_AAAAAAAAAAAAAAAAAAAAAA', theirs.deviceId, 'not-a-device', `${mine.deviceId}'--`]) {
      const r = await sp.revokeDevice(email, deviceId);
      assert.equal(r.status, 'failed', deviceId);
    }
    await assert.rejects(sp.revokeDevice(email, ''), { code: 'ERR_DELEGATION_INPUT_INVALID' });
    assert.equal(await trusted(mine, email), true);
    assert.equal(await trusted(theirs, victim), true);
  });
});
