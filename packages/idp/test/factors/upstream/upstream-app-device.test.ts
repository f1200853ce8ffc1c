/**
 * "Continue with …" on an application's own page that remembers the browser (issue 26): the
 * result is DEVICE_KEY_NEEDED, and the page finishes the sign-in with its device key
 * (POST /v1/upstream/device) as the core's verifyDevice does: the device is registered through
 * the one finisher (new-device mail, the code bound to it), the same key again is the same
 * device, an application that requires MFA names the device before its step passes, and the
 * link step takes the key too. Real provider (node-oidc-provider); runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { newRawDevice, registerWithMfa, type TestService, uniqueEmail, verifiedRegistration } from '../../support/helpers.js';
import type { TestUpstream } from '../../support/upstream.js';
import { appDevicesOf, claimsFor, rememberedSignIn, upstreamSuite } from './upstream-helpers.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe("an application's page finishes an upstream sign-in with its device key", () => {
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  upstreamSuite((started) => ({ service, upstream, connection } = started));

  const devicesOf = (email: string) => appDevicesOf(service, email);
  const newDeviceMails = async (email: string) =>
    (await service.ctx.mailbox.list(50, email)).filter((m) => /new device/i.test(m.subject)).length;
  const finish = (ticket: unknown, devicePublicKey: object) =>
    service.post(UpstreamPaths.device, { ticket, devicePublicKey }, undefined, { 'user-agent': CHROME });

  it('a new user: DEVICE_KEY_NEEDED, then the key registers the device, the mail is sent and the code is bound to it', async () => {
    const email = uniqueEmail('fed-app-device');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result, verifier } = await rememberedSignIn(service, connection);
    assert.equal(result.status, 'DEVICE_KEY_NEEDED', JSON.stringify(result));
    assert.equal(result.userid, email);
    assert.equal(result.code, undefined, 'no code before the page gives its key');
    assert.equal((await devicesOf(email)).length, 0, 'nothing registered at the callback');

    const key = await newRawDevice();
    const finished = await finish(result.ticket, key.publicJwk);
    assert.equal(finished.status, 200, JSON.stringify(finished.body));
    assert.equal(finished.body.status, 'SUCCESS');
    const devices = await devicesOf(email);
    assert.deepEqual(
      devices.map((d) => d.id),
      [finished.body.deviceId],
    );
    assert.equal(devices[0]?.browser, 'Chrome 131', 'named after the page’s browser');
    assert.equal(await newDeviceMails(email), 1);
    const claims = await claimsFor(service, finished.body.code, verifier);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);
    assert.equal(claims.device_id, finished.body.deviceId);
  });

  it('the same key coming back is the same device: no second registration, no second mail', async () => {
    const email = uniqueEmail('fed-app-again');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const key = await newRawDevice();
    const first = await finish((await rememberedSignIn(service, connection)).result.ticket, key.publicJwk);
    const second = await finish((await rememberedSignIn(service, connection)).result.ticket, key.publicJwk);
    assert.equal(second.body.status, 'SUCCESS', JSON.stringify(second.body));
    assert.equal(second.body.deviceId, first.body.deviceId);
    assert.equal((await devicesOf(email)).length, 1);
    assert.equal(await newDeviceMails(email), 1);
  });

  it('an application that requires MFA: MFA_REQUIRED names the device, which exists once the step passes', async () => {
    const email = uniqueEmail('fed-app-mfa');
    await registerWithMfa(service, email, 'email');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    // Linked first (the account existed), without a key.
    const link = (await rememberedSignIn(service, connection)).result;
    assert.equal(link.status, 'LINK_NEEDED', JSON.stringify(link));
    await service.post(UpstreamPaths.confirmLink, { link: link.link, otp: await service.latestOtp(email) });
    const before = await devicesOf(email);

    const { result, verifier } = await rememberedSignIn(service, connection);
    assert.equal(result.status, 'DEVICE_KEY_NEEDED');
    const finished = await finish(result.ticket, (await newRawDevice()).publicJwk);
    assert.equal(finished.body.status, 'MFA_REQUIRED', JSON.stringify(finished.body));
    const deviceId = finished.body.deviceId;
    assert.match(deviceId, /^dev_/);
    assert.equal((await devicesOf(email)).length, before.length, 'not registered before the second factor');
    await service.post('/v1/mfa/initiate', { userid: email, sessionId: finished.body.sessionId });
    const verified = await service.post('/v1/mfa/verify', {
      userid: email,
      sessionId: finished.body.sessionId,
      otp: await service.latestOtp(email),
    });
    assert.equal(verified.body.status, 'SUCCESS', JSON.stringify(verified.body));
    assert.equal(verified.body.deviceId, deviceId, 'the id the page kept its key under');
    assert.ok((await devicesOf(email)).some((d) => d.id === deviceId));
    const claims = await claimsFor(service, verified.body.code, verifier);
    assert.equal(claims.device_id, deviceId);
    assert.ok(claims.amr.includes('fed') && claims.amr.includes('mfa'), claims.amr.join(' '));
  });

  it('the link step of an application takes the device key: the account proven, the device registered with it', async () => {
    const email = uniqueEmail('fed-app-link');
    await verifiedRegistration(service, email);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result, verifier } = await rememberedSignIn(service, connection);
    assert.equal(result.status, 'LINK_NEEDED', JSON.stringify(result));
    const before = (await devicesOf(email)).length;
    const confirmed = await service.post(
      UpstreamPaths.confirmLink,
      { link: result.link, otp: await service.latestOtp(email), devicePublicKey: (await newRawDevice()).publicJwk },
      undefined,
      { 'user-agent': CHROME },
    );
    assert.equal(confirmed.body.status, 'SUCCESS', JSON.stringify(confirmed.body));
    assert.equal((await devicesOf(email)).length, before + 1);
    const claims = await claimsFor(service, confirmed.body.code, verifier);
    assert.equal(claims.device_id, confirmed.body.deviceId);
    assert.deepEqual(claims.amr, ['fed', 'otp']);
  });
});
