/**
 * Threats to the device authorization grant (RFC 8628 5, issue 39), each named: user codes
 * guessed, device codes polled too fast, used twice (at once too), used by another client,
 * expired or denied, and the remote phishing of verification_uri_complete (a link that only
 * fills the form, a confirmation that says who asks what, an approval that takes a same-origin
 * POST with this browser's token). On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  answer,
  confirmationPage,
  deviceClient,
  page,
  pollToken,
  postForm,
  signedInBrowser,
  startDevice,
} from '../support/device-helpers.js';
import { currentNonce, dpopKey, dpopProof } from '../support/dpop-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { CookieJar } from '../support/oidc-helpers.js';

/** A fresh client address (the service trusts the loopback proxy), so each case has its own code-try budget. */
const address = () => ({ 'x-forwarded-for': `198.51.100.${randomInt(1, 255)}` });

describe('device authorization grant threats', () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ now: clock.now, env: { SERVICE_IDP_TRUST_PROXY: '127.0.0.1' } });
  });
  after(() => service.close());

  /** A device's codes, and a signed-in browser at the confirmation page for them. */
  async function atConfirmation(options: Parameters<typeof deviceClient>[1] = {}, params: Record<string, string> = {}) {
    clock.tick();
    const email = uniqueEmail('device-threat');
    const jar = await signedInBrowser(service, email);
    const client = await deviceClient(service, options);
    const started = await startDevice(service, client, params);
    const confirm = await confirmationPage(service, jar, started.user_code, address());
    assert.equal(confirm.status, 200, confirm.html);
    return { jar, client, started, confirm, email };
  }

  it('user-code brute force from one address: every try counts before the code is checked; past 10 even the right code is refused (429) and leads nowhere', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    const from = { 'x-forwarded-for': '203.0.113.7' };
    for (let i = 0; i < 10; i++) {
      const wrong = await page(service, new CookieJar(), '/device', { user_code: 'BBBB-BBBB' }, service.url, from);
      assert.equal(wrong.status, 400, `try ${i + 1}`);
    }
    const right = await page(service, new CookieJar(), '/device', { user_code: started.user_code }, service.url, from);
    assert.equal(right.status, 429);
    assert.equal(right.location, null);
    assert.ok(right.headers.get('retry-after'));
  });

  it('user-code brute force from one browser over many addresses: its cookie has a budget of its own', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    const jar = new CookieJar();
    await page(service, jar, '/device');
    for (let i = 0; i < 10; i++) {
      const wrong = await page(service, jar, '/device', { user_code: 'CCCC-CCCC' }, service.url, { 'x-forwarded-for': `192.0.2.${i + 1}` });
      assert.equal(wrong.status, 400, `try ${i + 1}`);
    }
    const right = await page(service, jar, '/device', { user_code: started.user_code }, service.url, { 'x-forwarded-for': '192.0.2.99' });
    assert.equal(right.status, 429);
  });

  it('device code polled faster than the interval: slow_down, and the interval grows by 5 seconds each time', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'authorization_pending');
    clock.at += 1_000;
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'slow_down');
    // The interval is now 10 s from that poll: 9 s later is still too soon (and makes it 15).
    clock.at += 9_000;
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'slow_down');
    clock.at += 15_000;
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'authorization_pending');
  });

  it('device code used twice: the second token request is invalid_grant', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    assert.equal((await pollToken(service, client, started.device_code)).status, 200);
    const again = await pollToken(service, client, started.device_code);
    assert.equal(again.status, 400);
    assert.equal(again.body.error, 'invalid_grant');
  });

  it('device code used twice concurrently: of eight polls at once exactly one gets tokens', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    const polls = await Promise.all(Array.from({ length: 8 }, () => pollToken(service, client, started.device_code)));
    assert.equal(polls.filter((poll) => poll.status === 200).length, 1, JSON.stringify(polls.map((poll) => poll.body)));
    assert.ok(polls.filter((poll) => poll.status !== 200).every((poll) => poll.body.error === 'invalid_grant'));
  });

  it('device code used by another client: invalid_grant, and the code stays its own client`s', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    const thief = await deviceClient(service, { name: 'Thief' });
    const stolen = await pollToken(service, thief, started.device_code);
    assert.equal(stolen.status, 400);
    assert.equal(stolen.body.error, 'invalid_grant');
    assert.equal((await pollToken(service, client, started.device_code)).status, 200);
  });

  it('device code of a client not allowed the grant: unauthorized_client, nothing looked at', async () => {
    const plain = await service.ctx.clients.create({ name: 'Web Only', origins: [], redirectUris: ['https://w.example/cb'], public: true });
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    const refused = await postForm(`${service.url}/oauth/token`, {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: started.device_code,
      client_id: plain.clientId,
    });
    assert.equal(refused.body.error, 'unauthorized_client');
  });

  it('device code of a client that requires DPoP polled without a proof: invalid_dpop_proof, and the approval is not spent', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    await service.ctx.clients.setDpop(client.clientId, 'required');
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    const unproven = await pollToken(service, client, started.device_code);
    assert.equal(unproven.status, 400);
    assert.equal(unproven.body.error, 'invalid_dpop_proof');
    const key = await dpopKey();
    const nonce = await currentNonce(service.url);
    const proof = await dpopProof(key, { htm: 'POST', htu: `${service.url}/oauth/token`, nonce, iat: Math.floor(clock.at / 1000) });
    const proven = await pollToken(service, client, started.device_code, { dpop: proof });
    assert.equal(proven.status, 200, JSON.stringify(proven.body));
    assert.equal(proven.body.token_type, 'DPoP');
  });

  it('expired device code: expired_token, and its user code no longer opens anything', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    clock.at += 601_000;
    const expired = await pollToken(service, client, started.device_code);
    assert.equal(expired.status, 400);
    assert.equal(expired.body.error, 'expired_token');
    const entered = await page(service, new CookieJar(), '/device', { user_code: started.user_code }, service.url, address());
    assert.equal(entered.status, 400);
  });

  it('denied: access_denied to the device, no tokens ever, and the denial is recorded', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    assert.equal((await answer(service, jar, confirm.csrf, 'deny')).status, 200);
    const denied = await pollToken(service, client, started.device_code);
    assert.equal(denied.status, 400);
    assert.equal(denied.body.error, 'access_denied');
    // An answer is final: the same form cannot approve it afterwards.
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 400);
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'access_denied');
    const { events } = await service.ctx.events.list({ type: 'device.authorization_denied', limit: 50 });
    assert.ok(events.some((event) => event.clientId === client.clientId));
  });

  it('verification_uri_complete phishing: the link only fills the form, no GET approves, and the confirmation says who asks what, the code to compare, the device as declared and where from', async () => {
    clock.tick();
    const jar = await signedInBrowser(service, uniqueEmail('device-phished'));
    // An attacker's own registered client, named to look like something else.
    const registered = await service.ctx.clients.create({
      name: 'Acme Notes',
      origins: [],
      redirectUris: ['http://127.0.0.1/cb'],
      public: true,
      thirdParty: true,
      deviceCodeGrant: true,
      registrationTokenHash: 'not-a-real-hash',
    });
    const client = { clientId: registered.clientId, redirectUri: 'http://127.0.0.1/cb' };
    const started = await startDevice(service, client, { scope: 'openid email offline_access', device_name: 'Your bank <b>teller</b>' });
    const link = await page(service, jar, started.verification_uri_complete);
    assert.equal(link.status, 200);
    assert.ok(link.html.includes(`value="${started.user_code}"`), 'prefilled');
    assert.ok(!link.html.includes('name="decision"'), 'no approval on the link’s page');
    // Every GET of the flow, the confirmation included, leaves the device waiting.
    const confirm = await confirmationPage(service, jar, started.user_code, address());
    await page(service, jar, '/device/confirm');
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'authorization_pending');
    assert.ok(confirm.html.includes(started.user_code), 'the code to compare with the device');
    assert.ok(confirm.html.includes('Acme Notes'));
    assert.match(confirm.html, /unverified/);
    assert.ok(confirm.html.includes('Keep you signed in'), 'what it asks');
    assert.ok(confirm.html.includes('Your bank &lt;b&gt;teller&lt;/b&gt;'), 'the device’s own name, as text');
    assert.match(confirm.html, /declared by the device, not verified/);
    assert.match(confirm.html, /Requested from the address 127\.0\.0\.1/);
    assert.match(confirm.html, /Never enter a code that someone sent you/);
  });

  it('CSRF on the approve POST: another origin, no verification cookie, a wrong token or another browser`s token are refused, and nothing is approved', async () => {
    const { jar, client, started, confirm } = await atConfirmation();
    const other = await atConfirmation();
    assert.equal((await answer(service, jar, confirm.csrf, 'approve', 'https://evil.example')).status, 400);
    assert.equal((await answer(service, new CookieJar(), confirm.csrf, 'approve')).status, 400);
    assert.equal((await answer(service, jar, 'forged', 'approve')).status, 400);
    assert.equal((await answer(service, jar, other.confirm.csrf, 'approve')).status, 400);
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'authorization_pending');
    // The real form still works.
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
  });

  it('a device name with bidirectional overrides is refused at the endpoint (it could reorder what the page says)', async () => {
    const client = await deviceClient(service);
    const refused = await postForm(`${service.url}/oauth/device_authorization`, {
      client_id: client.clientId,
      device_name: 'TV \u202eevil',
    });
    assert.equal(refused.status, 400);
    assert.equal(refused.body.error, 'invalid_request');
  });
});
