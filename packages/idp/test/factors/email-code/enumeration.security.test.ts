/**
 * Attack: learning whether an address has an account. Known and unknown addresses take the
 * same path (an OTP is emailed either way), so HTTP status, body fields and message are equal.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';

describe('account enumeration', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  const shape = (r: { status: number; body: Record<string, unknown> }) => ({
    http: r.status,
    fields: Object.keys(r.body).sort(),
    status: r.body.status,
    message: r.body.message,
  });

  it('answers a registered and an unknown address identically', async () => {
    const known = uniqueEmail('known');
    const a = await service.post('/v1/authenticate', { userid: known, cryptoVersion: 'v1' });
    await service.post('/v1/email-otp/verify', { userid: known, deviceToken: a.body.deviceToken, otp: a.body.code });
    assert.equal((await service.post('/v1/devices', { userid: known, deviceToken: a.body.deviceToken })).status, 200);
    assert.ok(await service.ctx.enabledUsers.findByEmail(known), 'the known address has an account');

    clock += 60_000; // out of the per-recipient send window
    const knownAgain = await service.post('/v1/authenticate', { userid: known, cryptoVersion: 'v1' });
    const unknown = await service.post('/v1/authenticate', { userid: uniqueEmail('unknown'), cryptoVersion: 'v1' });
    assert.equal(knownAgain.body.status, 'OTP_NEEDED');
    assert.deepEqual(shape(knownAgain), shape(unknown));
  });

  it('throttles known and unknown addresses the same way', async () => {
    const known = uniqueEmail('known');
    const unknown = uniqueEmail('unknown');
    await service.post('/v1/authenticate', { userid: known, cryptoVersion: 'v1' });
    await service.post('/v1/authenticate', { userid: unknown, cryptoVersion: 'v1' });
    const k = await service.post('/v1/authenticate', { userid: known, cryptoVersion: 'v1' });
    const u = await service.post('/v1/authenticate', { userid: unknown, cryptoVersion: 'v1' });
    assert.equal(k.status, 429);
    assert.deepEqual({ ...k.body, retryAfter: 0 }, { ...u.body, retryAfter: 0 });
  });
});
