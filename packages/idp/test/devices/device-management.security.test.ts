/**
 * Attack: taking over or vandalising someone's device list. An attacker without a trusted
 * device of the user sends device-management requests: without a proof, with a proof made for
 * another operation (a login proof replayed as "revoke all others"), with their own device
 * against another user's device ids, or with malformed ids and hostile names (oversized,
 * control characters, bidi overrides). Each gets a clear 4xx and changes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEVICE_NAME_MAX_LENGTH, DeviceOps } from 'service-protocol';
import { deviceProof, type RawDevice, registerRawDevice, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('device management attacks', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  const register = async (email: string) => {
    clock += 31_000;
    return registerRawDevice(service, email);
  };
  const call = async (path: string, device: RawDevice, email: string, op: string | undefined, extra: object = {}) =>
    service.post(path, { userid: email, cryptoVersion: 'v1', deviceProof: await deviceProof(service, device, email, op), ...extra });
  /** The state an attack must not change: the victim's device names and which are trusted. */
  const snapshot = async (device: RawDevice, email: string) =>
    (await call('/v1/devices/list', device, email, DeviceOps.list)).body.devices.map(
      (d: { id: string; name: string }) => `${d.id}:${d.name}`,
    );

  it('refuses a request without a valid proof, a proof for another operation, and a login proof', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    const b = await register(email);
    const before = await snapshot(a, email);
    const noProof = await service.post('/v1/devices/revoke-others', { userid: email, cryptoVersion: 'v1' });
    assert.equal(noProof.status, 400);
    const garbage = await service.post('/v1/devices/revoke-others', { userid: email, cryptoVersion: 'v1', deviceProof: 'a.b.c' });
    assert.deepEqual([garbage.status, garbage.body.code], [401, 'ERR_DEVICE_UNTRUSTED']);
    for (const op of [undefined, DeviceOps.list, 'devices.revoke-others ']) {
      const r = await call('/v1/devices/revoke-others', a, email, op);
      assert.deepEqual([r.status, r.body.code], [401, 'ERR_DEVICE_UNTRUSTED'], `op ${String(op)}`);
    }
    // And a device-management proof does not log in.
    clock += 31_000;
    const login = await service.post('/v1/authenticate', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, b, email, DeviceOps.list),
    });
    assert.equal(login.body.status, 'OTP_NEEDED');
    assert.deepEqual(await snapshot(a, email), before);
  });

  it("cannot rename or revoke another user's device, nor tell it from an unknown one", async () => {
    const victim = uniqueEmail('victim');
    const attacker = uniqueEmail('attacker');
    const v = await register(victim);
    const x = await register(attacker);
    const before = await snapshot(v, victim);
    const unknown = 'dev_AAAAAAAAAAAAAAAAAAAAAA';
    for (const deviceId of [v.deviceId, unknown]) {
      const revoke = await call('/v1/devices/revoke', x, attacker, DeviceOps.revoke, { deviceId });
      assert.deepEqual([revoke.status, revoke.body.code], [404, 'ERR_DEVICE_NOT_FOUND']);
      const rename = await call('/v1/devices/rename', x, attacker, DeviceOps.rename, { deviceId, name: 'pwned' });
      assert.deepEqual([rename.status, rename.body.code], [404, 'ERR_DEVICE_NOT_FOUND']);
    }
    // The victim's email with the attacker's device: the proof names another user.
    const asVictim = await call('/v1/devices/revoke', x, victim, DeviceOps.revoke, { deviceId: v.deviceId });
    assert.deepEqual([asVictim.status, asVictim.body.code], [401, 'ERR_DEVICE_UNTRUSTED']);
    assert.deepEqual(await snapshot(v, victim), before);
  });

  it('refuses malformed device ids and hostile names with 400 and no change', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    const before = await snapshot(a, email);
    for (const deviceId of ['', 'dev_short', `${a.deviceId}x`, "dev_'; drop table devices;--", 42]) {
      const r = await call('/v1/devices/revoke', a, email, DeviceOps.revoke, { deviceId });
      assert.deepEqual([r.status, r.body.code], [400, 'ERR_REQUEST_INVALID'], `id ${String(deviceId)}`);
    }
    const names = [
      '',
      '   ',
      'x'.repeat(DEVICE_NAME_MAX_LENGTH + 1),
      'x'.repeat(10_000),
      'bad\u0000name',
      'line\nbreak',
      'evil\u202Eexe.txt',
      7,
    ];
    for (const name of names) {
      const r = await call('/v1/devices/rename', a, email, DeviceOps.rename, { deviceId: a.deviceId, name });
      assert.ok([400, 413].includes(r.status), `name ${JSON.stringify(name).slice(0, 30)}: ${r.status}`);
      assert.ok(r.status === 413 || r.body.code === 'ERR_REQUEST_INVALID');
    }
    const extra = await call('/v1/devices/list', a, email, DeviceOps.list, { admin: true });
    assert.equal(extra.status, 400, 'unknown fields are refused');
    assert.deepEqual(await snapshot(a, email), before);
    const ok = await call('/v1/devices/rename', a, email, DeviceOps.rename, {
      deviceId: a.deviceId,
      name: 'x'.repeat(DEVICE_NAME_MAX_LENGTH),
    });
    assert.equal(ok.status, 200, 'the longest allowed name is accepted');
  });
});
