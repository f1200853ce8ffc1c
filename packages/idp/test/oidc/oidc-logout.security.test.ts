/**
 * RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0) and its attacks.
 * Open redirect: the end-session endpoint sends the browser back only to a post-logout
 * redirect URI the client registered, compared character for character; a look-alike or
 * another client's URI gets our error page and no Location header. Logout CSRF: any page can
 * make a browser GET /logout; without an ID token hint we issued naming the session's user,
 * the session is not ended but the user is asked, and the confirmation form only counts from
 * our own origin with a value derived from this browser's session cookie (and the page cannot
 * be framed). A forged or foreign hint is refused; an expired one of ours is accepted (the
 * spec's advice). Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { generateKeyPair, SignJWT } from 'jose';
import { createPkcePair } from 'service-web';
import { ID_TOKEN_TTL_SECONDS } from '../../src/defaults.js';
import { runCli, sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, type CookieJar, idTokenClaims, paramsOf } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';

const LOGGED_OUT = 'https://rp.example/logged-out';

describe('RP-initiated logout', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: RelyingParty;
  let other: RelyingParty;
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await relyingParty(service, { postLogoutRedirectUris: [LOGGED_OUT, 'com.example.app:/logged-out'] });
    other = await relyingParty(service, {
      name: 'Other App',
      redirectUri: 'https://other.example/cb',
      postLogoutRedirectUris: ['https://other.example/bye'],
    });
  });
  after(() => service.close());

  /** GET (or POST form) /logout with the browser's cookies, not following redirects. */
  async function logout(jar: CookieJar, params: Record<string, string>, init: { method?: 'GET' | 'POST'; origin?: string } = {}) {
    const query = new URLSearchParams(params);
    const response =
      init.method === 'POST'
        ? await fetch(`${service.url}/logout`, {
            method: 'POST',
            redirect: 'manual',
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              cookie: jar.header(),
              ...(init.origin ? { origin: init.origin } : {}),
            },
            body: query,
          })
        : await fetch(`${service.url}/logout?${query}`, { redirect: 'manual', headers: { cookie: jar.header() } });
    jar.store(response);
    return { status: response.status, location: response.headers.get('location'), body: await response.text(), headers: response.headers };
  }

  /** True while the browser's session signs it in to the app with no page (prompt=none). */
  async function signedIn(jar: CookieJar): Promise<boolean> {
    const pkce = await createPkcePair();
    const answer = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: rp.redirectUri,
        scope: 'openid',
        prompt: 'none',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
      },
      jar,
    );
    return paramsOf(answer.location).code !== undefined;
  }

  async function session(label: string) {
    clock.tick();
    const { tokens, browser } = await signIn(service, rp, uniqueEmail(label), { scope: 'openid email' });
    assert.ok(await signedIn(browser.jar));
    return { idToken: tokens.id_token ?? '', jar: browser.jar };
  }

  /** The confirmation page's hidden fields. */
  const formFields = (html: string) =>
    Object.fromEntries([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((m) => [m[1], m[2]]));

  it('ends the session at once for our ID token hint naming its user, and returns with state', async () => {
    const { idToken, jar } = await session('hint');
    const answer = await logout(jar, { id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT, state: 'bye-1' });
    assert.equal(answer.status, 303);
    assert.equal(answer.location, `${LOGGED_OUT}?state=bye-1`);
    assert.match(answer.headers.get('set-cookie') ?? '', /service_session=; Path=\/; Max-Age=0/);
    // A bound session's short cookie (DBSC, or the page's key) goes with it.
    assert.match(answer.headers.get('set-cookie') ?? '', /service_session_bound=; Path=\/; Max-Age=0/);
    assert.equal(await signedIn(jar), false, 'the session is over');
    const ended = await service.ctx.events.list({ type: 'session.ended', limit: 5 });
    assert.equal(ended.events[0]?.userId, idTokenClaims(idToken).sub);
  });

  it('accepts an expired hint of ours, and a private-use scheme the client registered', async () => {
    const { idToken, jar } = await session('expired-hint');
    clock.at += (ID_TOKEN_TTL_SECONDS + 60) * 1000;
    const answer = await logout(jar, { id_token_hint: idToken, post_logout_redirect_uri: 'com.example.app:/logged-out' });
    assert.equal(answer.status, 303);
    assert.equal(answer.location, 'com.example.app:/logged-out');
    assert.equal(await signedIn(jar), false);
  });

  it('never redirects to an unregistered or look-alike post_logout_redirect_uri (open redirect)', async () => {
    const { idToken, jar } = await session('open-redirect');
    for (const uri of [
      'https://evil.example/',
      `${LOGGED_OUT}/`,
      `${LOGGED_OUT}?next=https://evil.example`,
      `${LOGGED_OUT}#frag`,
      'https://rp.example.evil.example/logged-out',
      'https://RP.example/logged-out',
      'http://rp.example/logged-out',
      'https://rp.example/Logged-out',
      'https://rp.example:443/logged-out',
      'https://other.example/bye', // another client's
      'javascript:alert(1)',
    ]) {
      const answer = await logout(jar, { id_token_hint: idToken, post_logout_redirect_uri: uri, state: 's' });
      assert.equal(answer.status, 400, uri);
      assert.equal(answer.location, null, `${uri}: no redirect`);
      assert.match(answer.body, /Sign-out request refused/);
    }
    // Without a hint or client_id nobody registered anything: no redirect either.
    const anonymous = await logout(jar, { post_logout_redirect_uri: LOGGED_OUT });
    assert.deepEqual([anonymous.status, anonymous.location], [400, null]);
    // client_id and the hint must name the same client.
    const mixed = await logout(jar, {
      id_token_hint: idToken,
      client_id: other.clientId,
      post_logout_redirect_uri: 'https://other.example/bye',
    });
    assert.deepEqual([mixed.status, mixed.location], [400, null]);
    assert.ok(await signedIn(jar), 'no refused request ended the session');
  });

  it('asks before ending a session when the request has no hint (logout CSRF), and counts only our own form', async () => {
    const { jar } = await session('csrf');
    const page = await logout(jar, { client_id: rp.clientId, post_logout_redirect_uri: LOGGED_OUT, state: 'st' });
    assert.equal(page.status, 200);
    assert.match(page.body, /Sign out\?/);
    assert.match(page.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.match(page.headers.get('content-security-policy') ?? '', /form-action 'self' https:\/\/rp\.example/);
    assert.equal(page.headers.get('x-frame-options'), 'DENY');
    assert.equal(
      page.headers.get('referrer-policy'),
      'strict-origin',
      "so the browser sends its Origin with the form (and never the page's URL)",
    );
    assert.ok(await signedIn(jar), 'a bare GET ends nothing');
    const fields = formFields(page.body);
    assert.ok(fields.confirmation);
    assert.equal(fields.post_logout_redirect_uri, LOGGED_OUT);

    // A cross-site page posting the form (it cannot read the value, so it guesses, or replays its own).
    assert.equal((await logout(jar, fields, { method: 'POST', origin: 'https://evil.example' })).status, 400);
    assert.equal((await logout(jar, fields, { method: 'POST' })).status, 400, 'no Origin');
    const guessed = await logout(jar, { ...fields, confirmation: 'guess' }, { method: 'POST', origin: service.url });
    assert.equal(guessed.status, 400);
    const elsewhere = await session('csrf-attacker');
    const attackers = formFields((await logout(elsewhere.jar, {})).body);
    assert.equal((await logout(jar, attackers, { method: 'POST', origin: service.url })).status, 400, 'another browser`s value');
    assert.ok(await signedIn(jar));

    const confirmed = await logout(jar, fields, { method: 'POST', origin: service.url });
    assert.equal(confirmed.status, 303);
    assert.equal(confirmed.location, `${LOGGED_OUT}?state=st`);
    assert.equal(await signedIn(jar), false);
  });

  it('asks, too, when the hint names another user than the session`s', async () => {
    const mine = await session('mine');
    const theirs = await session('theirs');
    const answer = await logout(mine.jar, { id_token_hint: theirs.idToken, post_logout_redirect_uri: LOGGED_OUT });
    assert.equal(answer.status, 200);
    assert.match(answer.body, /Sign out\?/);
    assert.ok(await signedIn(mine.jar));
  });

  it('refuses a forged, tampered or foreign hint, and an access token as one', async () => {
    const { idToken, jar } = await session('forged');
    const [header = '', payload = '', signature = ''] = idToken.split('.');
    const claims = idTokenClaims(idToken);
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: 'usr_someone' })).toString('base64url')}.${signature}`;
    const { privateKey } = await generateKeyPair('RS256');
    const foreign = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: JSON.parse(Buffer.from(header, 'base64url').toString()).kid })
      .sign(privateKey);
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    const accessToken = (await signIn(service, rp, uniqueEmail('forged-at'), { scope: 'openid email' })).tokens.access_token ?? '';
    for (const [name, hint] of Object.entries({ tampered, foreign, unsigned, accessToken, garbage: 'not-a-jwt' })) {
      const answer = await logout(jar, { id_token_hint: hint, post_logout_redirect_uri: LOGGED_OUT });
      assert.deepEqual([answer.status, answer.location], [400, null], name);
    }
    assert.ok(await signedIn(jar));
  });

  it('turns an app`s POST into the GET, and answers a browser without a session', async () => {
    const { idToken, jar } = await session('post');
    const posted = await logout(jar, { id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT, state: 'p' }, { method: 'POST' });
    assert.equal(posted.status, 303);
    assert.ok(posted.location?.startsWith('/logout?'));
    const followed = await fetch(new URL(posted.location ?? '', service.url), { redirect: 'manual', headers: { cookie: jar.header() } });
    assert.equal(followed.headers.get('location'), `${LOGGED_OUT}?state=p`);
    assert.equal(await signedIn(jar), false);

    // Nothing to end: straight back to the app, or our signed-out page.
    const again = await logout(jar, { id_token_hint: idToken, post_logout_redirect_uri: LOGGED_OUT });
    assert.equal(again.location, LOGGED_OUT);
    const bare = await logout(jar, {});
    assert.equal(bare.status, 200);
    assert.match(bare.body, /You are signed out/);
  });

  it('keeps post-logout redirect URIs per client, checked like redirect URIs, changed by operators', async () => {
    await assert.rejects(
      service.ctx.clients.create({
        name: 'Bad',
        origins: [],
        redirectUris: [rp.redirectUri],
        postLogoutRedirectUris: ['javascript:alert(1)'],
      }),
      /post-logout redirect URI/,
    );
    await service.ctx.operations.setPostLogoutRedirectUris(other.clientId, ['https://other.example/later'], 'test');
    const client = await service.ctx.clients.findById(other.clientId);
    assert.deepEqual(client?.postLogoutRedirectUris, ['https://other.example/later']);
    await assert.rejects(service.ctx.operations.setPostLogoutRedirectUris(other.clientId, ['https://x.example/#f'], 'test'), /fragment/);
  });
});

describe('service-idp clients create|update --post-logout-redirect-uri', () => {
  it('registers, lists, replaces and clears a client`s post-logout redirect URIs, refusing unsafe ones', async () => {
    const data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
    const cli = (...args: string[]) => runCli([...args, '--data', data]);
    try {
      const created = await cli(
        'clients',
        'create',
        '--name',
        'Portal',
        '--redirect-uri',
        'https://portal.example/cb',
        '--post-logout-redirect-uri',
        'https://portal.example/bye',
        '--json',
      );
      assert.equal(created.code, 0, created.stderr);
      const { clientId } = JSON.parse(created.stdout);
      const listed = async () =>
        (
          JSON.parse((await cli('clients', 'list', '--json')).stdout).clients as Array<{ id: string; postLogoutRedirectUris: string[] }>
        ).find((c) => c.id === clientId)?.postLogoutRedirectUris;
      assert.deepEqual(await listed(), ['https://portal.example/bye']);
      assert.match((await cli('clients', 'list')).stdout, /POST-LOGOUT URIS/);

      const replaced = await cli(
        'clients',
        'update',
        clientId,
        '--post-logout-redirect-uri',
        'https://portal.example/a',
        '--post-logout-redirect-uri',
        'https://portal.example/b',
      );
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.deepEqual(await listed(), ['https://portal.example/a', 'https://portal.example/b']);
      const refused = await cli('clients', 'update', clientId, '--post-logout-redirect-uri', 'javascript:alert(1)');
      assert.equal(refused.code, 2, 'a bad value is status 2, as every refused input');
      assert.match(refused.stderr, /post-logout redirect URI/);
      assert.deepEqual(await listed(), ['https://portal.example/a', 'https://portal.example/b'], 'unchanged');
      assert.equal((await cli('clients', 'update', clientId, '--post-logout-redirect-uri', '')).code, 0);
      assert.deepEqual(await listed(), []);
    } finally {
      rmSync(data, { recursive: true, force: true });
    }
  });
});
