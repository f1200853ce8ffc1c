/**
 * Each preset's documented differences, against small local servers that answer with the
 * providers' documented shapes (test/support/upstream-shapes.ts; the providers' real hosts are
 * routed to them): Google's plain OpenID Connect; Microsoft's multi-tenant issuer (the metadata's
 * `{tenantid}` template, each ID token's tenant `iss`) and its unverified `email` (only
 * `xms_edov` vouches for it); Apple's form_post answer, its client secret as an ES256 JWT, the
 * string "true" of its email_verified and the name sent on the first sign-in only; GitHub's
 * OAuth 2.0 without an ID token, the address from /user/emails only when primary and verified.
 * Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { jwtVerify } from 'jose';
import { type ConnectionPreset, UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import { fragmentOf, RedirectBrowser } from '../../support/upstream.js';
import { type ShapedProvider, startShapedProvider } from '../../support/upstream-shapes.js';
import { atApp, claimsFor, startUrl } from './upstream-helpers.js';

const TENANT = '9188040d-6c67-4c5b-b112-36a304b66dad';

describe('upstream presets against their documented shapes', () => {
  let service: TestService;
  const shaped: Partial<Record<'google' | 'microsoft' | 'apple' | 'github', ShapedProvider>> = {};
  const connections: Partial<Record<ConnectionPreset, string>> = {};
  const apple = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const hostOf: Record<string, keyof typeof shaped> = {
    'accounts.google.com': 'google',
    'login.microsoftonline.com': 'microsoft',
    'appleid.apple.com': 'apple',
    'github.com': 'github',
    'api.github.com': 'github',
  };

  before(async () => {
    shaped.google = await startShapedProvider({ issuer: 'https://accounts.google.com', clientId: 'google-client' });
    shaped.microsoft = await startShapedProvider({
      issuer: 'https://login.microsoftonline.com/common/v2.0',
      metadataIssuer: 'https://login.microsoftonline.com/{tenantid}/v2.0',
      clientId: 'ms-client',
    });
    shaped.apple = await startShapedProvider({ issuer: 'https://appleid.apple.com', clientId: 'com.example.web' });
    shaped.github = await startShapedProvider({ issuer: 'https://github.com', clientId: 'gh-client' });
    service = await startTestService({
      testMode: true,
      upstreamFetch: (input, init) => {
        const url = new URL(input instanceof Request ? input.url : String(input));
        const provider = shaped[hostOf[url.hostname] ?? 'google'];
        return (provider as ShapedProvider).fetch(input, init);
      },
    });
    const create = async (preset: ConnectionPreset, input: Record<string, string>) =>
      (connections[preset] = (await service.ctx.connections.create({ preset, clients: [service.clientId], ...input } as never, 'test')).id);
    await create('google', { clientId: 'google-client', clientSecret: 'google-secret' });
    await create('microsoft', { clientId: 'ms-client', clientSecret: 'ms-secret' });
    await create('apple', {
      clientId: 'com.example.web',
      clientSecret: apple.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
      appleTeamId: 'TEAM123456',
      appleKeyId: 'KEY1234567',
    });
    await create('github', { clientId: 'gh-client', clientSecret: 'gh-secret' });
  });
  after(async () => {
    await Promise.all(Object.values(shaped).map((s) => s.close()));
    await service.close();
  });

  /** Starts a sign-in and stops at the provider: its authorization URL, the browser and the page's verifier. */
  async function toProvider(preset: ConnectionPreset, host: string) {
    const browser = new RedirectBrowser();
    const verifier = 'v'.repeat(43);
    const { createHash } = await import('node:crypto');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const at = await browser.go(
      startUrl(service, connections[preset] as string, { code_challenge: challenge }),
      (url) => url.hostname === host,
    );
    return { browser, url: at.url, verifier };
  }
  const answer = (browser: RedirectBrowser, params: Record<string, string>, post = false) => {
    const callback = new URL(`${service.url}${UpstreamPaths.callback}`);
    if (post) return browser.go(callback.href, atApp, { method: 'POST', body: new URLSearchParams(params) });
    for (const [k, v] of Object.entries(params)) callback.searchParams.set(k, v);
    return browser.go(callback.href, atApp);
  };

  it('Google: discovery at accounts.google.com, code + PKCE + nonce, email_verified true', async () => {
    const email = uniqueEmail('google');
    const { browser, url, verifier } = await toProvider('google', 'accounts.google.com');
    assert.equal(url.searchParams.get('code_challenge_method'), 'S256');
    (shaped.google as ShapedProvider).next = { sub: 'g-1', email, email_verified: true, nonce: url.searchParams.get('nonce') };
    const result = fragmentOf((await answer(browser, { code: 'c', state: url.searchParams.get('state') as string })).url);
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    assert.equal((await claimsFor(service, result.code as string, verifier)).email, email);
  });

  it("Microsoft: the tenant's issuer is accepted for its own tid only, and its email counts only with xms_edov", async () => {
    const ms = shaped.microsoft as ShapedProvider;
    const run = async (claims: Record<string, unknown>) => {
      const { browser, url } = await toProvider('microsoft', 'login.microsoftonline.com');
      ms.next = { nonce: url.searchParams.get('nonce'), ...claims };
      return fragmentOf((await answer(browser, { code: 'c', state: url.searchParams.get('state') as string })).url);
    };
    const email = uniqueEmail('entra');
    const issuer = `https://login.microsoftonline.com/${TENANT}/v2.0`;
    const unverified = await run({ iss: issuer, tid: TENANT, sub: 'ms-1', email });
    assert.deepEqual([unverified.status, unverified.code], ['ERROR', 'ERR_UPSTREAM_REFUSED'], 'email without xms_edov');
    const otherTenant = await run({
      iss: 'https://login.microsoftonline.com/00000000-0000-0000-0000-000000000000/v2.0',
      tid: TENANT,
      sub: 'ms-1',
      email,
      xms_edov: true,
    });
    assert.equal(otherTenant.status, 'ERROR', "an iss that is not the token's own tenant");
    const ok = await run({ iss: issuer, tid: TENANT, sub: 'ms-1', email, xms_edov: true });
    assert.equal(ok.status, 'SUCCESS', JSON.stringify(ok));
  });

  it('Apple: form_post, an ES256 client secret signed by the operator\'s key, email_verified "true", the name on the first sign-in', async () => {
    const email = uniqueEmail('apple');
    const { browser, url } = await toProvider('apple', 'appleid.apple.com');
    assert.equal(url.searchParams.get('response_mode'), 'form_post');
    (shaped.apple as ShapedProvider).next = { sub: 'a-1', email, email_verified: 'true', nonce: url.searchParams.get('nonce') };
    const user = JSON.stringify({ name: { firstName: 'Ada', lastName: 'Lovelace' }, email });
    const end = await answer(browser, { code: 'c', state: url.searchParams.get('state') as string, user }, true);
    assert.equal(fragmentOf(end.url).status, 'SUCCESS', JSON.stringify(fragmentOf(end.url)));
    const secret = (shaped.apple as ShapedProvider).tokenRequests.at(-1)?.params.get('client_secret') as string;
    const { payload, protectedHeader } = await jwtVerify(secret, apple.publicKey, {
      audience: 'https://appleid.apple.com',
      issuer: 'TEAM123456',
    });
    assert.equal(protectedHeader.alg, 'ES256');
    assert.equal(protectedHeader.kid, 'KEY1234567');
    assert.equal(payload.sub, 'com.example.web');

    // The name comes once: kept with the identity, and a later sign-in without it keeps it.
    const userId = (await service.ctx.enabledUsers.findByEmail(email))?.id as string;
    assert.equal((await service.ctx.upstream.list(userId))[0]?.name, 'Ada Lovelace');
    const again = await toProvider('apple', 'appleid.apple.com');
    (shaped.apple as ShapedProvider).next = { sub: 'a-1', email, email_verified: 'true', nonce: again.url.searchParams.get('nonce') };
    const back = await answer(again.browser, { code: 'c', state: again.url.searchParams.get('state') as string }, true);
    assert.equal(fragmentOf(back.url).status, 'SUCCESS', JSON.stringify(fragmentOf(back.url)));
    const [kept] = await service.ctx.upstream.list(userId);
    assert.equal(kept?.name, 'Ada Lovelace', 'the first sign-in`s name stays');
    assert.ok((kept?.lastUsedAt ?? 0) >= (kept?.linkedAt ?? 0));
  });

  it('GitHub: OAuth 2.0 without an ID token; the subject is the user id, the address the primary verified one', async () => {
    const gh = shaped.github as ShapedProvider;
    const run = async (emails: Record<string, unknown>[]) => {
      const { browser, url } = await toProvider('github', 'github.com');
      assert.equal(url.pathname, '/login/oauth/authorize');
      assert.equal(url.searchParams.get('nonce'), null);
      gh.github = { user: { id: 4242, login: 'octo', name: 'Octo Cat' }, emails };
      return fragmentOf((await answer(browser, { code: 'c', state: url.searchParams.get('state') as string })).url);
    };
    const email = uniqueEmail('github');
    const unverified = await run([
      { email, primary: true, verified: false },
      { email: uniqueEmail('other'), primary: false, verified: true },
    ]);
    assert.equal(unverified.status, 'ERROR', 'a primary address GitHub has not verified');
    const ok = await run([{ email, primary: true, verified: true }]);
    assert.equal(ok.status, 'SUCCESS', JSON.stringify(ok));
    const user = await service.ctx.enabledUsers.findByEmail(email);
    const [identity] = await service.ctx.upstream.list(user?.id as string);
    assert.equal(identity?.subject, '4242');
  });
});
