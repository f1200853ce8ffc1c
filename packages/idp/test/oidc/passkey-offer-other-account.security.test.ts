/**
 * Threat: registering a passkey onto another user's account through the hosted pages' "Add a
 * passkey" offer. An attacker who learns a victim's pending request id (it is in the /signin
 * URL: history, a shoulder, a shared screen) tries to add their own authenticator to the
 * victim's held sign-in from their own browser; or, on one browser with two held sign-ins (two
 * users, two tabs), a challenge made for one user's request is sent for the other's; or a
 * request still mid-sign-in (nothing held yet) is used. Each is refused (ERR_SESSION_INVALID),
 * nothing is stored, and the victim's sign-in still continues. Also: an offer's challenge cannot
 * be spent by the device-proof registration route, nor one of that route's by the offer.
 * SQLite and, with SERVICE_TEST_DATABASE_URL, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { sendClock, type TestService } from '../support/helpers.js';
import { appParams, authorize, CookieJar, registerApp, requestIdOf } from '../support/oidc-helpers.js';
import { heldHostedSignIn, hostedPost, signInPost, startHostedPasskeyService } from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('passkey onto another user`s account through the hosted offer', () => {
  let service: TestService;
  let app: { clientId: string };
  const clock = sendClock();
  before(async () => {
    service = await startHostedPasskeyService({ now: clock.now });
    app = await registerApp(service, 'App');
  });
  after(() => service.close());

  const noPasskeys = async (userId: string) => assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId), []);
  const continues = async (jar: CookieJar, requestId: string) =>
    assert.equal((await signInPost(service, jar)(Paths.signInContinue, { request: requestId })).status, 200);

  it('a stolen request id, from the attacker`s browser: no options, no registration (with the attacker`s own challenge either)', async () => {
    const victim = await heldHostedSignIn(service, app.clientId);
    const attacker = await heldHostedSignIn(service, app.clientId);
    const fromAttacker = signInPost(service, attacker.jar);
    const asked = await fromAttacker(Paths.signInPasskeyOptions, { request: victim.requestId });
    assert.equal(asked.status, 400);
    assert.equal(asked.body.code, 'ERR_SESSION_INVALID');
    // The attacker's options for their own held sign-in, sent for the victim's request.
    const own = await fromAttacker(Paths.signInPasskeyOptions, { request: attacker.requestId });
    assert.equal(own.status, 200);
    const { json } = createCredential(own.body.options, { origin: service.url });
    const added = await fromAttacker(Paths.signInPasskey, { request: victim.requestId, credential: json });
    assert.equal(added.status, 400);
    assert.equal(added.body.code, 'ERR_SESSION_INVALID');
    // With no cookie at all.
    const bare = await signInPost(service, new CookieJar())(Paths.signInPasskey, { request: victim.requestId, credential: json });
    assert.equal(bare.status, 400);
    await noPasskeys(victim.userId);
    await continues(victim.jar, victim.requestId);
  });

  it('one browser, two held sign-ins (two users): a challenge made for one user`s request registers nothing on the other`s', async () => {
    const jar = new CookieJar();
    const first = await heldHostedSignIn(service, app.clientId, { jar });
    const second = await heldHostedSignIn(service, app.clientId, { jar });
    const post = signInPost(service, jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: first.requestId });
    assert.equal(asked.status, 200);
    const { json } = createCredential(asked.body.options, { origin: service.url });
    const swapped = await post(Paths.signInPasskey, { request: second.requestId, credential: json });
    assert.equal(swapped.status, 400);
    assert.equal(swapped.body.code, 'ERR_SESSION_INVALID');
    await noPasskeys(first.userId);
    await noPasskeys(second.userId);
    // Refused before it was spent: the first user's own request still takes it.
    const own = await post(Paths.signInPasskey, { request: first.requestId, credential: json });
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assert.equal((await service.ctx.passkeys.list(HOSTED_CLIENT_ID, first.userId)).length, 1);
    await noPasskeys(second.userId);
  });

  it('a request still mid-sign-in (nothing held) offers nothing', async () => {
    const jar = new CookieJar();
    const start = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    const asked = await signInPost(service, jar)(Paths.signInPasskeyOptions, { request: requestIdOf(start.location) });
    assert.equal(asked.status, 400);
    assert.equal(asked.body.code, 'ERR_SESSION_INVALID');
  });

  it('an offer`s challenge is not spent by the device-proof registration route (and the offer still takes it)', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    const { json } = createCredential(asked.body.options, { origin: service.url });
    const elsewhere = await hostedPost(service, held.requestId, held.jar)(Paths.passkeyRegistration, { credential: json });
    assert.equal(elsewhere.status, 400, JSON.stringify(elsewhere.body));
    assert.equal(elsewhere.body.code, 'ERR_SESSION_INVALID');
    await noPasskeys(held.userId);
    assert.equal((await post(Paths.signInPasskey, { request: held.requestId, credential: json })).status, 200);
  });
});
