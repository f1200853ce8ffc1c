/**
 * Attack: redeeming one authorization code twice (a leaked or intercepted code). Codes are
 * consumed in one conditional UPDATE, so of any number of concurrent exchanges exactly one
 * succeeds; codes are bound to the client that received them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AUTH_CODE_TTL_SECONDS } from '../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from './helpers.js';

describe('authorization code replay', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  async function newCode(): Promise<string> {
    const email = uniqueEmail();
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const d = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken });
    return d.body.code;
  }

  const redeem = (code: string, clientId = service.clientId, secret = service.secretKey) =>
    fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: clientId, client_secret: secret }),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  it('lets exactly one of 20 parallel exchanges of the same code succeed', async () => {
    const code = await newCode();
    const results = await Promise.all(Array.from({ length: 20 }, () => redeem(code)));
    assert.equal(results.filter((r) => r.status === 200).length, 1);
    for (const r of results.filter((r) => r.status !== 200)) assert.deepEqual(r.body.error, 'invalid_grant');
  });

  it('refuses a code presented by another client, and burns it', async () => {
    const other = await service.ctx.clients.create({ name: 'Other', origins: ['http://other.test'] });
    const code = await newCode();
    const stolen = await redeem(code, other.clientId, other.secretKey);
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.error, 'invalid_grant');
    assert.equal((await redeem(code)).status, 400);
  });

  it('refuses a wrong client secret with invalid_client and keeps the code', async () => {
    const code = await newCode();
    const bad = await redeem(code, service.clientId, 'sk_wrong');
    assert.equal(bad.status, 401);
    assert.equal(bad.body.error, 'invalid_client');
    assert.equal((await redeem(code)).status, 200);
  });

  it(`expires codes after ${AUTH_CODE_TTL_SECONDS} s`, async () => {
    const code = await newCode();
    clock += AUTH_CODE_TTL_SECONDS * 1000;
    assert.equal((await redeem(code)).body.error, 'invalid_grant');
    const fresh = await newCode();
    clock += AUTH_CODE_TTL_SECONDS * 1000 - 1000;
    assert.equal((await redeem(fresh)).status, 200);
  });
});
