/**
 * "Continue with …" a real OpenID Connect provider (node-oidc-provider on loopback) through the
 * service's start and callback: a new user, a returning user, linking to an existing account
 * only after its emailed code, an application that requires MFA, the events and webhooks'
 * types, and the operator's view (admin API). Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { ACR } from '../../../src/oidc/acr.js';
import { registerWithMfa, startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../../support/helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { claimsFor, connect, signInWith } from './upstream-helpers.js';

describe('sign-in with an upstream OpenID Connect provider', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    connection = (await connect(service, upstream)).id;
  });
  after(async () => {
    await upstream.close();
    await service.close();
  });

  it('a new identity with a verified address makes the account: amr fed, its acr, the identity linked by subject', async () => {
    const email = uniqueEmail('fed-new');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result, verifier } = await signInWith(service, connection);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    assert.equal(result.state, 'page-state-123');
    const claims = await claimsFor(service, result.code as string, verifier);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);
    assert.equal(claims.acr, ACR.otp);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    assert.equal(claims.sub, user?.id);
    const [identity] = await service.ctx.upstream.list(user?.id as string);
    assert.equal(identity?.subject, `sub-${email}`);
    assert.equal(identity?.connectionId, connection);
  });

  it('a returning identity signs in to the same account, without a new one', async () => {
    const email = uniqueEmail('fed-back');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const first = await signInWith(service, connection);
    const second = await signInWith(service, connection);
    assert.equal(second.result.status, 'SUCCESS');
    const [a, b] = await Promise.all([
      claimsFor(service, first.result.code as string, first.verifier),
      claimsFor(service, second.result.code as string, second.verifier),
    ]);
    assert.equal(a.sub, b.sub);
  });

  it('an address an account already has links only after that account proves itself with its emailed code', async () => {
    const email = uniqueEmail('fed-link');
    await verifiedRegistration(service, email);
    const owner = await service.ctx.enabledUsers.findByEmail(email);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result, verifier } = await signInWith(service, connection);
    assert.equal(result.status, 'LINK_NEEDED', JSON.stringify(result));
    assert.equal(result.userid, email);
    assert.equal((await service.ctx.upstream.list(owner?.id as string)).length, 0, 'not linked on the provider’s word');
    const wrong = await service.post(UpstreamPaths.confirmLink, { link: result.link, otp: '000000' });
    assert.equal(wrong.body.code, 'ERR_OTP_INVALID');
    const otp = await service.latestOtp(email);
    const confirmed = await service.post(UpstreamPaths.confirmLink, { link: result.link, otp });
    assert.equal(confirmed.status, 200, JSON.stringify(confirmed.body));
    assert.equal(confirmed.body.status, 'SUCCESS');
    const claims = await claimsFor(service, confirmed.body.code, verifier);
    assert.equal(claims.sub, owner?.id);
    assert.deepEqual(claims.amr, ['fed', 'otp']);
    // The code was spent: a second confirmation is refused.
    const again = await service.post(UpstreamPaths.confirmLink, { link: result.link, otp });
    assert.equal(again.body.code, 'ERR_SESSION_INVALID');
    // Linked now: the next sign-in goes straight through.
    const next = await signInWith(service, connection);
    assert.equal(next.result.status, 'SUCCESS');
    const events = await service.ctx.events.list({ userId: owner?.id as string, type: 'identity.linked', limit: 10 });
    assert.equal(events.events.length, 1);
  });

  it("an application that requires MFA: the user's method follows the provider, and its code carries mfa", async () => {
    const email = uniqueEmail('fed-mfa');
    await registerWithMfa(service, email, 'email');
    const owner = await service.ctx.enabledUsers.findByEmail(email);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const link = await signInWith(service, connection);
    assert.equal(link.result.status, 'LINK_NEEDED');
    const confirmed = await service.post(UpstreamPaths.confirmLink, { link: link.result.link, otp: await service.latestOtp(email) });
    assert.equal(confirmed.body.status, 'MFA_REQUIRED', JSON.stringify(confirmed.body));
    const { result, verifier } = await signInWith(service, connection);
    assert.equal(result.status, 'MFA_REQUIRED');
    assert.equal(result.method, 'email');
    assert.equal(result.userid, email);
    const initiated = await service.post('/v1/mfa/initiate', { userid: email, sessionId: result.sessionId });
    assert.equal(initiated.status, 200, JSON.stringify(initiated.body));
    const verified = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: result.sessionId,
      otp: await service.latestOtp(email),
    });
    assert.equal(verified.body.status, 'SUCCESS', JSON.stringify(verified.body));
    const claims = await claimsFor(service, verified.body.code, verifier);
    assert.equal(claims.sub, owner?.id);
    assert.ok(claims.amr.includes('fed') && claims.amr.includes('mfa'), claims.amr.join(' '));
  });

  it('the operator lists connections and identities and unlinks one (admin API); identity.unlinked is recorded', async () => {
    const email = uniqueEmail('fed-admin');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    await signInWith(service, connection);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const { key } = await service.ctx.adminKeys.create('test', 'test');
    const admin = (path: string, init: RequestInit = {}) =>
      fetch(`${service.url}/admin/v1${path}`, {
        ...init,
        headers: { authorization: `Bearer ${key}`, ...(init.body ? { 'content-type': 'application/json' } : {}) },
      });
    const list = await (await admin('/connections')).json();
    const listed = list.connections.find((c: { id: string }) => c.id === connection);
    assert.equal(listed.hasSecret, true);
    assert.equal(JSON.stringify(list).includes(upstream.clientSecret), false, 'never the secret');
    const identities = await (await admin(`/users/${user?.id}/identities`)).json();
    assert.equal(identities.identities[0].subject, `sub-${email}`);
    // The export (users export, the account center's) names the linked identity and never the provider's tokens.
    const exported = await (await admin(`/users/${user?.id}/export`)).json();
    assert.deepEqual(
      exported.identities.map((i: { connectionId: string; subject: string }) => [i.connectionId, i.subject]),
      [[connection, `sub-${email}`]],
    );
    assert.doesNotMatch(JSON.stringify(exported.identities), /token/i);
    const unlinked = await admin(`/users/${user?.id}/identities/unlink`, {
      method: 'POST',
      body: JSON.stringify({ connectionId: connection, subject: `sub-${email}` }),
    });
    assert.equal(unlinked.status, 204);
    assert.equal((await service.ctx.upstream.list(user?.id as string)).length, 0);
    const events = await service.ctx.events.list({ userId: user?.id as string, type: 'identity.unlinked', limit: 10 });
    assert.equal(events.events.length, 1);
    const again = await admin(`/users/${user?.id}/identities/unlink`, {
      method: 'POST',
      body: JSON.stringify({ connectionId: connection, subject: `sub-${email}` }),
    });
    assert.equal(again.status, 404);
  });

  it('deleting a user deletes its linked identities: the same identity then makes a new account', async () => {
    const email = uniqueEmail('fed-deleted');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    await signInWith(service, connection);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    await service.ctx.users.delete(user?.id as string, 'test');
    assert.equal((await service.ctx.upstream.list(user?.id as string)).length, 0);
    const { result } = await signInWith(service, connection);
    assert.equal(result.status, 'SUCCESS');
    const again = await service.ctx.enabledUsers.findByEmail(email);
    assert.notEqual(again?.id, user?.id);
  });

  it("the provider's tokens are not kept unless the connection says so, and then only sealed", async () => {
    const rows = async (userId: string) =>
      service.ctx.db.selectFrom('linked_identities').select('tokens_sealed').where('user_id', '=', userId).execute();
    const plain = uniqueEmail('fed-tokens-off');
    upstream.signInAs({ sub: `sub-${plain}`, email: plain, email_verified: true });
    await signInWith(service, connection);
    const off = await service.ctx.enabledUsers.findByEmail(plain);
    assert.deepEqual(await rows(off?.id as string), [{ tokens_sealed: null }]);

    const keeping = (await connect(service, upstream)).id;
    await service.ctx.connections.update(keeping, { keepTokens: true }, 'test');
    const kept = uniqueEmail('fed-tokens-on');
    upstream.signInAs({ sub: `sub-${kept}`, email: kept, email_verified: true });
    const { result } = await signInWith(service, keeping);
    assert.equal(result.status, 'SUCCESS');
    const on = await service.ctx.enabledUsers.findByEmail(kept);
    const [row] = await rows(on?.id as string);
    assert.ok(row?.tokens_sealed, 'kept');
    assert.doesNotMatch(row?.tokens_sealed as string, /access_token|eyJ/, 'sealed, not plain JSON or a JWT');
  });
});
