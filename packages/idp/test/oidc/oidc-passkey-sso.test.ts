/**
 * A passkey sign-in on the hosted pages (issue 15): it continues the pending authorization
 * request, its code carries a passkey's amr and acr, and it opens the hosted SSO session bound
 * to the passkey, so a second app signs in without a prompt until the passkey is revoked, the
 * user disabled, "sign out everywhere else" or /logout. An app that does not count a passkey as
 * MFA gets its second factor. Software authenticator (webauthn-authenticator.ts); runs on SQLite
 * and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { ACR } from '../../src/oidc/acr.js';
import { sessionCookieName } from '../../src/oidc/routes.js';
import type { TestService } from '../support/helpers.js';
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
  hostedPasskeySignIn,
  hostedPost,
  hostedUserWithPasskey,
  passkeyToApp,
  startHostedPasskeyService,
} from '../support/oidc-passkey-helpers.js';

describe('passkeys on the hosted sign-in pages', () => {
  let service: TestService;
  let first: App;
  let second: App;
  let strict: App;
  before(async () => {
    service = await startHostedPasskeyService();
    first = await registerApp(service, 'First');
    second = await registerApp(service, 'Second');
    strict = await registerApp(service, 'Strict', { passkeyMfa: 'no' });
  });
  after(() => service.close());

  const claimsFor = async (app: App, location: string | null | undefined, rp: { codeVerifier: string }) => {
    const tokens = await redeem(service, {
      code: paramsOf(location).code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: rp.codeVerifier,
      client_id: app.clientId,
      client_secret: app.secretKey ?? '',
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    return idTokenClaims(tokens.body.id_token);
  };

  /** The app's authorization request with prompt=none: a code (SSO) or the error saying why not. */
  const silent = async (app: App, jar: CookieJar) => {
    const rp = await createPkcePair();
    const answer = await authorize(service, appParams(app.clientId, rp, { prompt: 'none' }), jar);
    assert.equal(answer.status, 303);
    return { params: paramsOf(answer.location), location: answer.location, rp };
  };

  it('continues the pending request: the app`s code says hwk user mfa and the phishing-resistant acr, and a session cookie is set', async () => {
    const { credential } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    const done = await passkeyToApp(service, jar, first.clientId, credential);
    assert.ok(done.location?.startsWith(`${RP_CALLBACK}?`), done.location);
    assert.ok(jar.cookies.get(sessionCookieName(service.url)), 'the hosted SSO session cookie');
    const claims = await claimsFor(first, done.location, done.rp);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.acr, ACR.phishingResistant);
  });

  it('a synced passkey says swk', async () => {
    const { credential } = await hostedUserWithPasskey(service, first.clientId, { synced: true });
    const done = await passkeyToApp(service, new CookieJar(), first.clientId, credential);
    assert.deepEqual((await claimsFor(first, done.location, done.rp)).amr, ['swk', 'user', 'mfa']);
  });

  it('signs a second app in without a prompt (SSO), with the passkey`s amr', async () => {
    const { credential } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    await passkeyToApp(service, jar, first.clientId, credential);
    const sso = await silent(second, jar);
    assert.ok(sso.params.code, sso.location ?? '');
    const claims = await claimsFor(second, sso.location, sso.rp);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.acr, ACR.phishingResistant);
  });

  it('ends the session when the passkey is revoked (the passkey no longer signs in either)', async () => {
    const { credential, userId, passkeyId } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    await passkeyToApp(service, jar, first.clientId, credential);
    assert.ok((await silent(second, jar)).params.code);
    await service.ctx.deviceService.revoke(HOSTED_CLIENT_ID, userId, passkeyId);
    assert.equal((await silent(second, jar)).params.error, 'login_required');
  });

  it('ends the session when the user is disabled', async () => {
    const { credential, email } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    await passkeyToApp(service, jar, first.clientId, credential);
    await service.ctx.users.disable(email, 'test');
    assert.equal((await silent(second, jar)).params.error, 'login_required');
  });

  it('"sign out everywhere else" ends every session a passkey opened; the passkey stays registered and signs in again', async () => {
    const { credential, userId } = await hostedUserWithPasskey(service, first.clientId);
    const [here, there] = [new CookieJar(), new CookieJar()];
    await passkeyToApp(service, here, first.clientId, credential);
    await passkeyToApp(service, there, first.clientId, credential);
    await service.ctx.deviceService.revokeAll(HOSTED_CLIENT_ID, userId, 'dev_none');
    assert.equal((await silent(second, here)).params.error, 'login_required');
    assert.equal((await silent(second, there)).params.error, 'login_required');
    const again = await passkeyToApp(service, here, first.clientId, credential);
    assert.ok(paramsOf(again.location).code);
    assert.ok((await silent(second, here)).params.code);
  });

  it('/logout with the app`s ID token ends the session', async () => {
    const { credential } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    const done = await passkeyToApp(service, jar, first.clientId, credential);
    const tokens = await redeem(service, {
      code: paramsOf(done.location).code ?? '',
      redirect_uri: RP_CALLBACK,
      code_verifier: done.rp.codeVerifier,
      client_id: first.clientId,
      client_secret: first.secretKey ?? '',
    });
    const response = await fetch(`${service.url}${Paths.endSession}?${new URLSearchParams({ id_token_hint: tokens.body.id_token })}`, {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    assert.ok(response.status < 400, String(response.status));
    assert.equal((await silent(second, jar)).params.error, 'login_required');
  });

  it('an app that does not count a passkey as MFA gets its second factor on the hosted page, then amr hwk user mfa email', async () => {
    const { credential, email } = await hostedUserWithPasskey(service, first.clientId, { mfaMethod: 'email' });
    const jar = new CookieJar();
    const rp = await createPkcePair();
    const start = await authorize(service, appParams(strict.clientId, rp), jar);
    const requestId = requestIdOf(start.location);
    const signedIn = await hostedPasskeySignIn(service, jar, requestId, credential);
    assert.equal(signedIn.body.status, 'MFA_REQUIRED', JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.userid, email, 'the page learns whose second factor to ask for');
    const post = hostedPost(service, requestId, jar);
    const started = await post(Paths.mfaInitiate, { userid: email, sessionId: signedIn.body.sessionId });
    assert.equal(started.status, 200, JSON.stringify(started.body));
    const verified = await post(Paths.mfaVerify, {
      userid: email,
      sessionId: signedIn.body.sessionId,
      otp: await service.latestOtp(email),
    });
    assert.equal(verified.body.status, 'SUCCESS', JSON.stringify(verified.body));
    const done = await complete(service, jar, { request: requestId, code: verified.body.code, codeVerifier: signedIn.codeVerifier });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const claims = await claimsFor(strict, done.location, rp);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa', 'email']);
    assert.equal(claims.acr, ACR.phishingResistant);
  });

  it('a session where the passkey counted as MFA does not sign in, silently, an app that does not count it (interaction_required)', async () => {
    const { credential } = await hostedUserWithPasskey(service, first.clientId);
    const jar = new CookieJar();
    await passkeyToApp(service, jar, first.clientId, credential);
    assert.equal((await silent(strict, jar)).params.error, 'interaction_required');
    assert.ok((await silent(second, jar)).params.code, 'the session itself is still live');
  });
});
