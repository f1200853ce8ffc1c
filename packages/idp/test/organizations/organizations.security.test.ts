/**
 * Organizations under attack (docs/security.md): IDOR across organizations on every admin route
 * (another organization's member or role in the path), a member escalating their own role (only
 * the admin API changes roles: a member's tokens reach none of it), a non-member asking /authorize
 * for an organization, another organization named at a refresh, and a removed member's refresh
 * token asking for the organization. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { NOTES } from '../support/api-helpers.js';
import { type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser, paramsOf } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, signIn, signInForCode } from '../support/oidc-token-helpers.js';
import { memberOf, startWithOrganizations } from './organization-helpers.js';

describe('organizations: IDOR, escalation and tokens for an organization one does not belong to', () => {
  let service: TestService;
  let rp: RelyingParty;
  let api: ReturnType<typeof adminApi>;
  before(async () => {
    ({ service, rp } = await startWithOrganizations());
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
  });
  after(() => service.close());

  it('IDOR across organizations: another organization’s member in the path is not found, and nothing changes', async () => {
    const { userId, orgId: acme } = await memberOf(service, uniqueEmail('acme'), 'Acme', ['viewer']);
    const globex = (await service.ctx.organizations.create({ name: 'Globex' }, 'test')).id;
    assert.equal((await api('PUT', `/organizations/${globex}/members/${userId}/roles`, { roles: ['editor'] })).status, 404);
    assert.equal((await api('DELETE', `/organizations/${globex}/members/${userId}`)).status, 404);
    assert.deepEqual((await service.ctx.organizationAccess.membership(userId, acme))?.roles, ['viewer'], 'Acme membership unchanged');
    assert.equal(await service.ctx.organizationAccess.membership(userId, globex), undefined, 'no Globex membership made');
    assert.deepEqual((await api('GET', `/organizations/${globex}/members`)).body.members, []);
    // Unknown organizations are 404s too, never a 500 or another organization's data.
    for (const [method, path] of [
      ['GET', '/organizations/org_nope'],
      ['GET', '/organizations/org_nope/members'],
      ['PATCH', '/organizations/org_nope'],
      ['DELETE', '/organizations/org_nope'],
    ] as const)
      assert.equal((await api(method, path, method === 'PATCH' ? { name: 'x' } : undefined)).status, 404, `${method} ${path}`);
  });

  it('a member escalating their own role: their tokens reach no admin route, and a role change needs the admin key', async () => {
    const email = uniqueEmail('climber');
    const { userId, orgId } = await memberOf(service, email, 'Acme', ['viewer']);
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email read:notes',
      extra: { organization: orgId, resource: NOTES },
    });
    for (const token of [tokens.access_token, tokens.id_token]) {
      const answer = await fetch(`${service.url}/admin/v1/organizations/${orgId}/members/${userId}/roles`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ roles: ['editor'] }),
      });
      assert.equal(answer.status, 401);
    }
    assert.deepEqual((await service.ctx.organizationAccess.membership(userId, orgId))?.roles, ['viewer']);
  });

  it('a non-member asking /authorize for an organization gets access_denied and no code, the same as for one that does not exist', async () => {
    const outsider = uniqueEmail('outsider');
    const { orgId } = await memberOf(service, uniqueEmail('insider'), 'Acme', ['editor']);
    await service.ctx.enabledUsers.findOrCreate(outsider, Date.now());
    // The first attempt signs in (the hosted page, a mailed code); the second rides on the session the first opened.
    const browser = hostedBrowser(service);
    for (const organization of [orgId, 'org_doesnotexist']) {
      const refusal = await signInForCode(service, rp, outsider, { extra: { organization }, browser }).then(
        () => assert.fail('a code was issued'),
        (error: Error) => error.message,
      );
      const params = paramsOf(refusal.replace(/^no code: /, ''));
      assert.deepEqual([params.error, params.state, params.code], ['access_denied', 'st', undefined]);
      assert.match(params.error_description ?? '', /not a member/);
    }
  });

  it('another organization named at a refresh, and a removed member’s refresh token asking for the organization, are refused', async () => {
    const email = uniqueEmail('leaver');
    const { userId, orgId } = await memberOf(service, email, 'Acme', ['editor']);
    const foreign = await memberOf(service, uniqueEmail('foreign'), 'Globex', ['editor']);
    const { tokens, browser } = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:notes',
      extra: { organization: orgId, resource: NOTES },
    });
    const elsewhere = await refresh(service, {
      refresh_token: tokens.refresh_token as string,
      organization: foreign.orgId,
      ...credentials(rp),
    });
    assert.deepEqual([elsewhere.status, elsewhere.body.error], [400, 'invalid_grant']);

    const again = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:notes',
      extra: { organization: orgId, resource: NOTES },
      browser, // the session the first sign-in opened
    });
    await service.ctx.organizations.removeMember(orgId, userId, 'test');
    const removed = await refresh(service, { refresh_token: again.tokens.refresh_token as string, ...credentials(rp) });
    assert.deepEqual([removed.status, removed.body.error], [400, 'invalid_grant']);
    assert.equal(removed.body.access_token, undefined);
  });

  it('a third-party application asking for an organization is refused: its consent page would not say so', async () => {
    const email = uniqueEmail('third');
    const { orgId } = await memberOf(service, email, 'Acme', ['editor']);
    const third = await service.ctx.clients.create({
      name: 'Third',
      origins: [],
      redirectUris: ['https://third.example/cb'],
      thirdParty: true,
    });
    const answer = await fetch(
      `${service.url}/authorize?${new URLSearchParams({
        response_type: 'code',
        client_id: third.clientId,
        redirect_uri: 'https://third.example/cb',
        scope: 'openid email',
        state: 'st',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        organization: orgId,
      })}`,
      { redirect: 'manual' },
    );
    const location = new URL(answer.headers.get('location') ?? '', service.url);
    assert.deepEqual(
      [location.origin, location.searchParams.get('error'), location.searchParams.get('code')],
      ['https://third.example', 'invalid_request', null],
    );
  });
});
