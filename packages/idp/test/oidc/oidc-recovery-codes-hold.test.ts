/**
 * Recovery codes on the hosted pages (issue 15): an MFA enrollment finished on /signin issues
 * ten codes the page must show before going back to the app. The hosted code lives
 * AUTH_CODE_TTL_SECONDS, too short to wait on a reading user, so the page posts it with
 * `hold: true` at once (the sign-in is held on the pending request) and /signin/continue
 * finishes later: the app's code is minted only then. Only the browser that made the request,
 * from our origin, once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import * as OTPAuth from 'otpauth';
import { createPkcePair } from 'service-web';
import { AUTH_CODE_TTL_SECONDS } from '../../src/defaults.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  authorize,
  CookieJar,
  complete,
  hostedServiceClient,
  paramsOf,
  RP_CALLBACK,
  redeem,
  registerApp,
  requestIdOf,
} from '../support/oidc-helpers.js';

describe('hosted sign-in held while the recovery codes are shown', () => {
  let service: TestService;
  const clock = sendClock();
  let rp: { clientId: string; secretKey?: string };
  before(async () => {
    service = await startTestService({ now: clock.now });
    rp = await registerApp(service, 'Strict Portal', { mfaPolicy: 'required' });
  });
  after(() => service.close());

  /** /authorize, then the hosted page's calls up to an email-MFA enrollment: its hosted code and recovery codes. */
  async function enrollOnHostedPage(email: string) {
    const jar = new CookieJar();
    const rpPkce = await createPkcePair();
    const start = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: RP_CALLBACK,
        scope: 'openid email',
        state: 'st-rc',
        code_challenge: rpPkce.codeChallenge,
        code_challenge_method: 'S256',
      },
      jar,
    );
    const requestId = requestIdOf(start.location);
    const client = await hostedServiceClient(service, new IDBFactory(), requestId, jar);
    const pkce = await createPkcePair();
    const started = await client.authenticate(email, {
      rememberDevice: true,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    assert.equal(started.status, 'OTP_NEEDED');
    assert.equal((await client.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) })).status, 'SUCCESS');
    assert.equal((await client.verifyDevice({ userid: email })).status, 'MFA_ENROLLMENT_NEEDED');
    // An authenticator app: email after the email code would be the same mailbox, no second factor for a strict app.
    const finalize = await client.verifyDevice({ userid: email, mfaMethod: 'totp' });
    assert.equal(finalize.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(finalize));
    const secret = OTPAuth.Secret.fromBase32((finalize as { secret: string }).secret);
    const enrolled = await client.verifyMfa({ userid: email, otp: new OTPAuth.TOTP({ secret }).generate({ timestamp: clock.now() }) });
    assert.equal(enrolled.status, 'SUCCESS', JSON.stringify(enrolled));
    if (enrolled.status !== 'SUCCESS') throw new Error('not enrolled');
    assert.equal(enrolled.recoveryCodes?.length, 10);
    return { jar, requestId, rpPkce, hosted: { request: requestId, code: enrolled.code, codeVerifier: pkce.codeVerifier } };
  }

  const continueSignIn = async (jar: CookieJar, request: string, origin = service.url) => {
    const response = await fetch(`${service.url}/signin/continue`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, cookie: jar.header() },
      body: JSON.stringify({ request }),
    });
    jar.store(response);
    return { status: response.status, body: await response.json() };
  };

  it('redeems the hosted code at once, and mints the app`s code only at /signin/continue, long after the hosted code`s TTL', async () => {
    clock.tick();
    const email = uniqueEmail('hold');
    const { jar, requestId, rpPkce, hosted } = await enrollOnHostedPage(email);
    const held = await complete(service, jar, { ...hosted, hold: true } as unknown as Record<string, string>);
    assert.equal(held.status, 200, JSON.stringify(held.body));
    assert.deepEqual(held.body, { held: true, passkeyOffer: true }, 'a user with no passkey for the hosted pages is offered one');
    assert.equal(jar.cookies.has('service_session'), false, 'no session before the user continues');

    // The user reads and copies for far longer than any code lives.
    clock.at += AUTH_CODE_TTL_SECONDS * 5 * 1000;
    const done = await continueSignIn(jar, requestId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const params = paramsOf(done.body.location);
    assert.equal(params.state, 'st-rc');
    assert.ok(jar.cookies.has('service_session'), 'the remembered device got its session');
    const tokens = await redeem(service, {
      code: params.code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: rpPkce.codeVerifier,
      client_id: rp.clientId,
      client_secret: rp.secretKey ?? '',
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));

    // Once only.
    const again = await continueSignIn(jar, requestId);
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'ERR_SESSION_INVALID');
  });

  it('refuses to continue a request that holds nothing, from another origin, or without the browser`s binding cookie', async () => {
    clock.tick();
    const { jar, requestId, hosted } = await enrollOnHostedPage(uniqueEmail('hold-refused'));
    const notHeld = await continueSignIn(jar, requestId);
    assert.equal(notHeld.status, 400);
    assert.equal(notHeld.body.code, 'ERR_SESSION_INVALID');

    assert.equal((await complete(service, jar, { ...hosted, hold: true } as unknown as Record<string, string>)).status, 200);
    const crossSite = await continueSignIn(jar, requestId, 'https://evil.example');
    assert.equal(crossSite.status, 400);
    assert.equal(crossSite.body.code, 'ERR_REQUEST_INVALID');
    const otherBrowser = await continueSignIn(new CookieJar(), requestId);
    assert.equal(otherBrowser.status, 400);
    assert.equal(otherBrowser.body.code, 'ERR_SESSION_INVALID');
    // The hosted code was spent by the hold: it cannot finish the request a second time.
    const replay = await complete(service, jar, hosted);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.code, 'ERR_SESSION_INVALID');
    assert.equal((await continueSignIn(jar, requestId)).status, 200, 'the held sign-in still continues');
  });
});
