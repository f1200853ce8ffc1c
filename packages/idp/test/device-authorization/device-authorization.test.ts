/**
 * The device authorization grant (RFC 8628, issue 39): a device asks for codes, polls while the
 * user has not answered, the user approves on /device in a signed-in browser (no mail), and the
 * device's next poll gets an ID token, an access token and (offline_access) a refresh token,
 * bound to its DPoP key when it sends a proof. Discovery names the endpoint. On SQLite, and on
 * PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import {
  answer,
  confirmationPage,
  DEVICE_CODE_GRANT,
  deviceClient,
  page,
  pollToken,
  signedInBrowser,
  startDevice,
} from '../support/device-helpers.js';
import { currentNonce, dpopKey, dpopProof } from '../support/dpop-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { hostedBrowser, idTokenClaims } from '../support/oidc-helpers.js';
import { register } from '../support/registration-helpers.js';

describe('device authorization grant', () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    service = await startTestService({ now: clock.now, env: { SERVICE_IDP_CLIENT_REGISTRATION: 'open' } });
  });
  after(() => service.close());

  it('discovery and the authorization server metadata name the device authorization endpoint and the grant', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const document = (await (await fetch(service.url + path)).json()) as Record<string, unknown>;
      assert.equal(document.device_authorization_endpoint, `${service.url}/oauth/device_authorization`);
      assert.ok((document.grant_types_supported as string[]).includes(DEVICE_CODE_GRANT));
    }
  });

  it('the device gets codes: a user code of 8 consonants as XXXX-XXXX, the verification URIs, a 10-minute life and a 5-second interval', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client, { scope: 'openid email' });
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(started.verification_uri, `${service.url}/device`);
    assert.equal(started.verification_uri_complete, `${service.url}/device?user_code=${started.user_code}`);
    assert.equal(started.expires_in, 600);
    assert.equal(started.interval, 5);
  });

  it('a client not allowed the grant is unauthorized_client; an unknown scope is invalid_scope', async () => {
    const plain = await service.ctx.clients.create({
      name: 'Web Only',
      origins: [],
      redirectUris: ['https://web.example/cb'],
      public: true,
    });
    const refused = await fetch(`${service.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: plain.clientId }),
    });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { error: string }).error, 'unauthorized_client');
    const client = await deviceClient(service);
    const badScope = await fetch(`${service.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: client.clientId, scope: 'openid admin:everything' }),
    });
    assert.equal(((await badScope.json()) as { error: string }).error, 'invalid_scope');
  });

  it('pending until the user approves on /device in a signed-in browser; then tokens (ID, access, refresh with offline_access) bound to the DPoP key', async () => {
    clock.tick();
    const email = uniqueEmail('device-grant');
    const jar = await signedInBrowser(service, email);
    const client = await deviceClient(service);
    const started = await startDevice(service, client, { scope: 'openid email offline_access', device_name: 'Living room TV' });
    const pending = await pollToken(service, client, started.device_code);
    assert.equal(pending.status, 400);
    assert.equal(pending.body.error, 'authorization_pending');

    const confirm = await confirmationPage(service, jar, started.user_code.toLowerCase().replace('-', ' '));
    assert.equal(confirm.status, 200, confirm.html);
    assert.ok(confirm.html.includes(started.user_code), 'the code to compare');
    assert.ok(confirm.html.includes('Living Room App'));
    assert.ok(confirm.html.includes('Living room TV'));
    assert.ok(confirm.html.includes(email));
    const approved = await answer(service, jar, confirm.csrf, 'approve');
    assert.equal(approved.status, 200, approved.html);

    clock.at += 5_000;
    const key = await dpopKey();
    const nonce = await currentNonce(service.url);
    const proof = await dpopProof(key, { htm: 'POST', htu: `${service.url}/oauth/token`, nonce, iat: Math.floor(clock.at / 1000) });
    const tokens = await pollToken(service, client, started.device_code, { dpop: proof });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.body.token_type, 'DPoP');
    assert.ok(tokens.body.refresh_token, 'offline_access on a remembered browser: a refresh token');
    const claims = idTokenClaims(tokens.body.id_token);
    assert.equal(claims.aud, client.clientId);
    assert.equal(claims.email, email);
    const access = JSON.parse(Buffer.from(tokens.body.access_token.split('.')[1], 'base64url').toString()) as { cnf?: { jkt: string } };
    assert.equal(access.cnf?.jkt, key.jkt);

    const { events } = await service.ctx.events.list({ type: 'device.authorization_approved', limit: 50 });
    assert.ok(events.some((event) => event.clientId === client.clientId));
  });

  it('a browser with no session goes through the hosted sign-in (a mailed code for a new browser) and comes back to the confirmation', async () => {
    clock.tick();
    const email = uniqueEmail('device-new-browser');
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    const browser = hostedBrowser(service);
    const entered = await page(service, browser.jar, '/device', { user_code: started.user_code });
    assert.equal(entered.status, 303);
    const authorized = await page(service, browser.jar, entered.location ?? '');
    assert.ok(authorized.location?.startsWith('/signin?request='), authorized.location ?? '');
    const signedIn = await browser.signIn(authorized.location ?? '', email);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.ok(signedIn.location?.startsWith(`${service.url}/device/callback?`), signedIn.location);
    const back = await page(service, browser.jar, signedIn.location ?? '');
    const confirm = await page(service, browser.jar, back.location ?? '');
    assert.equal(confirm.status, 200, confirm.html);
    const csrf = confirm.html.match(/name="csrf" value="([^"]+)"/)?.[1] ?? '';
    assert.equal((await answer(service, browser.jar, csrf, 'approve')).status, 200);
    clock.at += 5_000;
    const tokens = await pollToken(service, client, started.device_code);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(idTokenClaims(tokens.body.id_token).email, email);
  });

  it('approving a third-party client records the consent the account center lists', async () => {
    clock.tick();
    const email = uniqueEmail('device-consent');
    const jar = await signedInBrowser(service, email);
    const client = await deviceClient(service, { name: 'Partner TV', thirdParty: true });
    const started = await startDevice(service, client, { scope: 'openid email offline_access' });
    const confirm = await confirmationPage(service, jar, started.user_code);
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    const user = await service.ctx.users.find(email);
    const consents = await service.ctx.consents.list(user.id);
    assert.deepEqual(
      consents.map((consent) => [consent.clientId, consent.scope]),
      [[client.clientId, ['email', 'offline_access', 'openid']]],
    );
  });

  it('a client that registers itself with the device_code grant type may start the grant; one that did not may not', async () => {
    const withGrant = await register(service, {
      client_name: 'Terminal Tool',
      redirect_uris: ['http://127.0.0.1/cb'],
      grant_types: ['authorization_code', DEVICE_CODE_GRANT],
    });
    assert.equal(withGrant.status, 201, JSON.stringify(withGrant.body));
    assert.ok(withGrant.body.grant_types.includes(DEVICE_CODE_GRANT));
    const started = await startDevice(service, { clientId: withGrant.body.client_id, redirectUri: 'http://127.0.0.1/cb' });
    assert.match(started.user_code, /^[A-Z]{4}-[A-Z]{4}$/);
    const without = await register(service, { client_name: 'Web Tool', redirect_uris: ['http://127.0.0.1/cb'] });
    assert.ok(!without.body.grant_types.includes(DEVICE_CODE_GRANT));
    const refused = await fetch(`${service.url}/oauth/device_authorization`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ client_id: without.body.client_id }),
    });
    assert.equal(((await refused.json()) as { error: string }).error, 'unauthorized_client');
  });

  it('an operator allows the grant through the admin API (deviceCodeGrant at creation or by PATCH); a machine client cannot have it', async () => {
    const admin = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
    const created = await admin('POST', '/clients', {
      name: 'Kiosk',
      origins: [],
      redirectUris: ['https://kiosk.example/cb'],
      public: true,
      deviceCodeGrant: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.equal((await admin('GET', `/clients/${created.body.clientId}`)).body.deviceCodeGrant, true);
    await startDevice(service, { clientId: created.body.clientId, redirectUri: 'https://kiosk.example/cb' });
    const later = await service.ctx.clients.create({
      name: 'Later',
      origins: [],
      redirectUris: ['https://later.example/cb'],
      public: true,
    });
    assert.equal((await admin('PATCH', `/clients/${later.clientId}`, { deviceCodeGrant: true })).status, 204);
    await startDevice(service, { clientId: later.clientId, redirectUri: 'https://later.example/cb' });
    const machine = await admin('POST', '/clients', { name: 'Batch', origins: [], machine: true, deviceCodeGrant: true });
    assert.equal(machine.status, 400, JSON.stringify(machine.body));
  });

  it('the sweep deletes expired device authorizations', async () => {
    const client = await deviceClient(service);
    const started = await startDevice(service, client);
    const count = async () =>
      Number(
        (
          await service.ctx.db
            .selectFrom('device_authorizations')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await count();
    clock.at += 601_000;
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'expired_token');
    await service.ctx.sweepExpired(clock.at);
    assert.ok((await count()) < before);
    assert.equal((await pollToken(service, client, started.device_code)).body.error, 'invalid_grant');
  });

  it('a confidential client authenticates with its secret at both endpoints; without it, invalid_client', async () => {
    clock.tick();
    const jar = await signedInBrowser(service, uniqueEmail('device-confidential'));
    const client = await deviceClient(service, { confidential: true });
    const started = await startDevice(service, client);
    const confirm = await confirmationPage(service, jar, started.user_code);
    assert.equal((await answer(service, jar, confirm.csrf, 'approve')).status, 200);
    const noSecret = await pollToken(service, { ...client, secretKey: 'sk_wrong' } as typeof client, started.device_code);
    assert.equal(noSecret.status, 401);
    assert.equal(noSecret.body.error, 'invalid_client');
    const tokens = await pollToken(service, client, started.device_code);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  });
});
