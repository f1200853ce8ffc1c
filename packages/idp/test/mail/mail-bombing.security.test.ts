/**
 * Attack: using the service to flood an inbox, or to send mail at scale. OTP sends are
 * limited per recipient and per client IP, in counters shared through the database. The IP
 * is the socket's unless a trusted proxy says otherwise, so a forged X-Forwarded-For does
 * not reset the per-IP budget.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SEND_PER_IP, SEND_SPACING_PER_PURPOSE } from '../../src/defaults.js';
import { APP_ORIGIN, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

const perIp = SEND_PER_IP[0].max;
const perRecipientBurst = SEND_SPACING_PER_PURPOSE[0];

async function send(service: TestService, email: string, forwardedFor?: string) {
  const body = { userid: email, cryptoVersion: 'v1' };
  const answer = await service.post('/v1/authenticate', body, APP_ORIGIN, forwardedFor ? { 'x-forwarded-for': forwardedFor } : {});
  return { ...answer, retryAfter: answer.headers.get('retry-after') };
}

describe('mail bombing', () => {
  describe('with a longer resend spacing configured (SERVICE_IDP_SEND_SPACING_SECONDS)', () => {
    const clock = { at: Date.now(), now: () => clock.at };
    let service: TestService;
    before(async () => {
      service = await startTestService({ env: { SERVICE_IDP_SEND_SPACING_SECONDS: '120' }, now: clock.now });
    });
    after(() => service.close());

    it('refuses a resend until the configured spacing has passed, not the default', async () => {
      const email = uniqueEmail();
      assert.equal((await send(service, email)).status, 200);
      clock.at += (perRecipientBurst.windowSeconds + 1) * 1000;
      const again = await send(service, email);
      assert.equal(again.status, 429);
      assert.equal(again.body.code, 'ERR_RATE_LIMITED');
      assert.ok(
        Number(again.retryAfter) > 0 && Number(again.retryAfter) <= 120 - perRecipientBurst.windowSeconds,
        `retry-after ${again.retryAfter}`,
      );
      clock.at += 120 * 1000;
      assert.equal((await send(service, email)).status, 200);
    });
  });

  describe('without a trusted proxy', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService();
    });
    after(() => service.close());

    it(`allows ${perRecipientBurst.max} send per ${perRecipientBurst.windowSeconds} s to one address, and says when to retry`, async () => {
      const email = uniqueEmail();
      assert.equal((await send(service, email)).status, 200);
      const again = await send(service, email);
      assert.equal(again.status, 429);
      assert.equal(again.body.code, 'ERR_RATE_LIMITED');
      const retryAfter = Number(again.retryAfter);
      assert.ok(retryAfter > 0 && retryAfter <= perRecipientBurst.windowSeconds, `retry-after ${retryAfter}`);
      assert.equal(again.body.retryAfter, retryAfter);
    });

    it('maps the limit to RATE_LIMITED in the browser library', async () => {
      const email = uniqueEmail();
      const device = await service.newDevice();
      assert.equal((await device.authenticate(email)).status, 'OTP_NEEDED');
      assert.equal((await device.authenticate(email)).status, 'RATE_LIMITED');
    });
  });

  describe('one IP, forged X-Forwarded-For', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService();
    });
    after(() => service.close());

    it(`stops one IP after ${perIp} sends per hour, whatever X-Forwarded-For it forges`, async () => {
      for (let i = 0; i < perIp; i++) assert.equal((await send(service, uniqueEmail(), `203.0.113.${i}`)).status, 200);
      const refused = await send(service, uniqueEmail(), '198.51.100.7');
      assert.equal(refused.status, 429);
      assert.equal(refused.body.code, 'ERR_RATE_LIMITED');
    });
  });

  describe('behind a trusted proxy', () => {
    let service: TestService;
    before(async () => {
      service = await startTestService({ env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1' } });
    });
    after(() => service.close());

    it('counts per forwarded client address', async () => {
      for (let i = 0; i < perIp; i++) assert.equal((await send(service, uniqueEmail(), '203.0.113.10')).status, 200);
      assert.equal((await send(service, uniqueEmail(), '203.0.113.10')).status, 429);
      assert.equal((await send(service, uniqueEmail(), '203.0.113.11')).status, 200, 'another client behind the same proxy is unaffected');
    });
  });
});
