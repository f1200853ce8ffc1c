/**
 * A forged upstream ID token: signed with a key that is not in the provider's JWKS (a key the
 * attacker holds, under the provider's `kid`). openid-client checks an ID token's signature only
 * with `enableNonRepudiationChecks`, and the service accepts plain-http loopback providers, where
 * TLS cannot stand in for the signature; so the service turns the check on for every connection.
 * The same provider signing with the key it publishes is the control. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { connect, signInWith } from './upstream-helpers.js';

describe('upstream sign-in: the ID token signature', () => {
  let service: TestService;
  let honest: TestUpstream;
  let forging: TestUpstream;
  let honestConnection: string;
  let forgingConnection: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    const callback = `${service.url}${UpstreamPaths.callback}`;
    honest = await startUpstream(callback);
    forging = await startUpstream(callback, { signsWithUnpublishedKey: true });
    honestConnection = (await connect(service, honest)).id;
    forgingConnection = (await connect(service, forging)).id;
  });
  after(async () => {
    await Promise.all([honest.close(), forging.close()]);
    await service.close();
  });

  it('forged ID token: signed with a key not in the provider’s JWKS, it is refused and nothing is made', async () => {
    const email = uniqueEmail('forged-id-token');
    forging.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result } = await signInWith(service, forgingConnection);
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED'], JSON.stringify(result));
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it('an ID token signed with a key the provider publishes is accepted', async () => {
    const email = uniqueEmail('signed-id-token');
    honest.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result } = await signInWith(service, honestConnection);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
  });
});
