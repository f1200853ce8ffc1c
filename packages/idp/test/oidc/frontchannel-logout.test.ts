/**
 * OpenID Connect Front-Channel Logout 1.0: when a session ends at the end-session endpoint, the
 * signed-out page loads each of the session's apps' `frontchannel_logout_uri` in a hidden
 * iframe (`iss` and `sid` added for an app that registered frontchannel_logout_session_required),
 * under a CSP whose frame-src names those origins, and a script file (no inline script) goes on
 * to the app's post_logout_redirect_uri once they loaded or after a bounded wait. Without
 * front-channel apps the end-session endpoint answers as before (a 303, or the plain page).
 * The browser's part (frames loaded, then the redirect) is proved in Chromium
 * (examples/demo/test/oidc-mod-auth-openidc.test.ts). Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FRONTCHANNEL_LOGOUT_WAIT_MS } from '../../src/defaults.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';
import { framesOf, signedOutPage } from '../support/signed-out-page.js';

describe('front-channel logout', () => {
  let service: TestService;
  let withSession: RelyingParty;
  let plain: RelyingParty;
  let without: RelyingParty;
  before(async () => {
    service = await startTestService();
    withSession = await relyingParty(service, {
      name: 'Wiki',
      redirectUri: 'https://wiki.example/cb',
      postLogoutRedirectUris: ['https://wiki.example/bye'],
    });
    plain = await relyingParty(service, { name: 'Board', redirectUri: 'https://board.example:8443/cb' });
    without = await relyingParty(service, { name: 'Mail', redirectUri: 'https://mail.example/cb' });
    await service.ctx.clients.setAddresses(withSession.clientId, {
      logout: { frontchannelLogoutUri: 'https://wiki.example/fc-logout?tenant=7', frontchannelLogoutSessionRequired: true },
    });
    await service.ctx.clients.setAddresses(plain.clientId, { logout: { frontchannelLogoutUri: 'https://board.example:8443/fc' } });
  });
  after(() => service.close());

  /** One browser signed in at the three apps (one session): its sid and the wiki's ID token. */
  async function signedInAtAll() {
    const atWiki = await signIn(service, withSession, uniqueEmail('fcl'));
    await signIn(service, plain, 'ignored@example.com', { browser: atWiki.browser });
    await signIn(service, without, 'ignored@example.com', { browser: atWiki.browser });
    const idToken = atWiki.tokens.id_token ?? '';
    return { browser: atWiki.browser, idToken, sid: idTokenClaims(idToken).sid as string };
  }

  it('discovery advertises front-channel logout with iss and sid', async () => {
    const document = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(document.frontchannel_logout_supported, true);
    assert.equal(document.frontchannel_logout_session_supported, true);
  });

  it('the signed-out page frames each front-channel app of the session, with iss and sid where asked, then goes on to the app', async () => {
    const session = await signedInAtAll();
    const page = await signedOutPage(service, session.browser.jar, {
      id_token_hint: session.idToken,
      post_logout_redirect_uri: 'https://wiki.example/bye',
      state: 'st-1',
    });
    assert.equal(page.status, 200, 'a page, not the 303: the frames load first');
    const frames = framesOf(page.html);
    assert.equal(frames.length, 2, 'the app without a front-channel URI is not framed');
    const wiki = new URL(frames[0]?.src ?? '');
    assert.equal(`${wiki.origin}${wiki.pathname}`, 'https://wiki.example/fc-logout');
    assert.equal(wiki.searchParams.get('tenant'), '7', "the registered query is kept (3: the RP's own parameters)");
    assert.equal(wiki.searchParams.get('iss'), service.url);
    assert.equal(wiki.searchParams.get('sid'), session.sid);
    assert.equal(frames[1]?.src, 'https://board.example:8443/fc', 'no iss or sid for an app that did not ask');
    for (const frame of frames) assert.ok(frame.hidden && frame.title, 'hidden, and titled for assistive technology');
    const next = page.html.match(/<a id="continue" href="([^"]*)">/)?.[1];
    assert.equal(next?.replaceAll('&amp;', '&'), 'https://wiki.example/bye?state=st-1', 'the way on to the app, with its state');
    assert.match(page.html, /<script src="\/signin\/signed-out\.js"><\/script>/);
    assert.doesNotMatch(page.html, /<script>|<script [^>]*>[^<]/, 'no inline script');
    assert.equal(page.csp.match(/frame-src ([^;]*)/)?.[1], 'https://wiki.example https://board.example:8443');
    assert.match(page.csp, /script-src 'self'/);
    assert.doesNotMatch(page.csp, /unsafe-inline/);
    assert.ok(page.cookieCleared, 'the session cookie is cleared');
  });

  it("the page's script file follows the link once the frames loaded, or after the bounded wait", async () => {
    const answer = await fetch(`${service.url}/signin/signed-out.js`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^text\/javascript/);
    const script = await answer.text();
    assert.match(script, /addEventListener\("load"/);
    assert.match(script, new RegExp(`setTimeout\\(go, ${FRONTCHANNEL_LOGOUT_WAIT_MS}\\)`));
    assert.ok(FRONTCHANNEL_LOGOUT_WAIT_MS <= 5000, 'a short wait');
  });

  it('without a return address the signed-out page frames the apps and stays; the confirmation path frames them too', async () => {
    const session = await signedInAtAll();
    const confirm = await signedOutPage(service, session.browser.jar, {});
    assert.equal(confirm.status, 200);
    assert.equal(framesOf(confirm.html).length, 0, 'nothing framed before the user confirms');
    const confirmation = confirm.html.match(/name="confirmation" value="([^"]+)"/)?.[1] ?? '';
    const done = await signedOutPage(service, session.browser.jar, { confirmation }, 'POST');
    assert.equal(done.status, 200);
    assert.equal(framesOf(done.html).length, 2);
    assert.doesNotMatch(done.html, /id="continue"|<script/, 'no app to go on to: no link, no script');
    const again = await signedOutPage(service, session.browser.jar, {});
    assert.equal(framesOf(again.html).length, 0, 'the session is gone: nothing to frame again');
  });

  it('in the browser`s language', async () => {
    const session = await signedInAtAll();
    const page = await signedOutPage(service, session.browser.jar, { id_token_hint: session.idToken, ui_locales: 'de' });
    assert.match(page.html, /<html lang="de"/);
    assert.match(page.html, /Sie werden von den hier genutzten Apps abgemeldet/);
    assert.match(page.html, /title="Abmeldung von einer App"/);
  });

  it('a session without front-channel apps is answered as before: the 303 back to the app', async () => {
    const atMail = await signIn(service, without, uniqueEmail('no-fc'));
    await service.ctx.clients.setAddresses(without.clientId, { postLogoutRedirectUris: ['https://mail.example/bye'] });
    const page = await signedOutPage(service, atMail.browser.jar, {
      id_token_hint: atMail.tokens.id_token ?? '',
      post_logout_redirect_uri: 'https://mail.example/bye',
    });
    assert.equal(page.status, 303);
    assert.equal(page.location, 'https://mail.example/bye');
  });
});
