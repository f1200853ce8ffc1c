/**
 * `sid` and OpenID Connect Back-Channel Logout 1.0: every ID token of an SSO session (code
 * exchange and refresh, every app) names the session's sid; whenever the session ends (a
 * sign-out at one app, a revoked device, "sign out everywhere else", "this wasn't me", an
 * operator disabling or deleting the user) each app that got a code in it is POSTed a logout
 * token through the webhook outbox, verified here with jose against the JWKS as an RP does. A
 * failing app is retried on the outbox's back-off while the sign-out answers at once. The
 * clock is the test's. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { BACKCHANNEL_LOGOUT_EVENT } from '../../src/oidc/backchannel-logout.js';
import { retryDelayMs } from '../../src/webhooks/worker.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { startLogoutReceiver } from '../support/logout-receiver.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, relyingParty, signIn } from '../support/oidc-token-helpers.js';
import { waitFor } from '../support/webhook-receiver.js';

describe('back-channel logout', () => {
  let service: TestService;
  const clock = sendClock();
  let receiverA: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let receiverB: Awaited<ReturnType<typeof startLogoutReceiver>>;
  let appA: RelyingParty;
  let appB: RelyingParty;
  before(async () => {
    service = await startTestService({ now: clock.now, webhookTimings: { pollIntervalMs: 25, requestTimeoutMs: 500 } });
    receiverA = await startLogoutReceiver();
    receiverB = await startLogoutReceiver();
    appA = await relyingParty(service, { name: 'App A', redirectUri: 'https://a.example/cb' });
    appB = await relyingParty(service, { name: 'App B', redirectUri: 'https://b.example/cb' });
    await service.ctx.clients.setAddresses(appA.clientId, { logout: { backchannelLogoutUri: receiverA.url } });
    await service.ctx.clients.setAddresses(appB.clientId, {
      logout: { backchannelLogoutUri: receiverB.url, backchannelLogoutSessionRequired: true },
    });
  });
  beforeEach(() => {
    clock.tick();
    receiverA.tokens.length = 0;
    receiverB.tokens.length = 0;
    receiverA.answer = () => 200;
  });
  after(async () => {
    await receiverA.close();
    await receiverB.close();
    await service.close();
  });

  /** One browser signed in at app A (hosted page), then at app B by SSO: both apps' tokens, one session. */
  async function signedInAtBoth(email = uniqueEmail('bcl')) {
    const atA = await signIn(service, appA, email);
    const atB = await signIn(service, appB, email, { browser: atA.browser });
    const claimsA = idTokenClaims(atA.tokens.id_token ?? '');
    return { email, browser: atA.browser, atA, atB, sid: claimsA.sid as string, sub: claimsA.sub as string, claimsA };
  }

  const logoutAt = (jar: { header(): string }, idTokenHint: string) =>
    fetch(`${service.url}/logout?${new URLSearchParams({ id_token_hint: idTokenHint })}`, {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });

  /** Both apps received a verified logout token naming this session. */
  async function bothTold(session: { sid: string; sub: string }) {
    await waitFor('a logout token at both apps', () => receiverA.tokens.length >= 1 && receiverB.tokens.length >= 1);
    for (const [receiver, app] of [
      [receiverA, appA],
      [receiverB, appB],
    ] as const) {
      const [token] = await receiver.verified(service.jwksUrl, service.url, app.clientId, clock.at);
      assert.equal(token?.payload.sid, session.sid);
      assert.equal(token?.payload.sub, session.sub);
    }
  }

  it('discovery advertises back-channel logout with sessions', async () => {
    const document = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(document.backchannel_logout_supported, true);
    assert.equal(document.backchannel_logout_session_supported, true);
    assert.ok(document.claims_supported.includes('sid'));
  });

  it("every ID token of the session carries its sid: each app's, the code exchange's and the refresh's", async () => {
    const session = await signedInAtBoth();
    assert.match(session.sid, /^sid_[A-Za-z0-9_-]{22}$/);
    assert.equal(idTokenClaims(session.atB.tokens.id_token ?? '').sid, session.sid, 'the SSO sign-in at B is the same session');
    const cookie = [...session.browser.jar.cookies.values()].join(' ');
    assert.ok(!cookie.includes(session.sid.slice(4)), 'the sid is not the cookie');
    const refreshed = await refresh(service, { refresh_token: session.atA.tokens.refresh_token ?? '', ...credentials(appA) });
    assert.equal(refreshed.status, 200);
    assert.equal(idTokenClaims(refreshed.body.id_token).sid, session.sid, 'the refresh keeps it');
    clock.tick();
    const elsewhere = await signedInAtBoth(session.email);
    assert.notEqual(elsewhere.sid, session.sid, 'another browser is another session');
  });

  it('signing out at one app sends both apps a logout token of the OIDC shape, verified against the JWKS', async () => {
    const session = await signedInAtBoth();
    const answer = await logoutAt(session.browser.jar, session.atA.tokens.id_token ?? '');
    assert.equal(answer.status, 200);
    await bothTold(session);
    const [token] = await receiverA.verified(service.jwksUrl, service.url, appA.clientId, clock.at);
    assert.ok(token);
    assert.equal(token.header.typ, 'logout+jwt');
    assert.ok(token.header.kid, 'signed by a published key');
    assert.deepEqual(token.payload.events, { [BACKCHANNEL_LOGOUT_EVENT]: {} });
    assert.equal(token.payload.aud, appA.clientId);
    assert.equal(token.payload.nonce, undefined, 'never a nonce (2.4)');
    assert.match(String(token.payload.jti), /^[A-Za-z0-9_-]{22}$/);
    const { iat = 0, exp = 0 } = token.payload;
    assert.equal(iat, Math.floor(clock.at / 1000));
    assert.ok(exp > iat && exp - iat <= 120, 'a short life');
    assert.equal(receiverA.contentTypes.at(-1), 'application/x-www-form-urlencoded', 'the logout_token form field (2.5)');
  });

  /** Each way a session ends but the sign-out, as the user or an operator takes it. */
  const endings: [string, (session: Awaited<ReturnType<typeof signedInAtBoth>>) => Promise<unknown>][] = [
    ['revoking the device (an operator, the account center)', (s) => service.ctx.users.revokeDevice(s.claimsA.device_id as string, 'cli')],
    [
      '"sign out everywhere else" (the browser API)',
      (s) => service.ctx.deviceService.revokeAll(HOSTED_CLIENT_ID, s.sub, 'dev_another_browser'),
    ],
    [
      '"this wasn\'t me" from the new-device mail',
      async (s) => {
        const mails = await service.ctx.mailbox.list(20, s.email);
        const link = mails.map((m) => m.text.match(/\/devices\/not-me\?t=([^\s"<]+)/)?.[1]).find(Boolean);
        assert.ok(link, 'the new-device mail has its link');
        assert.equal(await service.ctx.notices.revoke(decodeURIComponent(link)), 'revoked');
      },
    ],
    ['an operator disabling the user', (s) => service.ctx.users.disable(s.sub, 'cli')],
    ['an operator deleting the user', (s) => service.ctx.users.delete(s.sub, 'cli')],
  ];
  for (const [name, end] of endings)
    it(`${name} tells every app of the session`, async () => {
      const session = await signedInAtBoth();
      await end(session);
      await bothTold(session);
    });

  it('a failing app is retried on the back-off with a fresh token, and the sign-out never waits for it', async () => {
    receiverA.answer = (index) => (index === 0 ? 'hang' : 200);
    const session = await signedInAtBoth();
    const answer = await logoutAt(session.browser.jar, session.atA.tokens.id_token ?? '');
    assert.equal(answer.status, 200, 'signed out while nothing was delivered yet');
    await waitFor('the timed-out attempt', async () =>
      (await service.ctx.webhookOutbox.list()).some((row) => row.endpointId === appA.clientId && row.lastError?.startsWith('timed out')),
    );
    assert.equal(receiverA.tokens.length, 1, 'no retry before the back-off');
    clock.at += retryDelayMs(1);
    await waitFor('the retry', () => receiverA.tokens.length === 2);
    const [first, second] = await receiverA.verified(service.jwksUrl, service.url, appA.clientId, clock.at);
    assert.equal(second?.payload.sid, session.sid);
    assert.notEqual(first?.payload.jti, second?.payload.jti, 'each attempt is a new token with a fresh jti');
    await waitFor('delivered', async () =>
      (await service.ctx.webhookOutbox.list()).some((row) => row.endpointId === appA.clientId && row.delivered),
    );
  });
});
