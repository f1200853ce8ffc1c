/**
 * An operator resets a user's MFA through the admin API (the console's call): a viewer forging
 * an admin's call, a caller without an admin key, and an unknown user are refused (403, 401,
 * 404) and change nothing; an admin's reset removes the factor and names the operator.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMfaStore } from '../../src/sign-in/mfa-store.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { startTestService, type TestService } from '../support/helpers.js';

describe('console: reset a user MFA', () => {
  let service: TestService;
  let userId: string;
  const email = 'lost.phone@example.com';
  before(async () => {
    service = await startTestService({ testMode: true });
    userId = (await service.ctx.enabledUsers.findOrCreate(email, Date.now())).id;
    const store = createMfaStore(service.ctx.db);
    await store.setMethod(userId, { method: 'email', phone: null, totpSecretSealed: null, lastTotpStep: null, version: 'v1' }, Date.now());
  });
  after(async () => service.close());

  const method = async () => (await service.ctx.mfa.methodOf(userId))?.method;
  const resets = async () => (await service.ctx.events.list({ type: 'mfa.reset', limit: 10 })).events;

  it('a viewer, no key, a bad key or an unknown user: refused and nothing changed', async () => {
    const viewer = await operatorSession(service, 'viewer');
    assert.equal((await consoleCall(service, viewer, 'POST', `/users/${userId}/mfa/reset`)).status, 403);
    for (const headers of [{}, { authorization: 'Bearer adm_nope' }, { authorization: `Bearer ${service.secretKey}` }] as Record<
      string,
      string
    >[]) {
      const answer = await fetch(`${service.url}/admin/v1/users/${userId}/mfa/reset`, { method: 'POST', headers });
      assert.equal(answer.status, 401);
    }
    const admin = await operatorSession(service, 'admin');
    assert.equal((await consoleCall(service, admin, 'POST', '/users/usr_nobody/mfa/reset')).status, 404);
    assert.equal(await method(), 'email');
    assert.equal((await resets()).length, 0);
  });

  it("an admin's reset removes the factor, names the operator, and a second reset is a 400", async () => {
    const admin = await operatorSession(service, 'admin');
    const done = await consoleCall(service, admin, 'POST', `/users/${userId}/mfa/reset`);
    assert.equal(done.status, 200);
    assert.deepEqual(done.body, { method: 'email' });
    assert.equal(await method(), undefined);
    const events = await resets();
    assert.equal(events.length, 1);
    assert.equal(events[0]?.actor, `operator:${admin.email}`);
    assert.equal((await consoleCall(service, admin, 'POST', `/users/${userId}/mfa/reset`)).status, 400);
  });
});
