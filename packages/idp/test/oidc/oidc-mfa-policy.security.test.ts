/**
 * Attack: signing in to an app that requires MFA without a second factor, through the hosted
 * pages. The hosted client takes the MFA policy of the app whose pending request it serves, so
 * the sign-in itself asks for enrollment; and the completion checks again, so a hosted code
 * earned under a lenient app's request cannot finish a strict app's request. The hosted API
 * refuses calls that name no live request.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import * as OTPAuth from 'otpauth';
import { createPkcePair } from 'service-web';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  appParams,
  authorize,
  CookieJar,
  complete,
  hostedServiceClient,
  idTokenClaims,
  paramsOf,
  RP_CALLBACK,
  redeem,
  registerApp,
  requestIdOf,
} from '../support/oidc-helpers.js';

describe('the app`s MFA policy on the hosted sign-in', () => {
  let service: TestService;
  const clock = sendClock();
  let lenient: { clientId: string; secretKey?: string };
  let strict: { clientId: string; secretKey?: string };
  before(async () => {
    service = await startTestService({ now: clock.now });
    lenient = await registerApp(service, 'Lenient');
    strict = await registerApp(service, 'Strict', { mfaPolicy: 'required' });
  });
  after(() => service.close());

  /** A new user's hosted sign-in up to the code the hosted client gets (no MFA enrolled). */
  async function hostedCode(jar: CookieJar, location: string | null, email: string) {
    const client = await hostedServiceClient(service, new IDBFactory(), requestIdOf(location), jar);
    const pkce = await createPkcePair();
    const started = await client.authenticate(email, {
      rememberDevice: true,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    assert.equal(started.status, 'OTP_NEEDED');
    await client.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    return { client, pkce, device: await client.verifyDevice({ userid: email }) };
  }

  it('makes a new user enroll a second factor for a strict app, and the app`s ID token says mfa', async () => {
    clock.tick();
    const jar = new CookieJar();
    const rp = await createPkcePair();
    const start = await authorize(service, appParams(strict.clientId, rp), jar);
    const email = uniqueEmail('strict');
    const { client, pkce, device } = await hostedCode(jar, start.location, email);
    assert.equal(device.status, 'MFA_ENROLLMENT_NEEDED');
    clock.tick();
    assert.ok(!(device as { methods: string[] }).methods.includes('email'), 'email is not offered: the address was the first factor');
    // Email as the second factor would prove the address the email code proved a moment ago: refused (one mailbox, one factor).
    const byMail = await client.verifyDevice({ userid: email, mfaMethod: 'email' });
    assert.equal(byMail.status, 'MFA_UNAVAILABLE');
    const started = await client.verifyDevice({ userid: email, mfaMethod: 'totp' });
    assert.equal(started.status, 'FINALIZE_REGISTRATION_NEEDED');
    const secret = OTPAuth.Secret.fromBase32((started as { secret: string }).secret);
    const enrolled = await client.verifyMfa({ userid: email, otp: new OTPAuth.TOTP({ secret }).generate({ timestamp: clock.now() }) });
    assert.equal(enrolled.status, 'SUCCESS');
    const code = enrolled.status === 'SUCCESS' ? enrolled.code : '';
    const done = await complete(service, jar, { request: requestIdOf(start.location), code, codeVerifier: pkce.codeVerifier });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const tokens = await redeem(service, {
      code: paramsOf(done.location).code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: rp.codeVerifier,
      client_id: strict.clientId,
      client_secret: strict.secretKey ?? '',
    });
    assert.deepEqual(idTokenClaims(tokens.body.id_token).amr, ['otp', 'mfa', 'totp']);
  });

  it('refuses a hosted code earned under a lenient app`s request to finish a strict app`s request', async () => {
    clock.tick();
    const jar = new CookieJar();
    const lenientStart = await authorize(service, appParams(lenient.clientId, await createPkcePair()), jar);
    const strictStart = await authorize(service, appParams(strict.clientId, await createPkcePair()), jar);
    const { pkce, device } = await hostedCode(jar, lenientStart.location, uniqueEmail('swap'));
    assert.equal(device.status, 'SUCCESS');
    const swapped = await complete(service, jar, {
      request: requestIdOf(strictStart.location),
      code: device.status === 'SUCCESS' ? device.code : '',
      codeVerifier: pkce.codeVerifier,
    });
    assert.equal(swapped.status, 400);
    assert.equal(swapped.location, undefined);
  });

  it('refuses hosted API calls that name no live request', async () => {
    const start = await authorize(service, appParams(lenient.clientId, await createPkcePair()), new CookieJar());
    const page = await (await fetch(new URL(start.location ?? '', service.url))).text();
    const key = page.match(/data-publishable-key="([^"]+)"/)?.[1] ?? '';
    for (const header of [{}, { 'x-service-authorization-request': 'made-up' }]) {
      const response = await fetch(`${service.url}/v1/authenticate`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: service.url, 'x-service-key': key, ...header },
        body: JSON.stringify({ userid: uniqueEmail('nohdr'), cryptoVersion: 'v1' }),
      });
      assert.equal(response.status, 400);
      assert.equal((await response.json()).code, 'ERR_SESSION_INVALID');
    }
  });
});
