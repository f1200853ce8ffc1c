/**
 * Threat: adding a passkey after the hold expired. A held sign-in lives as long as its pending
 * request (AUTHORIZATION_REQUEST_TTL_SECONDS from /authorize) and each ceremony's challenge
 * PASSKEY_CEREMONY_TTL_SECONDS: a page left open (an unattended, signed-in browser) must not
 * let anyone add a passkey, a long-lived way in, later. Options are refused once the request
 * has expired; a registration whose challenge is still live but whose request has expired is
 * refused; so is one whose challenge expired while the request still lives; and a user
 * disabled meanwhile gets nothing. Nothing is stored. Frozen clock; SQLite and, with
 * SERVICE_TEST_DATABASE_URL, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, PASSKEY_CEREMONY_TTL_SECONDS } from '../../src/defaults.js';
import { sendClock, type TestService } from '../support/helpers.js';
import { registerApp } from '../support/oidc-helpers.js';
import { heldHostedSignIn, signInPost, startHostedPasskeyService } from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('adding a passkey after the hold expired', () => {
  let service: TestService;
  let app: { clientId: string };
  const clock = sendClock();
  before(async () => {
    service = await startHostedPasskeyService({ now: clock.now });
    app = await registerApp(service, 'App');
  });
  after(() => service.close());

  const none = async (userId: string) => assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId), []);
  const refusedAsExpired = (answer: { status: number; body: { code?: string } }) => {
    assert.equal(answer.status, 400, JSON.stringify(answer.body));
    assert.equal(answer.body.code, 'ERR_SESSION_INVALID');
  };

  it('no options once the pending request has expired (nor a continue)', async () => {
    clock.tick();
    const held = await heldHostedSignIn(service, app.clientId);
    clock.at += AUTHORIZATION_REQUEST_TTL_SECONDS * 1000 + 1;
    const post = signInPost(service, held.jar);
    refusedAsExpired(await post(Paths.signInPasskeyOptions, { request: held.requestId }));
    refusedAsExpired(await post(Paths.signInContinue, { request: held.requestId }));
  });

  it('a registration with a live challenge, after its request expired, is refused', async () => {
    clock.tick();
    const start = clock.at;
    const held = await heldHostedSignIn(service, app.clientId);
    // The options just before the request's end: their challenge outlives it.
    clock.at = start + AUTHORIZATION_REQUEST_TTL_SECONDS * 1000 - 1000;
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    assert.equal(asked.status, 200);
    clock.at += 2000;
    refusedAsExpired(
      await post(Paths.signInPasskey, {
        request: held.requestId,
        credential: createCredential(asked.body.options, { origin: service.url }).json,
      }),
    );
    await none(held.userId);
  });

  it('a registration whose challenge expired is refused while the request still lives, which still continues', async () => {
    clock.tick();
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    clock.at += PASSKEY_CEREMONY_TTL_SECONDS * 1000 + 1;
    refusedAsExpired(
      await post(Paths.signInPasskey, {
        request: held.requestId,
        credential: createCredential(asked.body.options, { origin: service.url }).json,
      }),
    );
    await none(held.userId);
    assert.equal((await post(Paths.signInContinue, { request: held.requestId })).status, 200);
  });

  it('a user disabled after the hold gets neither options nor a passkey', async () => {
    clock.tick();
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    await service.ctx.users.disable(held.email, 'test');
    refusedAsExpired(await post(Paths.signInPasskeyOptions, { request: held.requestId }));
    refusedAsExpired(
      await post(Paths.signInPasskey, {
        request: held.requestId,
        credential: createCredential(asked.body.options, { origin: service.url }).json,
      }),
    );
    await none(held.userId);
  });
});
