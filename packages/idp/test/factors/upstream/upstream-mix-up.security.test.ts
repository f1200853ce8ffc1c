/**
 * Answers and ID tokens from the wrong provider or for the wrong client. Mix-up (RFC 9207,
 * RFC 9700 4.4): the browser started with provider A but comes back with B's answer (an
 * attacker's provider, or an honest one the attacker steered it to); the `iss` of the answer
 * is not A's, so it is refused before any code is sent anywhere. An ID token for another
 * audience, from another issuer, or carrying an earlier sign-in's nonce (a replayed token) is
 * refused by the ID token checks. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import { fragmentOf, RedirectBrowser, startUpstream, type TestUpstream } from '../../support/upstream.js';
import { type ShapedProvider, startShapedProvider } from '../../support/upstream-shapes.js';
import { atApp, connect, startUrl } from './upstream-helpers.js';

describe('upstream sign-in: mix-up, audience, issuer, nonce replay', () => {
  let service: TestService;
  let a: TestUpstream;
  let b: TestUpstream;
  let shaped: ShapedProvider;
  let connectionA: string;
  let shapedConnection: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    const callback = `${service.url}${UpstreamPaths.callback}`;
    // The same client id at both: the attacker's provider B accepts what was meant for A.
    a = await startUpstream(callback, { clientId: 'same-client' });
    b = await startUpstream(callback, { clientId: 'same-client' });
    connectionA = (await connect(service, a)).id;
    shaped = await startShapedProvider({ clientId: 'shaped-client' });
    shapedConnection = (
      await service.ctx.connections.create(
        { preset: 'oidc', issuer: shaped.issuer, clientId: 'shaped-client', clientSecret: 'shaped-secret', clients: [service.clientId] },
        'test',
      )
    ).id;
  });
  after(async () => {
    await Promise.all([a.close(), b.close(), shaped.close()]);
    await service.close();
  });

  it("mix-up: B's answer (iss B) to a sign-in started with A is refused; nobody signs in", async () => {
    const email = uniqueEmail('mixup');
    b.signInAs({ sub: 'b-user', email, email_verified: true });
    const browser = new RedirectBrowser();
    const atA = await browser.go(startUrl(service, connectionA), (url) => url.origin === a.issuer);
    // The authorization request steered to B, every parameter kept.
    const toB = new URL(atA.url.pathname + atA.url.search, b.issuer);
    const [before, beforeB] = [a.tokenRequests(), b.tokenRequests()];
    const end = await browser.go(toB.href, atApp);
    // Refused on B's `iss` before any code was sent to a token endpoint (RFC 9207 2.4).
    assert.equal(a.tokenRequests(), before, "B's code never reaches A's token endpoint");
    assert.equal(b.tokenRequests(), beforeB);
    const result = fragmentOf(end.url);
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  /** A sign-in with the shaped provider whose ID token carries `claims`: the page's result. */
  async function shapedSignIn(claims: (nonce: string) => Record<string, unknown>) {
    const browser = new RedirectBrowser();
    const atProvider = await browser.go(startUrl(service, shapedConnection), (url) => url.origin === shaped.base);
    const nonce = atProvider.url.searchParams.get('nonce') as string;
    shaped.next = claims(nonce);
    const callback = new URL(`${service.url}${UpstreamPaths.callback}`);
    callback.searchParams.set('code', 'shaped-code');
    callback.searchParams.set('state', atProvider.url.searchParams.get('state') as string);
    return fragmentOf((await browser.go(callback.href, atApp)).url);
  }

  it('the shaped provider signs in when its ID token is right (the control for the next three)', async () => {
    const email = uniqueEmail('shaped-ok');
    const result = await shapedSignIn((nonce) => ({ sub: `s-${email}`, email, email_verified: true, nonce }));
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    const token = shaped.tokenRequests.at(-1);
    assert.ok(token?.params.get('code_verifier'), 'the PKCE verifier went with the code');
    assert.equal(token?.params.get('client_secret'), 'shaped-secret');
  });

  it('an ID token for another audience is refused', async () => {
    const email = uniqueEmail('aud');
    const result = await shapedSignIn((nonce) => ({ sub: `s-${email}`, email, email_verified: true, nonce, aud: 'another-client' }));
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it('an ID token from another issuer is refused', async () => {
    const email = uniqueEmail('iss');
    const result = await shapedSignIn((nonce) => ({ sub: `s-${email}`, email, email_verified: true, nonce, iss: 'https://evil.example' }));
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });

  it("nonce replay: an ID token carrying an earlier sign-in's nonce is refused", async () => {
    const email = uniqueEmail('nonce-replay');
    let earlier = '';
    await shapedSignIn((nonce) => {
      earlier = nonce;
      return { sub: `s-${email}-0`, email: uniqueEmail('first'), email_verified: true, nonce };
    });
    const result = await shapedSignIn(() => ({ sub: `s-${email}`, email, email_verified: true, nonce: earlier }));
    assert.deepEqual([result.status, result.code], ['ERROR', 'ERR_UPSTREAM_REFUSED']);
    assert.equal(await service.ctx.enabledUsers.findByEmail(email), undefined);
  });
});
