/**
 * Attacks on the authorization endpoint and the hosted sign-in:
 * - open redirect: any redirect_uri that is not, character for character, one the client
 *   registered (other host, look-alike host, extra path, extra query, other scheme or port) gets
 *   our error page and never a redirect, nor does an unknown client (RFC 6749 4.1.2.1, RFC 9700 4.1);
 * - code injection: a code issued to one client is refused to another, and a code is redeemed
 *   once (RFC 6749 4.1.3, 10.5), only with the redirect_uri it was issued for;
 * - PKCE downgrade: `plain` is refused, a public client without a challenge is refused;
 * - state: echoed exactly, absent when absent (the client's CSRF defence, RFC 6749 10.12);
 * - CSRF and request swapping at the hosted page: completion needs our Origin and the cookie of
 *   the browser that made the request; a hosted code cannot be replayed or swapped;
 * - clickjacking and script injection: the pages are never framed and run only our own files.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, CookieJar, complete, hostedBrowser, paramsOf, RP_CALLBACK, redeem, registerApp } from '../support/oidc-helpers.js';

describe('authorization endpoint: hostile requests', () => {
  let service: TestService;
  let rp: { clientId: string; secretKey?: string };
  let other: { clientId: string; secretKey?: string };
  let spa: { clientId: string };
  before(async () => {
    service = await startTestService();
    rp = await service.ctx.clients.create({ name: 'RP', origins: [], redirectUris: [RP_CALLBACK, 'https://rp.example/cb?tenant=1'] });
    other = await service.ctx.clients.create({ name: 'Other', origins: [], redirectUris: ['https://other.example/cb'] });
    spa = await service.ctx.clients.create({ name: 'SPA', origins: [], redirectUris: ['https://spa.example/cb'], public: true });
  });
  after(() => service.close());

  const base = (extra: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: rp.clientId,
    redirect_uri: RP_CALLBACK,
    scope: 'openid',
    state: 'xyz',
    ...extra,
  });

  const assertErrorPage = (answer: { status: number; location: string | null; headers: Headers }) => {
    assert.equal(answer.status, 400);
    assert.equal(answer.location, null, 'never redirected');
    assert.match(answer.headers.get('content-type') ?? '', /text\/html/);
  };

  for (const [redirectUri, why] of [
    ['https://evil.example/callback', 'another host'],
    ['https://rp.example.evil.example/callback', 'look-alike host'],
    ['https://rp.example@evil.example/callback', 'credentials trick'],
    ['https://rp.example/callback/../evil', 'extra path'],
    ['https://rp.example/callback/extra', 'longer path'],
    ['https://rp.example/callback?next=https://evil.example', 'extra query'],
    ['https://rp.example/cb?tenant=2', 'other query value'],
    ['http://rp.example/callback', 'other scheme'],
    ['https://rp.example:8443/callback', 'other port'],
    ['https://RP.example/callback', 'other case'],
    ['https://rp.example/callback/', 'trailing slash'],
    ['https://rp.example/callback#x', 'fragment'],
    ['https://other.example/cb', 'another client`s URI'],
  ]) {
    it(`shows an error page, never a redirect, for ${why}: ${redirectUri}`, async () => {
      assertErrorPage(await authorize(service, base({ redirect_uri: redirectUri as string })));
    });
  }

  it('shows an error page for an unknown client, a missing client_id, a missing redirect_uri, and the built-in hosted client', async () => {
    assertErrorPage(await authorize(service, base({ client_id: 'cli_unknown' })));
    const { client_id: _c, ...noClient } = base();
    assertErrorPage(await authorize(service, noClient));
    const { redirect_uri: _r, ...noRedirect } = base();
    assertErrorPage(await authorize(service, noRedirect));
    assertErrorPage(await authorize(service, base({ client_id: 'cli_hosted_signin', redirect_uri: `${service.url}/signin` })));
  });

  it('shows an error page when client_id or redirect_uri is sent twice', async () => {
    for (const name of ['client_id', 'redirect_uri']) {
      const query = `${new URLSearchParams(base())}&${name}=${encodeURIComponent(name === 'client_id' ? other.clientId : 'https://other.example/cb')}`;
      const response = await fetch(`${service.url}/authorize?${query}`, { redirect: 'manual' });
      assertErrorPage({ status: response.status, location: response.headers.get('location'), headers: response.headers });
    }
  });

  it('keeps a registered redirect URI`s own query and adds the response after it', async () => {
    const answer = await authorize(service, base({ redirect_uri: 'https://rp.example/cb?tenant=1', prompt: 'none' }));
    assert.equal(answer.status, 303);
    const url = new URL(answer.location ?? '');
    assert.equal(url.origin + url.pathname, 'https://rp.example/cb');
    assert.deepEqual(
      [url.searchParams.get('tenant'), url.searchParams.get('error'), url.searchParams.get('iss')],
      ['1', 'login_required', service.url],
    );
  });

  for (const [extra, error, why] of [
    [{ response_type: 'token' }, 'unsupported_response_type', 'implicit flow'],
    [{ response_type: 'code id_token' }, 'unsupported_response_type', 'hybrid flow'],
    [{ scope: 'email' }, 'invalid_scope', 'no openid scope'],
    [{ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'plain' }, 'invalid_request', 'PKCE plain'],
    [{ code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM' }, 'invalid_request', 'PKCE method left out (defaults to plain)'],
    [{ code_challenge: 'short' }, 'invalid_request', 'malformed challenge'],
    [{ prompt: 'none login' }, 'invalid_request', 'prompt=none combined'],
    [{ prompt: 'select_account' }, 'invalid_request', 'unsupported prompt'],
    [{ prompt: 'none consent' }, 'invalid_request', 'prompt=none combined with consent'],
    [{ max_age: '-1' }, 'invalid_request', 'negative max_age'],
    [{ nonce: 'n'.repeat(1001) }, 'invalid_request', 'over-long nonce'],
    [{ login_hint: `${'a'.repeat(1000)}@example.com` }, 'invalid_request', 'over-long login_hint'],
    [{ request: 'eyJ...' }, 'request_not_supported', 'request object'],
    [{ response_mode: 'fragment' }, 'invalid_request', 'other response_mode'],
  ] as const) {
    it(`redirects ${why} back with error=${error}, the state and iss`, async () => {
      const answer = await authorize(service, base(extra as Record<string, string>));
      assert.equal(answer.status, 303);
      const params = paramsOf(answer.location);
      assert.ok(answer.location?.startsWith(`${RP_CALLBACK}?`));
      assert.equal(params.error, error);
      assert.equal(params.state, 'xyz');
      assert.equal(params.iss, service.url);
      assert.equal(params.code, undefined);
    });
  }

  it("answers a request_uri that is no pushed request of this client with our page, never a redirect to the request's redirect_uri", async () => {
    for (const requestUri of ['https://evil.example/r', 'urn:ietf:params:oauth:request_uri:made-up']) {
      const answer = await authorize(service, base({ request_uri: requestUri }));
      assert.equal(answer.status, 400, requestUri);
      assert.equal(answer.location, null);
    }
  });

  it('refuses a public client without a code challenge (PKCE required)', async () => {
    const answer = await authorize(service, base({ client_id: spa.clientId, redirect_uri: 'https://spa.example/cb' }));
    assert.equal(paramsOf(answer.location).error, 'invalid_request');
  });

  it('echoes state exactly and leaves it out when absent', async () => {
    const state = 'a b&c=d/é?%20+';
    const echoed = await authorize(service, base({ state, prompt: 'none' }));
    assert.equal(paramsOf(echoed.location).state, state);
    const { state: _s, ...stateless } = base({ prompt: 'none' });
    const absent = await authorize(service, stateless);
    assert.equal(new URL(absent.location ?? '').searchParams.has('state'), false);
  });

  it('serves the hosted page with a strict CSP, never framed, no inline script', async () => {
    const start = await authorize(service, base());
    const page = await fetch(new URL(start.location ?? '', service.url));
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /frame-ancestors 'none'/);
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    const html = await page.text();
    // The page's messages are a JSON data block (never run by the browser; its content cannot close it).
    const dataBlock = /<script type="application\/json" id="service-messages">([^<]*)<\/script>/;
    assert.ok(JSON.parse(html.match(dataBlock)?.[1] ?? ''), 'the messages are JSON data');
    assert.doesNotMatch(
      html.replace(dataBlock, ''),
      /<script>|<script [^>]*>[^<]|<style|\sstyle=|\son[a-z]+=/i,
      'only external scripts and styles',
    );
    // Escaped app name: a client named like markup cannot inject it.
    const hostile = await registerApp(service, '<img src=x onerror=alert(1)>');
    const hostileStart = await authorize(service, base({ client_id: hostile.clientId }));
    const hostileHtml = await (await fetch(new URL(hostileStart.location ?? '', service.url))).text();
    assert.doesNotMatch(hostileHtml, /<img/);
  });

  describe('codes and the hosted completion', () => {
    let email: string;
    let browser: ReturnType<typeof hostedBrowser>;
    let pkce: Awaited<ReturnType<typeof createPkcePair>>;
    let code: string;
    before(async () => {
      email = uniqueEmail('hostile');
      browser = hostedBrowser(service);
      pkce = await createPkcePair();
      const start = await authorize(service, base({ code_challenge: pkce.codeChallenge, code_challenge_method: 'S256' }), browser.jar);
      const done = await browser.signIn(start.location ?? '', email);
      code = paramsOf(done.location).code ?? '';
    });

    const grant = (extra: Record<string, string>) =>
      redeem(service, {
        code,
        redirect_uri: RP_CALLBACK,
        code_verifier: pkce.codeVerifier,
        client_id: rp.clientId,
        client_secret: rp.secretKey ?? '',
        ...extra,
      });

    it('refuses the code to another client (code injection), then to its own once spent', async () => {
      const injected = await grant({ client_id: other.clientId, client_secret: other.secretKey ?? '' });
      assert.equal(injected.status, 400);
      assert.equal(injected.body.error, 'invalid_grant');
      // The injection attempt consumed it: a code is good for one presentation only.
      const replay = await grant({});
      assert.equal(replay.body.error, 'invalid_grant');
    });

    it('refuses a redirect_uri other than the request`s, or none, at the token endpoint', async () => {
      for (const redirectUri of ['https://rp.example/cb?tenant=1', undefined]) {
        const fresh = await pkceCode();
        const answer = await redeem(service, {
          code: fresh.code,
          code_verifier: fresh.verifier,
          client_id: rp.clientId,
          client_secret: rp.secretKey ?? '',
          ...(redirectUri ? { redirect_uri: redirectUri } : {}),
        });
        assert.equal(answer.status, 400);
        assert.deepEqual(answer.body, {
          error: 'invalid_grant',
          error_description: 'redirect_uri does not match the one of the authorization request.',
        });
      }
    });

    it('refuses a replayed code', async () => {
      const fresh = await pkceCode();
      const params = { code: fresh.code, code_verifier: fresh.verifier, redirect_uri: RP_CALLBACK, client_id: rp.clientId };
      const first = await redeem(service, { ...params, client_secret: rp.secretKey ?? '' });
      assert.equal(first.status, 200);
      const second = await redeem(service, { ...params, client_secret: rp.secretKey ?? '' });
      assert.equal(second.body.error, 'invalid_grant');
    });

    /** A fresh code for rp from the live session (SSO). */
    async function pkceCode() {
      const p = await createPkcePair();
      const answer = await authorize(service, base({ code_challenge: p.codeChallenge, code_challenge_method: 'S256' }), browser.jar);
      return { code: paramsOf(answer.location).code ?? '', verifier: p.codeVerifier };
    }

    it('finishes a hosted sign-in only from our origin and in the browser that started it', async () => {
      const start = await authorize(service, base(), new CookieJar());
      const requestId = new URL(start.location ?? '', service.url).searchParams.get('request') ?? '';
      const attacker = new CookieJar();
      // Another origin (CSRF), and our origin without the request's browser cookie (a victim lured to a link).
      const crossSite = await complete(
        service,
        attacker,
        { request: requestId, code: 'ac_x', codeVerifier: pkce.codeVerifier },
        'https://evil.example',
      );
      assert.equal(crossSite.status, 400);
      const otherBrowser = await complete(service, attacker, { request: requestId, code: 'ac_x', codeVerifier: pkce.codeVerifier });
      assert.equal(otherBrowser.status, 400);
      assert.equal(otherBrowser.location, undefined);
    });

    it('does not take an app`s code, or a hosted code twice, at the hosted completion', async () => {
      const jar = new CookieJar();
      const start = await authorize(service, base(), jar);
      const requestId = new URL(start.location ?? '', service.url).searchParams.get('request') ?? '';
      const appCode = await pkceCode();
      const swapped = await complete(service, jar, { request: requestId, code: appCode.code, codeVerifier: appCode.verifier });
      assert.equal(swapped.status, 400);
    });
  });
});
