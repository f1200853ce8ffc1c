/**
 * The console's dashboard (GET /admin/v1/dashboard) counts what happened: sign-ins, failed
 * steps, new devices and OTP sends made here land in the current bucket, on SQLite and on
 * PostgreSQL (the grouping is SQL arithmetic on `at`, which the two engines type differently).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newRawDevice, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

const sum = (series: number[]) => series.reduce((a, b) => a + b, 0);

describe('dashboard counts', () => {
  let service: TestService;
  let key: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
  });
  after(() => service.close());

  const dashboard = async (query = '') => {
    const response = await fetch(`${service.url}/admin/v1/dashboard${query}`, { headers: { authorization: `Bearer ${key}` } });
    assert.equal(response.status, 200);
    return response.json();
  };

  /** One first sign-in with one wrong code before the right one: otp.sent, sign_in.failed, device.registered, sign_in.succeeded. */
  const signInWithOneMistake = async () => {
    const email = uniqueEmail('dash');
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    const wrong = a.body.code === '000000' ? '000001' : '000000';
    assert.equal((await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: wrong })).status, 400);
    assert.equal(
      (await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code })).status,
      200,
    );
    const device = await newRawDevice();
    const d = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(d.status, 200);
  };

  it('counts the sign-ins, failures, new devices and OTP sends made, in the newest bucket', async () => {
    const before = await dashboard();
    for (let i = 0; i < 3; i++) await signInWithOneMistake();
    const after = await dashboard();
    for (const name of ['signIns', 'signInFailures', 'newDevices', 'otpSends'] as const) {
      assert.equal(after.series[name].length, before.series[name].length, name);
      assert.equal(sum(after.series[name]) - sum(before.series[name]), 3, name);
      // The current bucket is the last one (unless the run crossed a bucket boundary, then the one before).
      assert.ok(after.series[name].at(-1) >= 1, `${name}: the newest bucket holds the new events`);
    }
    assert.equal(sum(after.series.otpRefusals), 0, 'no send was refused');
    // The same events, whatever the window.
    const week = await dashboard('?hours=168');
    assert.ok(sum(week.series.signIns) >= 3);
    assert.equal(week.bucketMs, (168 * 3_600_000) / week.series.signIns.length);
  });

  it('refuses a window out of range with 400', async () => {
    for (const hours of ['0', '100000', 'x']) {
      const response = await fetch(`${service.url}/admin/v1/dashboard?hours=${hours}`, { headers: { authorization: `Bearer ${key}` } });
      assert.equal(response.status, 400, hours);
    }
  });
});
