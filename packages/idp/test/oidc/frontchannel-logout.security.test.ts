/**
 * Front-channel logout's attacks. The signed-out page loads apps' pages with the user's sid, so:
 * a URI on another origin than the client's redirect URIs (a row written around the
 * registration checks, a restored backup) is never framed, nor is one whose characters would
 * break out of the iframe's attribute; a registered query cannot forge `iss` or `sid` nor add
 * an attribute; the page's CSP frame-src names the framed apps' origins and nothing else; an
 * app that did not ask for the session (or was not in it) never sees its sid. Registration-time
 * refusals are in backchannel-logout.security.test.ts. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';
import { framesOf, signedOutPage } from '../support/signed-out-page.js';

describe('front-channel logout: hostile URIs, other origins, sid leaks', () => {
  let service: TestService;
  let app: RelyingParty;
  let other: RelyingParty;
  before(async () => {
    service = await startTestService();
    app = await relyingParty(service, { name: 'App', redirectUri: 'https://app.example/cb' });
    other = await relyingParty(service, { name: 'Other', redirectUri: 'https://other.example/cb' });
    await service.ctx.clients.setAddresses(other.clientId, { logout: { frontchannelLogoutUri: 'https://other.example/fc' } });
  });
  after(() => service.close());

  const register = (uri: string, sessionRequired = true) =>
    service.ctx.clients.setAddresses(app.clientId, {
      logout: { frontchannelLogoutUri: uri, frontchannelLogoutSessionRequired: sessionRequired },
    });
  /** Writes the stored URI directly, as no registration path would accept it. */
  const storeAroundTheChecks = (uri: string) =>
    service.ctx.db
      .updateTable('clients')
      .set({ frontchannel_logout_uri: uri, frontchannel_logout_session_required: 1 })
      .where('id', '=', app.clientId)
      .execute();

  /** Signs a new browser in at `apps` and out again with the first app's ID token: the signed-out page and the session's sid. */
  async function signedOut(apps: RelyingParty[] = [app]) {
    const [first, ...rest] = apps;
    assert.ok(first);
    const at = await signIn(service, first, uniqueEmail('fcl-hostile'));
    for (const next of rest) await signIn(service, next, 'ignored@example.com', { browser: at.browser });
    const idToken = at.tokens.id_token ?? '';
    const page = await signedOutPage(service, at.browser.jar, { id_token_hint: idToken });
    assert.equal(page.status, 200);
    return { ...page, sid: idTokenClaims(idToken).sid as string };
  }

  it('a front-channel URI on another origin than the client`s redirect URIs is never framed, even when stored', async () => {
    await storeAroundTheChecks('https://evil.example/steal');
    const page = await signedOut();
    assert.deepEqual(framesOf(page.html), []);
    assert.doesNotMatch(page.csp, /frame-src|evil\.example/);
    assert.ok(!page.html.includes(page.sid), 'the sid goes nowhere');
  });

  it('a stored front-channel URI that would break out of the iframe`s attribute is never framed', async () => {
    await storeAroundTheChecks('https://app.example/fc?x="><script>alert(1)</script>');
    const page = await signedOut();
    assert.deepEqual(framesOf(page.html), []);
    assert.doesNotMatch(page.html, /<script>alert/);
  });

  it('a hostile registered query stays inside the src and cannot forge iss or sid', async () => {
    await register("https://app.example/fc?sid=forged&iss=https://evil.example&next='onload='alert(1)");
    const page = await signedOut();
    const [frame, ...more] = framesOf(page.html);
    assert.equal(more.length, 0);
    assert.ok(frame);
    assert.deepEqual(Object.keys(frame.attributes).sort(), ['hidden', 'src', 'title'], 'no attribute added by the query');
    const src = new URL(frame.src);
    assert.deepEqual(src.searchParams.getAll('sid'), [page.sid], 'the session`s sid, once');
    assert.deepEqual(src.searchParams.getAll('iss'), [service.url], 'this issuer, once');
    assert.equal(src.searchParams.get('next'), "'onload='alert(1)", 'the rest of the query kept, as text');
    assert.doesNotMatch(page.html, /'onload/, 'never a raw quote in the markup');
  });

  it("the signed-out page's CSP frame-src lists only the framed apps' registered origins", async () => {
    await register('https://app.example/fc');
    const page = await signedOut([app, other]);
    assert.deepEqual(
      framesOf(page.html).map((frame) => new URL(frame.src).origin),
      ['https://app.example', 'https://other.example'],
    );
    assert.equal(page.csp.match(/frame-src ([^;]*)/)?.[1], 'https://app.example https://other.example');
    assert.match(page.csp, /default-src 'none'/);
    assert.match(page.csp, /frame-ancestors 'none'/, 'the page itself is still never framed');
    // An app with a front-channel URI that got no code in this session is not framed.
    const alone = await signedOut([app]);
    assert.equal(alone.csp.match(/frame-src ([^;]*)/)?.[1], 'https://app.example');
    assert.ok(!alone.html.includes('other.example'));
  });

  it('iss and sid go only to an app that registered frontchannel_logout_session_required', async () => {
    await register('https://app.example/fc', false);
    const page = await signedOut([app, other]);
    for (const frame of framesOf(page.html)) {
      const src = new URL(frame.src);
      assert.equal(src.searchParams.get('sid'), null, `${src.origin} did not ask for the session`);
      assert.equal(src.searchParams.get('iss'), null);
    }
    assert.ok(!page.html.includes(page.sid), 'the sid is nowhere on the page');
  });
});
