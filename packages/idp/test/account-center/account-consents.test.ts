/**
 * The account center's consents (issue 37, issue 39): the third-party applications and agents a
 * user approved (a consent, or live refresh tokens), with what each was granted, when, and when
 * it last got tokens, a self-named one marked unverified; Revoke deletes the consent and ends
 * that application's refresh tokens for the user in one transaction with consent.revoked (and
 * its webhook deliveries), and its next sign-in asks again. On SQLite, and on PostgreSQL when
 * SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { accountAction, accountSession } from '../support/account-helpers.js';
import { NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { answerConsent, consentPage, isConsentPage, redeemAt, startSignIn } from '../support/consent-helpers.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser } from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh, relyingParty } from '../support/oidc-token-helpers.js';

describe('the account center lists and revokes consents', () => {
  let service: TestService;
  let partner: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service } = await startWithApis(clock.now));
    partner = await relyingParty(service, { name: 'Partner <b>Planner</b>', redirectUri: 'https://planner.example/cb' });
    await service.ctx.clients.setThirdParty(partner.clientId, 'yes');
  });
  after(() => service.close());

  it('lists the app with what it was granted; Revoke deletes the consent, kills its refresh token, and the next sign-in asks again', async () => {
    clock.tick();
    const email = uniqueEmail('consents');
    const userId = await userWithRoles(service, email, ['reader']);
    const browser = hostedBrowser(service);
    const asking = { scope: 'openid email offline_access read:notes', extra: { resource: NOTES } };
    const start = await startSignIn(service, partner, email, browser, asking);
    const page = await consentPage(service, browser.jar, start.location);
    const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
    const tokens = await redeemAt(service, partner, allowed.location, start.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));

    const [device] = (await service.ctx.users.devices(userId)).filter((d) => d.removedAt === null);
    const session = await accountSession(service, { userId, deviceId: device?.id ?? '' }, clock.now);
    const account = await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } });
    const html = await account.text();
    const section = html.slice(html.indexOf('id="h-consents"'), html.indexOf('id="h-activity"'));
    assert.match(section, /Partner &lt;b&gt;Planner&lt;\/b&gt;/, 'the app`s name as text');
    assert.match(section, /See your email address/);
    assert.match(section, /Keep you signed in/);
    assert.match(section, /Notes: read:notes/);
    assert.match(section, /Revoke access/);

    const stranger = await relyingParty(service, { name: 'Never allowed', redirectUri: 'https://never.example/cb' });
    assert.equal((await accountAction(service, session, 'consents/revoke', { client: stranger.clientId })).status, 404);
    assert.equal(
      (await accountAction(service, session, 'consents/revoke', { client: partner.clientId }, { csrf: undefined })).status,
      403,
      'no CSRF token, nothing revoked',
    );
    assert.ok(await service.ctx.consents.find(userId, partner.clientId));

    assert.equal((await accountAction(service, session, 'consents/revoke', { client: partner.clientId })).status, 303);
    assert.equal(await service.ctx.consents.find(userId, partner.clientId), undefined);
    const refreshed = await refresh(service, { refresh_token: tokens.body.refresh_token, ...credentials(partner) });
    assert.equal(refreshed.status, 400);
    assert.equal(refreshed.body.error, 'invalid_grant', 'its refresh token is dead');
    const { events } = await service.ctx.events.list({ userId, type: 'consent.revoked', limit: 5 });
    assert.equal(events[0]?.clientId, partner.clientId);
    assert.equal(events[0]?.actor, `user:${userId}`);

    clock.tick();
    const again = await startSignIn(service, partner, email, browser, asking);
    assert.ok(isConsentPage(again.location), `asked again: ${again.location}`);
    const after = await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } });
    assert.doesNotMatch(await after.text(), /id="h-consents"/, 'no consent left to list');
  });

  it('lists a registered agent (name unverified) and a third-party app holding tokens without a consent, with last use; Revoke ends the tokens and reaches a webhook', async () => {
    clock.tick();
    const email = uniqueEmail('approvals');
    const userId = await userWithRoles(service, email, ['reader']);
    const browser = hostedBrowser(service);
    const agentKeys = await service.ctx.clients.create({
      name: 'Terminal Agent',
      origins: [],
      redirectUris: ['http://127.0.0.1/callback'],
      public: true,
      thirdParty: true,
      registrationTokenHash: 'test-hash',
    });
    const agent = { clientId: agentKeys.clientId, redirectUri: 'http://127.0.0.1:45111/callback' };
    const approve = async (rp: RelyingParty) => {
      const start = await startSignIn(service, rp, email, browser, { scope: 'openid email offline_access' });
      const page = await consentPage(service, browser.jar, start.location);
      const allowed = await answerConsent(service, browser.jar, { request: page.request, csrf: page.csrf, decision: 'allow' });
      const tokens = await redeemAt(service, rp, allowed.location, start.codeVerifier);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return tokens.body.refresh_token as string;
    };
    const approvedAt = clock.now();
    await approve(agent);
    clock.tick();
    const partnerToken = await approve(partner);
    // Tokens without a consent (a grant made another way): still listed, and revocable.
    await service.ctx.consents.delete(userId, partner.clientId);
    clock.tick();
    const usedAt = clock.now();
    const refreshed = await refresh(service, { refresh_token: partnerToken, ...credentials(partner) });
    assert.equal(refreshed.status, 200);

    const [device] = (await service.ctx.users.devices(userId)).filter((d) => d.removedAt === null);
    const session = await accountSession(service, { userId, deviceId: device?.id ?? '' }, clock.now);
    const html = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } })).text();
    const section = html.slice(html.indexOf('id="h-consents"'), html.indexOf('id="h-activity"'));
    const minute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    const agentItem = section.slice(section.indexOf(`data-consent="${agent.clientId}"`));
    assert.match(agentItem, /^[\s\S]*?<strong>Terminal Agent<\/strong> <small class="unverified">\(unverified\)<\/small>/);
    assert.ok(agentItem.includes(`Allowed ${minute(approvedAt)}`), 'when it was approved');
    assert.ok(agentItem.includes('Last used '), 'when it last got tokens');
    const partnerItem = section.slice(section.indexOf(`data-consent="${partner.clientId}"`));
    assert.match(partnerItem, /^[\s\S]*?<strong>Partner &lt;b&gt;Planner&lt;\/b&gt;<\/strong> · /, 'an operator`s app: not marked');
    assert.ok(partnerItem.includes(`Last used ${minute(usedAt)}`), 'its refresh is its last use');

    const receiverUrl = 'http://127.0.0.1:9/hook';
    await service.ctx.webhooks.create({ url: receiverUrl, events: ['consent.revoked'] }, 'test');
    assert.equal((await accountAction(service, session, 'consents/revoke', { client: partner.clientId })).status, 303);
    const dead = await refresh(service, { refresh_token: refreshed.body.refresh_token, ...credentials(partner) });
    assert.equal(dead.body.error, 'invalid_grant', 'its refresh token is dead');
    const { events } = await service.ctx.events.list({ userId, type: 'consent.revoked', limit: 5 });
    assert.equal(events[0]?.clientId, partner.clientId);
    assert.equal(events[0]?.detail?.families, 1);
    const deliveries = await service.ctx.db
      .selectFrom('webhook_deliveries')
      .select('payload')
      .where('event_id', '=', events[0]?.id ?? '')
      .execute();
    assert.equal(deliveries.length, 1, 'the webhook delivery was written with the event');
    assert.equal(JSON.parse(deliveries[0]?.payload ?? '{}').type, 'consent.revoked');
    assert.equal(
      (await accountAction(service, session, 'consents/revoke', { client: partner.clientId })).status,
      404,
      'nothing left to revoke',
    );
  });
});
