/**
 * Revoking an approved application from the account center (issue 39): a user's Revoke reaches
 * only their own approval of that application (IDOR: another user's consent and refresh tokens
 * of the same client stay), and only from the account page itself (CSRF). On SQLite, and on
 * PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountAction, accountSession } from '../support/account-helpers.js';
import { answerConsent, consentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, relyingParty } from '../support/oidc-token-helpers.js';

describe('revoking an approved application', () => {
  let service: TestService;
  let partner: RelyingParty;
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ now: clock.now });
    partner = await relyingParty(service, { name: 'Partner Planner', redirectUri: 'https://planner.example/cb' });
    await service.ctx.clients.setThirdParty(partner.clientId, 'yes');
  });
  after(() => service.close());

  /** A user who allowed the partner: their id, refresh token and account session. */
  async function approver() {
    clock.tick();
    const email = uniqueEmail('approver');
    const browser = hostedBrowser(service);
    const start = await startSignIn(service, partner, email, browser, { scope: 'openid email offline_access' });
    const page = await consentPage(service, browser.jar, start.location);
    const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    const tokens = await redeemAt(service, partner, allowed.location, start.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const user = await service.ctx.users.find(email);
    const [device] = (await service.ctx.users.devices(user.id)).filter((d) => d.removedAt === null);
    const session = await accountSession(service, { userId: user.id, deviceId: device?.id ?? '' }, clock.now);
    return { userId: user.id, refreshToken: tokens.body.refresh_token as string, session };
  }

  /** The approval is whole: the consent row, and a refresh token that still works (its successor returned). */
  async function stillApproved(who: { userId: string; refreshToken: string }) {
    assert.ok(await service.ctx.consents.find(who.userId, partner.clientId), 'the consent is still there');
    const refreshed = await refresh(service, { refresh_token: who.refreshToken, ...credentials(partner) });
    assert.equal(refreshed.status, 200, 'the refresh token still works');
    who.refreshToken = refreshed.body.refresh_token;
  }

  it("IDOR: a user revoking the same application touches only their own approval, never another user's", async () => {
    const victim = await approver();
    const attacker = await approver();
    const stranger = await relyingParty(service, { name: 'Never allowed', redirectUri: 'https://never.example/cb' });
    // An app the attacker never approved (the victim's only, or nobody's): 404, nothing changed.
    assert.equal((await accountAction(service, attacker.session, 'consents/revoke', { client: stranger.clientId })).status, 404);
    assert.equal((await accountAction(service, attacker.session, 'consents/revoke', { client: 'https://x.example/c' })).status, 404);
    // The attacker revokes their own approval of the same client: the victim's stays whole.
    assert.equal((await accountAction(service, attacker.session, 'consents/revoke', { client: partner.clientId })).status, 303);
    assert.equal(await service.ctx.consents.find(attacker.userId, partner.clientId), undefined);
    await stillApproved(victim);
    // Nothing the attacker posts names the victim: the session is who acts.
    const again = await accountAction(service, attacker.session, 'consents/revoke', { client: partner.clientId, user: victim.userId });
    assert.equal(again.status, 404, 'nothing of the attacker`s is left, and the victim is not theirs to name');
    await stillApproved(victim);
    const { events } = await service.ctx.events.list({ userId: victim.userId, type: 'consent.revoked', limit: 5 });
    assert.equal(events.length, 0, 'no revocation recorded for the victim');
  });

  it('CSRF: a Revoke without its token, with a wrong or another session`s, or from another origin is refused and changes nothing', async () => {
    const user = await approver();
    const other = await approver();
    const attacks: Record<string, string | undefined>[] = [
      { csrf: undefined },
      { csrf: 'x'.repeat(43) },
      { csrf: other.session.csrfToken },
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ];
    for (const override of attacks) {
      const answer = await accountAction(service, user.session, 'consents/revoke', { client: partner.clientId }, override);
      assert.equal(answer.status, 403, JSON.stringify(override));
    }
    await stillApproved(user);
    assert.equal((await accountAction(service, user.session, 'consents/revoke', { client: partner.clientId })).status, 303);
    assert.equal(await service.ctx.consents.find(user.userId, partner.clientId), undefined, 'the genuine Revoke works');
  });
});
