/**
 * Back- and front-channel logout and their attacks. A logout token for another app: each app
 * is told only of sessions it got a code in, with a token whose `aud` is itself (another app
 * verifying it refuses it). A replayed logout token: every token has a fresh `jti`, so the RP
 * drops one it has seen (OIDC Back-Channel Logout 1.0 2.6; docs/protocol.md), and its `exp` is
 * minutes away. A front-channel URI on another origin than the client's redirect URIs would
 * frame someone else's page with the user's sid: refused at registration (admin API, CLI
 * service), as are logout URIs sent in the clear across a network or carrying a fragment.
 * Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { startLogoutReceiver } from '../support/logout-receiver.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';
import { waitFor } from '../support/webhook-receiver.js';

describe('back-channel logout: a token for another app, or replayed', () => {
  let service: TestService;
  const clock = sendClock();
  let receiverA: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let receiverB: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let appA: RelyingParty;
  let appB: RelyingParty;
  before(async () => {
    service = await startTestService({ now: clock.now, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
    [receiverA, receiverB] = [await startLogoutReceiver(), await startLogoutReceiver()];
    appA = await relyingParty(service, { name: 'App A', redirectUri: 'https://a.example/cb' });
    appB = await relyingParty(service, { name: 'App B', redirectUri: 'https://b.example/cb' });
    await service.ctx.clients.setAddresses(appA.clientId, { logout: { backchannelLogoutUri: receiverA.url } });
    await service.ctx.clients.setAddresses(appB.clientId, { logout: { backchannelLogoutUri: receiverB.url } });
  });
  after(async () => {
    await receiverA.close();
    await receiverB.close();
    await service.close();
  });

  const signOut = (jar: { header(): string }, idToken: string) =>
    fetch(`${service.url}/logout?${new URLSearchParams({ id_token_hint: idToken })}`, {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });

  it('an app that never got a code in the session hears nothing of it; the token names only its own app', async () => {
    const { tokens, browser } = await signIn(service, appA, uniqueEmail('only-a'));
    assert.equal((await signOut(browser.jar, tokens.id_token ?? '')).status, 200);
    await waitFor('the logout token at app A', () => receiverA.tokens.length === 1);
    // Everything due was attempted: app A's row is done, and none was ever written for app B.
    await waitFor('app A delivered', async () => (await service.ctx.webhookOutbox.list()).every((row) => row.done));
    assert.equal(receiverB.tokens.length, 0, 'app B got no token');
    assert.ok(!(await service.ctx.webhookOutbox.list()).some((row) => row.endpointId === appB.clientId), 'nor a row for it');
    // A's token shown to B: B's audience check refuses it.
    await assert.rejects(receiverA.verified(service.jwksUrl, service.url, appB.clientId, clock.at), /aud/);
    const [ok] = await receiverA.verified(service.jwksUrl, service.url, appA.clientId, clock.at);
    assert.equal(ok?.payload.sid, idTokenClaims(tokens.id_token ?? '').sid);
  });

  it('every logout token has a fresh jti (the RP drops one it has seen) and expires within minutes', async () => {
    clock.tick();
    receiverA.tokens.length = 0;
    const email = uniqueEmail('replay');
    const first = await signIn(service, appA, email);
    clock.tick();
    const second = await signIn(service, appA, email);
    await signOut(first.browser.jar, first.tokens.id_token ?? '');
    await signOut(second.browser.jar, second.tokens.id_token ?? '');
    await waitFor('two logout tokens', () => receiverA.tokens.length === 2);
    const verified = await receiverA.verified(service.jwksUrl, service.url, appA.clientId, clock.at);
    const jtis = new Set(verified.map((token) => token.payload.jti));
    assert.equal(jtis.size, 2, 'no two tokens share a jti');
    for (const { payload } of verified) assert.ok((payload.exp ?? 0) - (payload.iat ?? 0) <= 120);
    // The same token replayed after its life is refused by any RP that checks exp.
    await assert.rejects(
      receiverA.verified(service.jwksUrl, service.url, appA.clientId, clock.at + 10 * 60 * 1000),
      /exp|maxTokenAge|too old/,
    );
  });
});

describe('logout URIs at registration: another origin, or in the clear', () => {
  let service: TestService;
  let adminKey: string;
  let api: ReturnType<typeof adminApi>;
  before(async () => {
    service = await startTestService();
    adminKey = (await service.ctx.adminKeys.create('ops', 'cli')).key;
    api = adminApi(service.url, adminKey);
  });
  after(() => service.close());

  const client = async (id: string) => (await api('GET', `/clients/${id}`)).body.logout;

  it('a front-channel URI on another origin than the redirect URIs is refused, and nothing changes', async () => {
    const created = await api('POST', '/clients', {
      name: 'Framed',
      origins: [],
      redirectUris: ['https://app.example/cb'],
      logout: { frontchannelLogoutUri: 'https://app.example/fc-logout', frontchannelLogoutSessionRequired: true },
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.clientId;
    const refused = await api('PATCH', `/clients/${id}`, { logout: { frontchannelLogoutUri: 'https://evil.example/steal' } });
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /front-channel logout URI must be on the origin of one of the client's redirect URIs/);
    assert.equal((await client(id)).frontchannelLogoutUri, 'https://app.example/fc-logout', 'unchanged');
    // Nor by moving the redirect URIs away from it.
    assert.equal((await api('PATCH', `/clients/${id}`, { redirectUris: ['https://other.example/cb'] })).status, 400);
    // Nor at creation.
    const atCreation = await api('POST', '/clients', {
      name: 'Framed elsewhere',
      origins: [],
      redirectUris: ['https://app.example/cb'],
      logout: { frontchannelLogoutUri: 'https://app.example.evil.example/fc' },
    });
    assert.equal(atCreation.status, 400);
  });

  it('a logout URI in the clear across a network, with a fragment or relative is refused; loopback http is allowed', async () => {
    const created = await api('POST', '/clients', { name: 'Back', origins: [], redirectUris: ['https://app.example/cb'] });
    const id = created.body.clientId;
    for (const uri of ['http://app.example/logout', 'https://app.example/logout#x', '/logout', 'javascript:alert(1)']) {
      const refused = await api('PATCH', `/clients/${id}`, { logout: { backchannelLogoutUri: uri } });
      assert.equal(refused.status, 400, uri);
    }
    assert.equal((await client(id)).backchannelLogoutUri, null);
    assert.equal((await api('PATCH', `/clients/${id}`, { logout: { backchannelLogoutUri: 'http://127.0.0.1:8080/bcl' } })).status, 204);
    assert.equal((await api('PATCH', `/clients/${id}`, { logout: { backchannelLogoutSessionRequired: true } })).status, 204);
    assert.deepEqual(await client(id), {
      backchannelLogoutUri: 'http://127.0.0.1:8080/bcl',
      backchannelLogoutSessionRequired: true,
      frontchannelLogoutUri: null,
      frontchannelLogoutSessionRequired: false,
    });
    assert.equal((await api('PATCH', `/clients/${id}`, { logout: { backchannelLogoutUri: null } })).status, 204);
    assert.equal((await client(id)).backchannelLogoutUri, null, 'null removes it');
  });
});
