/**
 * Taking over an account through an upstream provider. An identity whose provider does not
 * vouch for its address (`email_verified` false or absent) claims a victim's address: it is
 * neither linked to the victim nor given an account. An identity already linked changes its
 * address at the provider to another user's: the link is by subject, so it still signs in as
 * itself, never as the other user. And the connection's start as an open redirect: a return
 * URL outside the application's origins, a script URL, or a connection the application does
 * not show, is a refusal page, never a redirect. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../../support/helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { claimsFor, connect, signInWith, startUrl } from './upstream-helpers.js';

describe('upstream sign-in: account takeover and open redirects', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  let hidden: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    connection = (await connect(service, upstream)).id;
    hidden = (await connect(service, upstream, [])).id; // shown by no application
  });
  after(async () => {
    await upstream.close();
    await service.close();
  });

  it("an unverified address claiming a victim's account is neither linked nor matched, and gets no account", async () => {
    const victim = uniqueEmail('victim');
    await verifiedRegistration(service, victim);
    const owner = await service.ctx.enabledUsers.findByEmail(victim);
    for (const claims of [{ email_verified: false }, {}]) {
      upstream.signInAs({ sub: `attacker-${Math.random()}`, email: victim, ...claims });
      const { result } = await signInWith(service, connection);
      assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    }
    assert.equal((await service.ctx.upstream.list(owner?.id as string)).length, 0);
    // Nor a new address: no account from an address nobody vouched for.
    const stranger = uniqueEmail('unverified');
    upstream.signInAs({ sub: `sub-${stranger}`, email: stranger, email_verified: false });
    const { result } = await signInWith(service, connection);
    assert.equal(result.status, 'ERROR');
    assert.equal(await service.ctx.enabledUsers.findByEmail(stranger), undefined);
  });

  it("an address changed at the provider to another user's: the link is by subject, the identity signs in as itself", async () => {
    const mine = uniqueEmail('mine');
    const theirs = uniqueEmail('theirs');
    await verifiedRegistration(service, theirs);
    upstream.signInAs({ sub: `sub-${mine}`, email: mine, email_verified: true });
    const first = await signInWith(service, connection);
    const me = (await claimsFor(service, first.result.code as string, first.verifier)).sub;
    upstream.signInAs({ sub: `sub-${mine}`, email: theirs, email_verified: true });
    const after = await signInWith(service, connection);
    assert.equal(after.result.status, 'SUCCESS');
    const claims = await claimsFor(service, after.result.code as string, after.verifier);
    assert.equal(claims.sub, me);
    assert.equal(claims.email, mine);
    const other = await service.ctx.enabledUsers.findByEmail(theirs);
    assert.equal((await service.ctx.upstream.list(other?.id as string)).length, 0);
  });

  it("open redirect: a return URL outside the app's origins, a script URL, or a connection the app does not show is refused, never redirected", async () => {
    const cases: [Record<string, string>, string, number][] = [
      [{ return_to: 'https://evil.example/steal' }, connection, 403],
      [{ return_to: 'javascript:alert(1)' }, connection, 400],
      [{ return_to: '//evil.example/x' }, connection, 400],
      [{}, hidden, 404],
      [{}, 'con_unknown', 404],
    ];
    for (const [params, id, status] of cases) {
      const response = await fetch(startUrl(service, id, params), { redirect: 'manual' });
      assert.equal(response.status, status, `${id} ${JSON.stringify(params)}`);
      assert.equal(response.headers.get('location'), null);
    }
  });

  it('the hosted pages: a pending request of another browser (no binding cookie) is refused', async () => {
    const response = await fetch(startUrl(service, connection, { request: 'not-this-browsers-request' }), { redirect: 'manual' });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
  });
});
