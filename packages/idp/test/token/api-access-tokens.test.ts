/**
 * Access tokens for APIs (issue 37, RFC 8707 and RFC 9068): a sign-in that names a registered
 * API with `resource` gets an access token the API checks by itself against the JWKS (here
 * with jose, as a third-party resource server would), carrying only the permissions both asked
 * for and granted by the user's roles; refresh keeps the binding, may narrow and recomputes the
 * permissions from the roles of the moment. Without `resource`, the userinfo-only token stays.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from 'jose';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../src/defaults.js';
import { BILLING, NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, signIn, userinfoStatus } from '../support/oidc-token-helpers.js';

describe('access tokens for APIs (RFC 8707, RFC 9068)', () => {
  let service: TestService;
  let rp: RelyingParty;
  const clock = sendClock();
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  before(async () => {
    ({ service, rp } = await startWithApis(clock.now));
    jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
  });
  after(() => service.close());

  const verify = (token: string, audience: string) =>
    jwtVerify(token, jwks, { issuer: service.url, audience, typ: 'at+jwt', currentDate: new Date(clock.now()) });

  it('a sign-in naming an API gets an RFC 9068 token a resource server verifies with the JWKS, with only the granted permissions', async () => {
    clock.tick();
    const email = uniqueEmail('api-token');
    const userId = await userWithRoles(service, email, ['reader']);
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email read:notes write:notes',
      extra: { resource: NOTES },
    });
    assert.equal(tokens.scope, 'openid email read:notes', 'write:notes asked for, not granted by the roles (RFC 6749 3.3)');
    assert.equal(decodeProtectedHeader(tokens.access_token ?? '').alg, 'RS256');
    const { payload, protectedHeader } = await verify(tokens.access_token ?? '', NOTES);
    assert.equal(protectedHeader.typ, 'at+jwt');
    assert.equal(payload.sub, userId);
    assert.equal(payload.client_id, rp.clientId);
    assert.equal(payload.scope, 'read:notes');
    assert.equal((payload.exp ?? 0) - (payload.iat ?? 0), ACCESS_TOKEN_TTL_SECONDS);
    assert.match(String(payload.jti), /^[\w-]{16,}$/);
    const id = idTokenClaims(tokens.id_token ?? '');
    for (const name of ['auth_time', 'acr', 'amr']) assert.deepEqual(payload[name], id[name], name);
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 401, 'a token for an API is not the userinfo token');
  });

  it('without resource the access token stays the userinfo token, and permissions in the scope are ignored', async () => {
    clock.tick();
    const email = uniqueEmail('no-resource');
    await userWithRoles(service, email, ['reader']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:notes' });
    assert.equal(tokens.scope, 'openid email');
    assert.equal(decodeProtectedHeader(tokens.access_token ?? '').alg, 'HS256');
    assert.equal(await userinfoStatus(service, tokens.access_token ?? ''), 200);
  });

  it('two APIs named at /authorize: the code`s token is for the first, and each refresh names the one it wants', async () => {
    clock.tick();
    const email = uniqueEmail('two-apis');
    await userWithRoles(service, email, ['reader', 'accountant']);
    const first = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:notes read:invoices',
      extra: { resource: [NOTES, BILLING] },
    });
    assert.equal((await verify(first.tokens.access_token ?? '', NOTES)).payload.scope, 'read:notes');
    const billing = await refresh(service, { refresh_token: first.tokens.refresh_token ?? '', ...credentials(rp), resource: BILLING });
    assert.equal(billing.status, 200, JSON.stringify(billing.body));
    assert.equal((await verify(billing.body.access_token, BILLING)).payload.scope, 'read:invoices');
    assert.equal(billing.body.scope, 'openid email offline_access read:invoices');
    await assert.rejects(verify(billing.body.access_token, NOTES), /aud/, 'a token for Billing is refused by Notes');
    const notes = await refresh(service, { refresh_token: billing.body.refresh_token, ...credentials(rp), resource: NOTES });
    assert.equal((await verify(notes.body.access_token, NOTES)).payload.scope, 'read:notes');
  });

  it('refresh keeps the API, may narrow the permissions, and reads the roles of the moment', async () => {
    clock.tick();
    const email = uniqueEmail('refresh-api');
    const userId = await userWithRoles(service, email, ['reader']);
    await service.ctx.apis.createRole({ name: `writer-${userId}`, permissions: [{ api: NOTES, permission: 'write:notes' }] }, 'test');
    await service.ctx.apis.assignRole(userId, `writer-${userId}`, 'test');
    const { tokens } = await signIn(service, rp, email, {
      scope: 'openid email offline_access read:notes write:notes',
      extra: { resource: NOTES },
    });
    assert.equal(tokens.scope, 'openid email offline_access read:notes write:notes');

    const narrowed = await refresh(service, { refresh_token: tokens.refresh_token ?? '', ...credentials(rp), scope: 'openid read:notes' });
    assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
    assert.equal(narrowed.body.scope, 'openid email offline_access read:notes');
    assert.equal((await verify(narrowed.body.access_token, NOTES)).payload.scope, 'read:notes');

    // The role that granted write:notes is taken away mid-session: the next token lacks it.
    await service.ctx.apis.unassignRole(userId, `writer-${userId}`, 'test');
    const after = await refresh(service, { refresh_token: narrowed.body.refresh_token, ...credentials(rp) });
    assert.equal(after.status, 200, JSON.stringify(after.body));
    assert.equal(after.body.scope, 'openid email offline_access read:notes');
    assert.equal((await verify(after.body.access_token, NOTES)).payload.scope, 'read:notes');
  });

  it('an API that asks for roles gets a roles claim: the user`s roles that grant any of its permissions', async () => {
    clock.tick();
    const email = uniqueEmail('roles-claim');
    await userWithRoles(service, email, ['reader', 'accountant']);
    await service.ctx.apis.updateApi(NOTES, { rolesInToken: true }, 'test');
    try {
      const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:notes', extra: { resource: NOTES } });
      assert.deepEqual((await verify(tokens.access_token ?? '', NOTES)).payload.roles, ['reader'], 'accountant grants nothing on Notes');
    } finally {
      await service.ctx.apis.updateApi(NOTES, { rolesInToken: false }, 'test');
    }
    const { tokens } = await signIn(service, rp, uniqueEmail('no-roles-claim'), {
      scope: 'openid email read:notes',
      extra: { resource: NOTES },
    });
    assert.equal((await verify(tokens.access_token ?? '', NOTES)).payload.roles, undefined, 'not asked for: no roles claim');
  });
});
