/**
 * "Add a passkey" on the hosted pages: after an email sign-in on /signin the page holds the
 * sign-in (/signin/complete with `hold`), the service says whether to offer a passkey (the user
 * has none for the hosted pages), /signin/passkey/options and /signin/passkey add one for the
 * held sign-in's user, and /signin/continue finishes the sign-in once. "Not now" and a
 * cancelled ceremony continue too. The new passkey then signs in on the hosted page. Software
 * authenticator (webauthn-authenticator.ts); SQLite and, with SERVICE_TEST_DATABASE_URL, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { Paths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { sendClock, type TestService } from '../support/helpers.js';
import {
  type App,
  appParams,
  authorize,
  CookieJar,
  complete,
  idTokenClaims,
  paramsOf,
  RP_CALLBACK,
  redeem,
  registerApp,
  requestIdOf,
} from '../support/oidc-helpers.js';
import {
  addOfferedPasskey,
  heldHostedSignIn,
  hostedPasskeySignIn,
  passkeyToApp,
  signInPost,
  startHostedPasskeyService,
} from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('"Add a passkey" after a hosted sign-in', () => {
  let service: TestService;
  let app: App;
  const clock = sendClock();
  before(async () => {
    service = await startHostedPasskeyService({ now: clock.now });
    app = await registerApp(service, 'Offer App');
  });
  after(() => service.close());

  const continueSignIn = (jar: CookieJar, requestId: string) => signInPost(service, jar)(Paths.signInContinue, { request: requestId });
  const tokensOf = async (location: string, rp: { codeVerifier: string }) => {
    const tokens = await redeem(service, {
      code: paramsOf(location).code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: rp.codeVerifier,
      client_id: app.clientId,
      client_secret: app.secretKey ?? '',
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    return tokens.body;
  };

  it('offers a passkey to a user who has none, adds it for the hosted pages, mails the user, then continues to the app once', async () => {
    const { email, userId, jar, requestId, rp, held } = await heldHostedSignIn(service, app.clientId);
    assert.deepEqual(held, { held: true, passkeyOffer: true });
    const added = await addOfferedPasskey(service, jar, requestId);
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.deepEqual(added.body, { added: true, synced: false });
    // The options: this user, this host, a discoverable credential with user verification.
    assert.equal(added.options.rp.id, 'localhost');
    assert.equal(added.options.user.name, email);
    assert.deepEqual(added.options.authenticatorSelection, {
      residentKey: 'required',
      requireResidentKey: true,
      userVerification: 'required',
    });

    const passkeys = await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId);
    assert.equal(passkeys.length, 1);
    const { events } = await service.ctx.events.list({ userId, type: 'passkey.registered', limit: 5 });
    assert.equal(events.length, 1);
    assert.equal(events[0]?.clientId, HOSTED_CLIENT_ID);
    assert.deepEqual(events[0]?.detail, { synced: false, via: 'hosted_offer' });
    const mails = await service.ctx.mailbox.list(10, email);
    const mail = mails.find((m) => /A passkey was added/.test(m.subject));
    assert.ok(mail, JSON.stringify(mails.map((m) => m.subject)));
    assert.match(mail?.text ?? '', /Offer App/);

    const done = await continueSignIn(jar, requestId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const claims = idTokenClaims((await tokensOf(done.body.location, rp)).id_token);
    assert.equal(claims.email, email);
    assert.ok(!(claims.amr as string[]).includes('hwk'), 'the app`s code is the email sign-in`s');
    const again = await continueSignIn(jar, requestId);
    assert.equal(again.status, 400, 'the app gets its code once');
    assert.equal(again.body.code, 'ERR_SESSION_INVALID');

    // Later, in a browser with no session: the new passkey signs in on the hosted page.
    const later = await passkeyToApp(service, new CookieJar(), app.clientId, added.credential);
    const laterClaims = idTokenClaims((await tokensOf(later.location ?? '', later.rp)).id_token);
    assert.deepEqual(laterClaims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(laterClaims.email, email);
  });

  it('"Not now": the held sign-in continues at once, and no passkey is added', async () => {
    const { userId, jar, requestId, rp, held } = await heldHostedSignIn(service, app.clientId);
    assert.equal(held.passkeyOffer, true);
    const done = await continueSignIn(jar, requestId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    await tokensOf(done.body.location, rp);
    assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId), []);
  });

  it('a cancelled ceremony (options asked, nothing registered) still continues to the app', async () => {
    const { jar, requestId, rp } = await heldHostedSignIn(service, app.clientId);
    const asked = await signInPost(service, jar)(Paths.signInPasskeyOptions, { request: requestId });
    assert.equal(asked.status, 200);
    const done = await continueSignIn(jar, requestId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    await tokensOf(done.body.location, rp);
  });

  it('a refused credential (no user verification) adds nothing, and the sign-in still continues', async () => {
    const { userId, jar, requestId, rp } = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: requestId });
    const { json } = createCredential(asked.body.options, { origin: service.url, uv: false });
    const refused = await post(Paths.signInPasskey, { request: requestId, credential: json });
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'ERR_PASSKEY_INVALID');
    assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId), []);
    const done = await continueSignIn(jar, requestId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    await tokensOf(done.body.location, rp);
  });

  it('offers nothing to a user who has a passkey for the hosted pages (the hold says so, the options are refused)', async () => {
    const first = await heldHostedSignIn(service, app.clientId);
    assert.equal((await addOfferedPasskey(service, first.jar, first.requestId)).status, 200);
    await continueSignIn(first.jar, first.requestId);
    clock.tick(); // past the sign-in code's send spacing
    const second = await heldHostedSignIn(service, app.clientId, { email: first.email });
    assert.deepEqual(second.held, { held: true, passkeyOffer: false });
    const asked = await signInPost(service, second.jar)(Paths.signInPasskeyOptions, { request: second.requestId });
    assert.equal(asked.status, 400);
    assert.equal(asked.body.code, 'ERR_SESSION_INVALID');
    assert.equal((await continueSignIn(second.jar, second.requestId)).status, 200);
  });

  it('offers a passkey after a remembered-browser sign-in too (no code mailed, amr swk)', async () => {
    clock.tick();
    const indexedDB = new IDBFactory();
    const first = await heldHostedSignIn(service, app.clientId, { indexedDB });
    await continueSignIn(first.jar, first.requestId); // "Not now"
    // A new tab without the SSO cookie: the browser's device key signs in.
    const again = await heldHostedSignIn(service, app.clientId, { email: first.email, indexedDB });
    assert.deepEqual(again.held, { held: true, passkeyOffer: true });
    const added = await addOfferedPasskey(service, again.jar, again.requestId);
    assert.equal(added.status, 200, JSON.stringify(added.body));
    const done = await continueSignIn(again.jar, again.requestId);
    assert.deepEqual(idTokenClaims((await tokensOf(done.body.location, again.rp)).id_token).amr, ['swk']);
  });

  it('offers nothing after a passkey sign-in (held: passkeyOffer false, options refused)', async () => {
    clock.tick();
    const owner = await heldHostedSignIn(service, app.clientId);
    const added = await addOfferedPasskey(service, owner.jar, owner.requestId);
    await continueSignIn(owner.jar, owner.requestId);
    const jar = new CookieJar();
    const start = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    const requestId = requestIdOf(start.location);
    const signedIn = await hostedPasskeySignIn(service, jar, requestId, added.credential);
    assert.equal(signedIn.body.status, 'SUCCESS', JSON.stringify(signedIn.body));
    const held = await complete(service, jar, {
      request: requestId,
      code: signedIn.body.code,
      codeVerifier: signedIn.codeVerifier,
      hold: true,
    } as never);
    assert.deepEqual(held.body, { held: true, passkeyOffer: false });
    const asked = await signInPost(service, jar)(Paths.signInPasskeyOptions, { request: requestId });
    assert.equal(asked.status, 400);
    assert.equal(asked.body.code, 'ERR_SESSION_INVALID');
  });

  it('refuses a malformed body with 400 and no state change', async () => {
    const { userId, jar, requestId } = await heldHostedSignIn(service, app.clientId);
    const bad = await signInPost(service, jar)(Paths.signInPasskey, { request: requestId, credential: { id: 'x' } });
    assert.equal(bad.status, 400);
    assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId), []);
    assert.equal((await continueSignIn(jar, requestId)).status, 200, 'the held sign-in is untouched');
  });
});
