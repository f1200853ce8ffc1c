/**
 * Attack: redeeming one authorization code twice (a leaked or intercepted code). Codes are
 * consumed in one conditional UPDATE, so of any number of concurrent exchanges exactly one
 * succeeds; codes are bound to the client that received them. A code presented again after
 * its redemption is a sign that it leaked: the access token of the first redemption is revoked
 * (RFC 6749 4.1.2), so whoever redeemed it first loses userinfo access too.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACCESS_TOKEN_TTL_SECONDS, AUTH_CODE_TTL_SECONDS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

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

  const userinfo = (accessToken: string) =>
    fetch(`${service.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.status);

  it('revokes the access token of the first redemption when the code is presented again', async () => {
    const code = await newCode();
    const first = await redeem(code);
    assert.equal(first.status, 200);
    assert.equal(await userinfo(first.body.access_token), 200);
    const untouched = await redeem(await newCode());
    clock += (AUTH_CODE_TTL_SECONDS + 5) * 1000; // a late replay, after the code itself expired and a sweep ran
    await service.ctx.sweepExpired(clock);
    const replay = await redeem(code);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.error, 'invalid_grant');
    assert.equal(await userinfo(first.body.access_token), 401, 'the first redemption`s access token is revoked');
    assert.equal(await userinfo(untouched.body.access_token), 200, 'other codes` tokens are not');
    // The revocation lasts as long as the token could have: swept only after it expired.
    clock += ACCESS_TOKEN_TTL_SECONDS * 1000;
    await service.ctx.sweepExpired(clock);
    const left = await service.ctx.db.selectFrom('revoked_access_tokens').select('jti').execute();
    assert.equal(left.length, 0);
  });

  it('revokes it when parallel replays race the first redemption, too', async () => {
    const code = await newCode();
    const results = await Promise.all(Array.from({ length: 10 }, () => redeem(code)));
    const winner = results.find((r) => r.status === 200);
    assert.ok(winner);
    assert.equal(await userinfo(winner.body.access_token), 401);
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
