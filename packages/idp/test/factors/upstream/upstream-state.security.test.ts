/**
 * The binding of an upstream sign-in to the browser that started it (factors/upstream/flow.ts),
 * attacked: the provider's answer replayed, another sign-in's answer swapped in, an attacker's
 * answer opened in the victim's browser (login CSRF), PKCE stripped at either end, and the
 * nonce swapped. Each is refused and signs nobody in. The upstream is a real OpenID Connect
 * provider (node-oidc-provider) on loopback. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import { fragmentOf, RedirectBrowser, startUpstream, type TestUpstream } from '../../support/upstream.js';
import { atApp, atCallback, connect, startUrl } from './upstream-helpers.js';

describe('upstream sign-in: state, PKCE, nonce and login CSRF', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let lax: TestUpstream;
  let connection: string;
  let laxConnection: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    // A provider that does not insist on PKCE: what our side does about it is what is tested.
    lax = await startUpstream(`${service.url}${UpstreamPaths.callback}`, { pkceRequired: false });
    connection = (await connect(service, upstream)).id;
    laxConnection = (await connect(service, lax)).id;
  });
  after(async () => {
    await upstream.close();
    await lax.close();
    await service.close();
  });

  const newIdentity = (who = 'fed') => {
    const email = uniqueEmail(who);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    lax.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    return email;
  };
  const toCallback = async (browser: RedirectBrowser, id = connection) =>
    (await browser.go(startUrl(service, id), atCallback(service))).url;

  it('state replay: the same answer delivered twice (with the flow cookie kept) is refused the second time', async () => {
    const email = newIdentity('replay');
    const browser = new RedirectBrowser();
    const callback = await toCallback(browser);
    const kept = new Map([...browser.jar].map(([origin, jar]) => [origin, new Map(jar)]));
    const first = fragmentOf((await browser.go(callback.href, atApp)).url);
    assert.equal(first.status, 'SUCCESS');
    for (const [origin, jar] of kept) browser.jar.set(origin, jar);
    const again = await browser.go(callback.href, atApp);
    assert.equal(fragmentOf(again.url).status, 'ERROR');
    assert.equal(fragmentOf(again.url).code, 'ERR_UPSTREAM_REFUSED');
    assert.ok(await service.ctx.enabledUsers.findByEmail(email));
  });

  it("state swap: another sign-in's answer in this browser is refused and signs nobody in", async () => {
    const email = newIdentity('swap');
    const browser = new RedirectBrowser();
    const first = await toCallback(browser);
    await toCallback(browser); // a second sign-in: the cookie is now its flow's
    const end = await browser.go(first.href, atApp);
    assert.deepEqual([fragmentOf(end.url).status, fragmentOf(end.url).code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it("login CSRF: the attacker's answer opened in the victim's browser (no flow cookie) is a refusal page, no redirect", async () => {
    const email = newIdentity('csrf');
    const attacker = new RedirectBrowser();
    const callback = await toCallback(attacker);
    const victim = new RedirectBrowser();
    const end = await victim.go(callback.href, atApp);
    assert.equal(end.status, 400);
    assert.match(end.body ?? '', /expired/);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it('PKCE stripped at the start: no code_challenge, no sign-in', async () => {
    const url = new URL(startUrl(service, connection));
    url.searchParams.delete('code_challenge');
    const response = await fetch(url, { redirect: 'manual' });
    assert.equal(response.status, 400);
    assert.equal(response.headers.get('location'), null);
    url.searchParams.set('code_challenge', 'short');
    assert.equal((await fetch(url, { redirect: 'manual' })).status, 400);
  });

  it("PKCE stripped from the provider request: the provider's code, made without the challenge, is not accepted", async () => {
    const email = newIdentity('pkce');
    const browser = new RedirectBrowser();
    const atProvider = await browser.go(startUrl(service, laxConnection), (url) => url.origin === lax.issuer);
    assert.ok(atProvider.url.searchParams.get('code_challenge'), 'the service asks with a challenge');
    atProvider.url.searchParams.delete('code_challenge');
    atProvider.url.searchParams.delete('code_challenge_method');
    const end = await browser.go(atProvider.url.href, atApp);
    assert.deepEqual([fragmentOf(end.url).status, fragmentOf(end.url).code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it("nonce swap: an ID token made for another nonce (the authorization request's changed) is refused", async () => {
    const email = newIdentity('nonce');
    const browser = new RedirectBrowser();
    const atProvider = await browser.go(startUrl(service, connection), (url) => url.origin === upstream.issuer);
    atProvider.url.searchParams.set('nonce', 'an-attackers-nonce-0123456789');
    const end = await browser.go(atProvider.url.href, atApp);
    assert.deepEqual([fragmentOf(end.url).status, fragmentOf(end.url).code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });
});
