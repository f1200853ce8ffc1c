/**
 * A factor defined only in the test tree (test/support/fixture-factor.ts), given to the
 * composition as a contributor's factor would be (ContextOptions.extraFactors), with no other
 * product file changed (docs/architecture.md, "How to add a factor"): its route answers; it is in the enrollment
 * list the hosted page gets, labelled in the page's language; the account page offers it and
 * names it once in force; and a sign-in through it is counted in the metrics with its own label.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { accountAction, accountSession, accountSuite, accountUser, stepSession } from '../support/account-helpers.js';
import { FIXTURE_CODE, FIXTURE_LABELS, FIXTURE_PATH, fixtureCodeFactor } from '../support/fixture-factor.js';
import { newRawDevice, type TestService, uniqueEmail, verifiedRegistration } from '../support/helpers.js';
import { appParams, authorize, CookieJar, registerApp } from '../support/oidc-helpers.js';

describe('a factor registered through the composition only', () => {
  let service: TestService;
  const { clock } = accountSuite(
    (started) => {
      service = started;
    },
    { extraFactors: [fixtureCodeFactor], env: { SERVICE_IDP_METRICS_PORT: '0' } },
  );

  const accountPage = async (session: string, language: string) =>
    (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session}`, 'accept-language': language } })).text();

  it('answers its own route under the browser API', async () => {
    const shown = await service.post(FIXTURE_PATH, {});
    assert.equal(shown.status, 200, JSON.stringify(shown.body));
    assert.deepEqual(shown.body, { code: FIXTURE_CODE });
  });

  it('is a line of the account page: offered to change to, then named as the factor in force', async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const before = await accountPage(session.session, 'de');
    assert.match(before, /<input type="radio" id="mfa-fixture-code" name="method" value="fixture-code">/);
    assert.ok(before.includes(`<label for="mfa-fixture-code">${FIXTURE_LABELS.de}</label>`), 'labelled in the page’s language');

    const started = await accountAction(service, session, 'mfa/change', { method: 'fixture-code' });
    assert.equal(started.status, 200);
    const wrong = await accountAction(service, session, 'mfa/verify', {
      session: stepSession(await started.clone().text()),
      code: '000000',
    });
    assert.notEqual((await service.ctx.mfa.methodOf(user.userId))?.method, 'fixture-code', 'a wrong code sets nothing');
    await wrong.body?.cancel();
    const done = await accountAction(service, session, 'mfa/verify', { session: stepSession(await started.text()), code: FIXTURE_CODE });
    assert.equal(done.status, 200);
    assert.equal((await service.ctx.mfa.methodOf(user.userId))?.method, 'fixture-code');
    assert.ok((await accountPage(session.session, 'es')).includes(FIXTURE_LABELS.es), 'the factor in force, in Spanish');
  });

  it('is in the enrollment list the hosted page gets, labelled in its language; a sign-in through it is counted under its label', async () => {
    await service.ctx.clients.setMfaPolicy(service.clientId, 'required');
    const email = uniqueEmail('fixture-factor');
    const device = await newRawDevice();
    const deviceToken = await verifiedRegistration(service, email);
    const offered = await service.post('/v1/devices', { userid: email, deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(offered.body.status, 'MFA_ENROLLMENT_NEEDED', JSON.stringify(offered.body));
    // After the emailed code the email method is no second factor (sign-in/pipeline.ts countsAsSecond).
    assert.deepEqual(offered.body.methods, ['sms', 'totp', 'passkey', 'fixture-code']);

    // The hosted page's script labels each method with its `hosted.method.<method>` message, in the page's language.
    const jar = new CookieJar();
    const app = await registerApp(service, 'Fixture Wiki');
    const redirected = await authorize(service, appParams(app.clientId, await createPkcePair(), { ui_locales: 'fr' }), jar);
    const html = await (await fetch(new URL(redirected.location ?? '', service.url), { headers: { cookie: jar.header() } })).text();
    const messages = JSON.parse(html.match(/<script type="application\/json" id="service-messages">(.*?)<\/script>/s)?.[1] ?? '{}');
    assert.equal(messages['hosted.method.fixture-code'], FIXTURE_LABELS.fr);

    const chosen = await service.post('/v1/devices', {
      userid: email,
      deviceToken,
      devicePublicKey: device.publicJwk,
      mfaMethod: 'fixture-code',
    });
    assert.equal(chosen.body.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(chosen.body));
    assert.equal(chosen.body.method, 'fixture-code');
    const { code } = (await service.post(FIXTURE_PATH, {})).body as { code: string };
    const verified = await service.post('/v1/mfa/verify', { userid: email, sessionId: chosen.body.sessionId, otp: code });
    assert.equal(verified.status, 200, JSON.stringify(verified.body));
    assert.equal(verified.body.status, 'SUCCESS');

    const metrics = await (await fetch(service.metricsUrl as string)).text();
    assert.match(metrics, /^service_idp_sign_in_second_factors_total\{method="fixture_code"\} 1$/m);
    assert.match(metrics, /^service_idp_sign_ins_total\{outcome="succeeded",method="otp"\} \d+$/m, 'its first factor, the emailed code');
  });
});
