/**
 * Device lifecycle through the wire protocol: list, rename, revoke, revoke all others, idle
 * expiry (injected clock), and the device_id claim. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeviceOps } from 'service-protocol';
import { loadConfig } from '../../src/config.js';
import { DEVICE_IDLE_EXPIRY_DAYS } from '../../src/defaults.js';
import {
  claimsOf,
  deviceProof,
  loginWithDevice,
  newRawDevice,
  type RawDevice,
  registerRawDevice,
  startTestService,
  type TestService,
  uniqueEmail,
  verifiedRegistration,
} from '../support/helpers.js';

const MAC_CHROME = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const WINDOWS_FIREFOX = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0';
const DAY_MS = 24 * 60 * 60 * 1000;

describe('device lifecycle', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  /** Each registration and each refused login sends an OTP: keep clear of the per-recipient window. */
  const tick = () => {
    clock += 31_000;
  };
  const register = async (email: string, userAgent?: string) => {
    tick();
    return registerRawDevice(service, email, userAgent);
  };
  const call = async (path: string, device: RawDevice, email: string, op: string, extra: object = {}) =>
    service.post(path, { userid: email, cryptoVersion: 'v1', deviceProof: await deviceProof(service, device, email, op), ...extra });
  const login = async (device: RawDevice, email: string) => {
    tick();
    return loginWithDevice(service, device, email);
  };

  it('lists the caller’s devices with browser, OS, times and "this device"', async () => {
    const email = uniqueEmail();
    const mac = await register(email, MAC_CHROME);
    const registeredAt = clock;
    const windows = await register(email, WINDOWS_FIREFOX);
    const r = await call('/v1/devices/list', mac, email, DeviceOps.list);
    assert.equal(r.status, 200);
    assert.equal(r.body.status, 'SUCCESS');
    const byId = new Map(r.body.devices.map((d: { id: string }) => [d.id, d]));
    assert.deepEqual(byId.get(mac.deviceId), {
      id: mac.deviceId,
      name: 'Chrome 131 on macOS 10.15.7',
      browser: 'Chrome 131',
      os: 'macOS 10.15.7',
      createdAt: registeredAt,
      lastUsedAt: clock,
      current: true,
      kind: 'browser',
    });
    assert.equal((byId.get(windows.deviceId) as { name: string }).name, 'Firefox 133 on Windows 10');
    assert.equal((byId.get(windows.deviceId) as { current: boolean }).current, false);
    assert.equal((byId.get(windows.deviceId) as { lastUsedAt: null }).lastUsedAt, null);
    assert.equal(r.body.devices.length, 2);
  });

  it('renames a device (trimmed), shown in the list', async () => {
    const email = uniqueEmail();
    const a = await register(email, MAC_CHROME);
    const b = await register(email, WINDOWS_FIREFOX);
    const r = await call('/v1/devices/rename', a, email, DeviceOps.rename, { deviceId: b.deviceId, name: '  Work laptop  ' });
    assert.equal(r.status, 200);
    const list = (await call('/v1/devices/list', a, email, DeviceOps.list)).body.devices;
    assert.equal(list.find((d: { id: string }) => d.id === b.deviceId).name, 'Work laptop');
  });

  it('a revoked device is refused at its next login, gets OTP_NEEDED with deviceRefused, and is no longer listed', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    const b = await register(email);
    assert.equal((await login(b, email)).status, 'SUCCESS');
    const r = await call('/v1/devices/revoke', a, email, DeviceOps.revoke, { deviceId: b.deviceId });
    assert.deepEqual([r.status, r.body.status, r.body.revoked], [200, 'SUCCESS', 1]);
    const refused = await login(b, email);
    assert.equal(refused.status, 'OTP_NEEDED');
    assert.equal(refused.deviceRefused, true);
    const list = (await call('/v1/devices/list', a, email, DeviceOps.list)).body.devices;
    assert.deepEqual(
      list.map((d: { id: string }) => d.id),
      [a.deviceId],
    );
    // The revoked device cannot manage devices either, and a second revoke finds nothing.
    const again = await call('/v1/devices/list', b, email, DeviceOps.list);
    assert.deepEqual([again.status, again.body.code], [401, 'ERR_DEVICE_UNTRUSTED']);
    const twice = await call('/v1/devices/revoke', a, email, DeviceOps.revoke, { deviceId: b.deviceId });
    assert.deepEqual([twice.status, twice.body.code], [404, 'ERR_DEVICE_NOT_FOUND']);
  });

  it('"sign out everywhere else" revokes every other device of the user and keeps the caller', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    const b = await register(email);
    const c = await register(email);
    const r = await call('/v1/devices/revoke-others', a, email, DeviceOps.revokeOthers);
    assert.deepEqual([r.status, r.body.revoked], [200, 2]);
    assert.equal((await login(b, email)).status, 'OTP_NEEDED');
    assert.equal((await login(c, email)).status, 'OTP_NEEDED');
    assert.equal((await login(a, email)).status, 'SUCCESS');
  });

  it('a device revoking itself signs itself out', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    assert.equal((await call('/v1/devices/revoke', a, email, DeviceOps.revoke, { deviceId: a.deviceId })).status, 200);
    assert.equal((await login(a, email)).deviceRefused, true);
  });

  it(`a device unused for DEVICE_IDLE_EXPIRY_DAYS (${DEVICE_IDLE_EXPIRY_DAYS}) falls back to the email OTP; one used in time stays`, async () => {
    const email = uniqueEmail();
    const idle = await register(email);
    const used = await register(email);
    clock += (DEVICE_IDLE_EXPIRY_DAYS - 1) * DAY_MS;
    assert.equal((await login(used, email)).status, 'SUCCESS', 'a day before expiry the device is trusted, and this use renews it');
    clock += 2 * DAY_MS;
    const expired = await login(idle, email);
    assert.deepEqual([expired.status, expired.deviceRefused], ['OTP_NEEDED', true]);
    assert.equal((await login(used, email)).status, 'SUCCESS', 'used within the period: still trusted');
    const list = (await call('/v1/devices/list', used, email, DeviceOps.list)).body.devices;
    assert.deepEqual(
      list.map((d: { id: string }) => d.id),
      [used.deviceId],
      'an expired device is not listed',
    );
  });

  it('the sweep takes an idle device out of use once, with one device.expired event, when nodes sweep at once', async () => {
    const email = uniqueEmail();
    const idle = await register(email);
    const lastActiveAt = clock;
    const used = await register(email);
    clock += (DEVICE_IDLE_EXPIRY_DAYS - 1) * DAY_MS;
    await login(used, email);
    await service.ctx.sweepExpired(clock);
    assert.equal((await service.ctx.devices.find(idle.deviceId))?.removedAt, null, 'a day before expiry the sweep leaves it');
    clock += 2 * DAY_MS;
    // Two nodes' sweeps at the same moment (on PostgreSQL, two connections of the pool).
    await Promise.all([service.ctx.sweepExpired(clock), service.ctx.sweepExpired(clock)]);
    await service.ctx.sweepExpired(clock + DAY_MS);
    const expired = (await service.ctx.events.list({ type: 'device.expired', limit: 1000 })).events.filter((e) => e.userId !== null);
    const mine = expired.filter((e) => e.deviceId === idle.deviceId || e.deviceId === used.deviceId);
    assert.equal(mine.length, 1, 'exactly one event, for the idle device only');
    assert.deepEqual(
      { deviceId: mine[0]?.deviceId, clientId: mine[0]?.clientId, at: mine[0]?.at, detail: mine[0]?.detail },
      { deviceId: idle.deviceId, clientId: service.clientId, at: clock, detail: { lastActiveAt } },
    );
    assert.equal((await service.ctx.devices.find(idle.deviceId))?.removedAt, clock, 'out of use for good');
    const refused = await login(idle, email);
    assert.deepEqual([refused.status, refused.deviceRefused], ['OTP_NEEDED', true]);
    assert.equal((await login(used, email)).status, 'SUCCESS', 'the device used in time stays');
  });

  it('MFA "remember me" on a device ends with its revocation', async () => {
    const email = uniqueEmail('mfa');
    const device = await newRawDevice();
    tick();
    const deviceToken = await verifiedRegistration(service, email);
    tick();
    const enrolled = await service.post('/v1/devices', {
      userid: email,
      deviceToken,
      devicePublicKey: device.publicJwk,
      mfaMethod: 'email',
    });
    assert.equal(enrolled.body.status, 'SUCCESS', JSON.stringify(enrolled.body));
    device.deviceId = enrolled.body.deviceId;
    const challenged = await login(device, email);
    assert.equal(challenged.status, 'MFA_REQUIRED');
    await service.post('/v1/mfa/initiate', { userid: email, sessionId: challenged.sessionId });
    const verified = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: challenged.sessionId,
      otp: await service.latestOtp(email),
      rememberMe: true,
    });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal((await login(device, email)).status, 'SUCCESS', 'remembered for MFA: no second step');
    const revoked = await call('/v1/devices/revoke', device, email, DeviceOps.revoke, { deviceId: device.deviceId });
    assert.equal(revoked.status, 200);
    const after = await login(device, email);
    assert.deepEqual([after.status, after.deviceRefused], ['OTP_NEEDED', true], 'neither trusted nor remembered for MFA any more');
  });

  it('reads the idle period from SERVICE_IDP_DEVICE_IDLE_DAYS and refuses a bad one', () => {
    assert.equal(loadConfig({}, {}).deviceIdleDays, DEVICE_IDLE_EXPIRY_DAYS);
    assert.equal(loadConfig({}, { SERVICE_IDP_DEVICE_IDLE_DAYS: '30' }).deviceIdleDays, 30);
    for (const bad of ['0', '-1', '1.5', 'ever', '3651']) {
      assert.throws(() => loadConfig({}, { SERVICE_IDP_DEVICE_IDLE_DAYS: bad }), /invalid SERVICE_IDP_DEVICE_IDLE_DAYS/);
    }
  });

  it('the ID token names the device that signed in (device_id), and the one just registered', async () => {
    const email = uniqueEmail();
    const a = await register(email);
    const signedIn = await login(a, email);
    assert.equal((await claimsOf(service, signedIn.code)).device_id, a.deviceId);
    tick();
    const otp = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: otp.body.deviceToken, otp: otp.body.code });
    const unremembered = await service.post('/v1/devices', { userid: email, deviceToken: otp.body.deviceToken });
    assert.equal((await claimsOf(service, unremembered.body.code)).device_id, undefined, 'no remembered device: no claim');
  });
});
