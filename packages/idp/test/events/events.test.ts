/**
 * The audit trail (events/): what each flow records, with the request's IP and User-Agent,
 * never a code, token or key; filters and cursors; retention swept like the other tables.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeviceOps } from 'service-protocol';
import { EVENT_RETENTION_DAYS } from '../../src/defaults.js';
import type { AuditEvent } from '../../src/events/store.js';
import {
  APP_ORIGIN,
  deviceProof,
  loginWithDevice,
  newRawDevice,
  sendClock,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

const BROWSER = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';

describe('audit trail', () => {
  let service: TestService;
  const clock = sendClock();
  const { tick } = clock;
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
  });
  after(() => service.close());

  /** A browser call with a User-Agent, as a page would make it. */
  const post = async (path: string, body: unknown) => {
    const response = await fetch(service.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: APP_ORIGIN, 'x-service-key': service.publishableKey, 'user-agent': BROWSER },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  };
  const trail = async (userId?: string) => (await service.ctx.events.list({ ...(userId ? { userId } : {}), limit: 1000 })).events;
  const types = (events: AuditEvent[]) => events.map((e) => e.type).reverse();

  it('records a first sign-in step by step, with IP and User-Agent, and never a code or token', async () => {
    tick();
    const email = uniqueEmail('trail');
    const device = await newRawDevice();
    const since = clock.at;
    const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    const wrong = a.body.code === '000000' ? '000001' : '000000';
    assert.equal((await post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: wrong })).status, 400);
    assert.equal((await post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code })).status, 200);
    const d = await post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(d.status, 200);
    device.deviceId = d.body.deviceId;
    const userId = (await service.ctx.users.find(email)).id;

    const events = (await service.ctx.events.list({ since, limit: 1000 })).events;
    assert.deepEqual(types(events), ['otp.sent', 'sign_in.failed', 'user.created', 'device.registered', 'sign_in.succeeded']);
    const byType = Object.fromEntries(events.map((e) => [e.type, e]));
    assert.deepEqual(byType['sign_in.failed']?.detail, { reason: 'ERR_OTP_INVALID', step: '/email-otp/verify' });
    assert.equal(byType['sign_in.failed']?.userId, null, 'a failure names no one');
    assert.equal(byType['sign_in.succeeded']?.deviceId, device.deviceId);
    assert.equal(byType['sign_in.succeeded']?.userId, userId);
    assert.deepEqual(byType['otp.sent']?.detail, { channel: 'email', purpose: 'sign-in' });
    assert.deepEqual(byType['sign_in.succeeded']?.detail, { amr: 'otp' });
    for (const event of events) {
      assert.equal(event.ip, '127.0.0.1', event.type);
      assert.equal(event.userAgent, BROWSER, event.type);
    }
    const text = JSON.stringify(await trail());
    for (const secret of [a.body.code, a.body.deviceToken, service.publishableKey, service.secretKey])
      assert.ok(!text.includes(secret), 'no code, token or key in any event');

    // A remembered device's sign-in, then its revocation by its user.
    tick();
    const signedIn = await loginWithDevice(service, device, email);
    assert.equal(signedIn.status, 'SUCCESS');
    const proof = await deviceProof(service, device, email, DeviceOps.revoke);
    const revoked = await post('/v1/devices/revoke', { userid: email, cryptoVersion: 'v1', deviceProof: proof, deviceId: device.deviceId });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    const latest = (await trail(userId)).slice(0, 2);
    assert.deepEqual(
      latest.map((e) => [e.type, e.deviceId, e.detail]),
      [
        ['device.revoked', device.deviceId, null],
        ['sign_in.succeeded', device.deviceId, { amr: 'swk' }],
      ],
    );
  });

  it('records MFA enrollment and the lock-out, which names no account', async () => {
    tick();
    const email = uniqueEmail('mfa');
    const device = await newRawDevice();
    const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const d = await post('/v1/devices', {
      userid: email,
      deviceToken: a.body.deviceToken,
      devicePublicKey: device.publicJwk,
      mfaMethod: 'email',
    });
    assert.equal(d.status, 200, JSON.stringify(d.body));
    const userId = (await service.ctx.users.find(email)).id;
    assert.deepEqual(
      (await trail(userId)).filter((e) => e.type === 'mfa.enrolled').map((e) => e.detail),
      [{ method: 'email' }],
    );

    for (let i = 0; i < 3; i++) await service.ctx.enabledUsers.recordFailure(`key-${clock.at}`, 3, clock.at + 60_000);
    const locks = (await service.ctx.events.list({ type: 'account.locked', since: clock.at, limit: 10 })).events;
    assert.equal(locks.length, 1, 'recorded once, when the count reaches the cap');
    assert.equal(locks[0]?.userId, null);
  });

  it('filters by type, user and time, and pages newest first without gaps or repeats', async () => {
    const userId = `usr_paging${clock.at}`;
    for (let i = 0; i < 7; i++) {
      clock.at += 1000;
      await service.ctx.events.record({ type: i % 2 ? 'user.enabled' : 'user.disabled', userId, actor: 'cli' });
    }
    const all = (await service.ctx.events.list({ userId, limit: 100 })).events;
    assert.equal(all.length, 7);
    assert.deepEqual(
      all.map((e) => e.at),
      [...all.map((e) => e.at)].sort((x, y) => y - x),
    );
    const paged: AuditEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await service.ctx.events.list({ userId, limit: 3, ...(cursor ? { cursor } : {}) });
      paged.push(...page.events);
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    assert.deepEqual(paged, all);
    assert.equal((await service.ctx.events.list({ userId, type: 'user.enabled', limit: 100 })).events.length, 3);
    assert.deepEqual((await service.ctx.events.list({ userId, since: all[1]?.at as number, limit: 100 })).events, all.slice(0, 2));
  });

  it('keeps events SERVICE_IDP_EVENT_RETENTION_DAYS and the sweeper deletes older ones', async () => {
    const userId = `usr_retention${clock.at}`;
    await service.ctx.events.record({ type: 'user.disabled', userId });
    clock.at += EVENT_RETENTION_DAYS * 24 * 60 * 60 * 1000 - 1000;
    await service.ctx.events.record({ type: 'user.enabled', userId });
    await service.ctx.sweepExpired(clock.at);
    assert.equal((await trail(userId)).length, 2, 'both are inside the retention period');
    clock.at += 2000;
    await service.ctx.sweepExpired(clock.at);
    assert.deepEqual(types(await trail(userId)), ['user.enabled']);
  });
});
