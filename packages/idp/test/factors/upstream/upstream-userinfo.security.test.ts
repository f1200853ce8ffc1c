/**
 * A generic OpenID Connect provider that gives the address only at its UserInfo endpoint (OIDC
 * Core 5.4: with the code flow, the claims a scope asks for come from UserInfo; node-oidc-provider's
 * default, run here with its default claims behaviour, and Zitadel's). The service asks UserInfo
 * when the ID token lacks `email` or `email_verified`, and takes its answer only for the ID token's
 * own subject (OIDC Core 5.3.2): a UserInfo answer about someone else (a substituted or mixed-up
 * response) refuses the sign-in. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail, verifiedRegistration } from '../../support/helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { claimsFor, connect, signInWith } from './upstream-helpers.js';

describe('upstream sign-in: the address from the UserInfo endpoint', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let substituting: TestUpstream;
  let connection: string;
  let substitutingConnection: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    const callback = `${service.url}${UpstreamPaths.callback}`;
    upstream = await startUpstream(callback, { claimsInUserinfoOnly: true });
    substituting = await startUpstream(callback, { claimsInUserinfoOnly: true, userinfoSubject: 'someone-else' });
    connection = (await connect(service, upstream)).id;
    substitutingConnection = (await connect(service, substituting)).id;
  });
  after(async () => {
    await Promise.all([upstream.close(), substituting.close()]);
    await service.close();
  });

  it('an address only in UserInfo (oidc-provider defaults) makes the account, linked by the ID token’s subject', async () => {
    const email = uniqueEmail('userinfo-new');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true, name: 'Userinfo Person' });
    const { result, verifier } = await signInWith(service, connection);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    const claims = await claimsFor(service, result.code as string, verifier);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const [identity] = await service.ctx.upstream.list(user?.id as string);
    assert.equal(identity?.subject, `sub-${email}`);
    assert.equal(identity?.name, 'Userinfo Person');
  });

  it('an address only in UserInfo that an account has goes to the emailed-code link step, as from an ID token', async () => {
    const email = uniqueEmail('userinfo-link');
    await verifiedRegistration(service, email);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result } = await signInWith(service, connection);
    assert.equal(result.status, 'LINK_NEEDED', JSON.stringify(result));
  });

  it('an address UserInfo does not vouch for neither makes an account nor matches one', async () => {
    const email = uniqueEmail('userinfo-unverified');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: false });
    const { result } = await signInWith(service, connection);
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it('userinfo substitution: an answer about another subject than the ID token’s refuses the sign-in; nothing is made', async () => {
    const email = uniqueEmail('userinfo-swap');
    substituting.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result } = await signInWith(service, substitutingConnection);
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED'], JSON.stringify(result));
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });
});
