/**
 * response_mode=form_post (OAuth 2.0 Form Post Response Mode; issue 36): the code reaches the
 * app as a form the browser posts, never in a URL. Threats: a hostile `state` injecting markup
 * or script into the auto-submitting page (every value is escaped, the page runs only our script
 * file under a CSP whose forms may go to the app's origin alone); the code leaking in a Location
 * header; another app's origin widening the hosted page's form-action. Errors go back the way
 * the app asked. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, hostedBrowser, requestIdOf } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';

const HOSTILE_STATE = '"><script>alert(1)</script><img src=x onerror=alert(2)>';

/** The hidden fields of the form_post page's form, as a browser would read them (HTML entities decoded). */
function formFields(html: string): Record<string, string> {
  const decode = (text: string) =>
    text.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? '');
  return Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]*)" value="([^"]*)">/g)].map((m) => [decode(m[1] ?? ''), decode(m[2] ?? '')]),
  );
}

describe('response_mode=form_post', () => {
  let service: TestService;
  let rp: RelyingParty;
  before(async () => {
    service = await startTestService();
    rp = await relyingParty(service, { name: 'Form App', redirectUri: 'https://form-app.example/callback' });
  });
  after(() => service.close());

  const params = (pkce: { codeChallenge: string }, extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: rp.clientId,
    redirect_uri: rp.redirectUri,
    scope: 'openid email',
    state: 'st-1',
    code_challenge: pkce.codeChallenge,
    code_challenge_method: 'S256',
    response_mode: 'form_post',
    ...extra,
  });

  it('is published in discovery beside query', async () => {
    const metadata = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.deepEqual(metadata.response_modes_supported, ['query', 'form_post']);
  });

  it('the hosted sign-in answers its page with the fields to post, and the page may post only to the app', async () => {
    const browser = hostedBrowser(service);
    const pkce = await createPkcePair();
    const start = await authorize(service, params(pkce), browser.jar);
    assert.equal(start.status, 303);
    const page = await fetch(`${service.url}/signin?request=${requestIdOf(start.location)}`, { headers: { cookie: browser.jar.header() } });
    await page.arrayBuffer();
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/form-app\.example;/);

    const done = await browser.signIn(start.location ?? '', uniqueEmail('form-post'));
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.location, rp.redirectUri, 'the redirect URI alone: no code in the URL');
    assert.equal(done.body.form.state, 'st-1');
    assert.equal(done.body.form.iss, service.url);
    const tokens = await fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: done.body.form.code,
        code_verifier: pkce.codeVerifier,
        redirect_uri: rp.redirectUri,
        ...credentials(rp),
      }),
    });
    assert.equal(tokens.status, 200, await tokens.clone().text());

    // A query-mode request of the same app keeps the strict form-action.
    const query = await authorize(service, { ...params(pkce), response_mode: 'query' }, hostedBrowser(service).jar);
    const plain = await fetch(`${service.url}/signin?request=${requestIdOf(query.location)}`);
    await plain.arrayBuffer();
    assert.match(plain.headers.get('content-security-policy') ?? '', /form-action 'self';/);
  });

  it('single sign-on answers with the auto-submitting page; a hostile state stays inert text in it', async () => {
    const browser = hostedBrowser(service);
    const first = await authorize(service, params(await createPkcePair(), { response_mode: 'query' }), browser.jar);
    await browser.signIn(first.location ?? '', uniqueEmail('form-post-sso'));

    const answer = await authorize(service, params(await createPkcePair(), { state: HOSTILE_STATE }), browser.jar);
    assert.equal(answer.status, 200);
    assert.equal(answer.location, null, 'no redirect: the code is in no URL');
    const csp = answer.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self';/);
    assert.match(csp, /form-action 'self' https:\/\/form-app\.example;/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.match(answer.body, /<form id="form-post" method="post" action="https:\/\/form-app\.example\/callback">/);
    const scripts = [...answer.body.matchAll(/<script[^>]*>/g)].map((m) => m[0]);
    assert.deepEqual(scripts, ['<script src="/signin/form-post.js">'], 'only our script file, no injected one');
    assert.doesNotMatch(answer.body, /<img src=x/);
    const fields = formFields(answer.body);
    assert.equal(fields.state, HOSTILE_STATE, 'the state goes back exactly as sent');
    assert.match(fields.code ?? '', /.{20,}/);
    assert.equal(fields.iss, service.url);

    const script = await fetch(`${service.url}/signin/form-post.js`);
    assert.equal(script.status, 200);
    assert.match(await script.text(), /getElementById\("form-post"\)\.submit\(\)/);
  });

  it('an error goes back as a form too (prompt=none without a session)', async () => {
    const answer = await authorize(service, params(await createPkcePair(), { prompt: 'none' }));
    assert.equal(answer.status, 200);
    const fields = formFields(answer.body);
    assert.equal(fields.error, 'login_required');
    assert.equal(fields.state, 'st-1');
  });

  it('an unsupported response mode is refused in the query', async () => {
    const answer = await authorize(service, params(await createPkcePair(), { response_mode: 'fragment' }));
    assert.equal(answer.status, 303);
    const back = new URL(answer.location ?? '');
    assert.equal(back.searchParams.get('error'), 'invalid_request');
    assert.match(back.searchParams.get('error_description') ?? '', /response_mode/);
  });
});
