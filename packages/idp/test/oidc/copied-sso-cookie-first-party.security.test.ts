/**
 * Attack: a copied SSO cookie opens the operator console as an admin. The thief holds only an
 * operator's `service_session` cookie; a `prompt=none` /authorize for any application, with the
 * thief's own PKCE pair, answers a code. Taken to a first-party callback (the console's
 * /admin/callback, the account center's /account/callback) with a login cookie the thief made
 * from that pair, the code must be refused: it was issued to another client and another
 * redirect URI (RFC 6749 4.1.3). And the console's own client is never answered from a session,
 * so its fresh sign-in (prompt=login) cannot be skipped with `prompt=none` either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import * as OTPAuth from 'otpauth';
import { createPkcePair } from 'service-web';
import { CONSOLE_CLIENT_ID } from '../../src/clients/service.js';
import { setCookies } from '../support/console-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  type App,
  appParams,
  authorize,
  CookieJar,
  complete,
  hostedServiceClient,
  paramsOf,
  registerApp,
  requestIdOf,
} from '../support/oidc-helpers.js';

describe('a copied SSO cookie and the first-party callbacks', () => {
  let service: TestService;
  const clock = sendClock();
  let app: App;
  let operatorEmail: string;
  /** The thief's jar: nothing but the operator's SSO cookie. */
  let copied: CookieJar;
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
    app = await registerApp(service, 'Everyday App');
    // The operator's SSO session has a second factor (a strict app asked for one), as the console wants.
    const strict = await registerApp(service, 'Strict App', { mfaPolicy: 'required' });
    operatorEmail = uniqueEmail('operator');
    const jar = new CookieJar();
    const start = await authorize(service, appParams(strict.clientId, await createPkcePair()), jar);
    const client = await hostedServiceClient(service, new IDBFactory(), requestIdOf(start.location), jar);
    const pkce = await createPkcePair();
    await client.authenticate(operatorEmail, { rememberDevice: true, code_challenge: pkce.codeChallenge, code_challenge_method: 'S256' });
    await client.verifyEmailOtp({ userid: operatorEmail, otp: await service.latestOtp(operatorEmail) });
    assert.equal((await client.verifyDevice({ userid: operatorEmail })).status, 'MFA_ENROLLMENT_NEEDED');
    clock.tick();
    // An authenticator app: the second factor the console takes (the mailbox is never one).
    const started = await client.verifyDevice({ userid: operatorEmail, mfaMethod: 'totp' });
    assert.equal(started.status, 'FINALIZE_REGISTRATION_NEEDED');
    const secret = OTPAuth.Secret.fromBase32((started as { secret: string }).secret);
    const enrolled = await client.verifyMfa({
      userid: operatorEmail,
      otp: new OTPAuth.TOTP({ secret }).generate({ timestamp: clock.now() }),
    });
    assert.equal(enrolled.status, 'SUCCESS');
    const code = enrolled.status === 'SUCCESS' ? enrolled.code : '';
    const done = await complete(service, jar, { request: requestIdOf(start.location), code, codeVerifier: pkce.codeVerifier });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    await service.ctx.operators.add({ email: operatorEmail, role: 'admin' }, 'cli');
    const session = jar.cookies.get('service_session');
    assert.ok(session, 'the sign-in left an SSO session');
    copied = new CookieJar();
    copied.cookies.set('service_session', session);
  });
  after(() => service.close());

  /** A code for `clientId` from the copied cookie alone, bound to the thief's PKCE pair. */
  async function silentCode(params: Record<string, string>) {
    const pkce = await createPkcePair();
    const answer = await authorize(service, { ...params, code_challenge: pkce.codeChallenge, prompt: 'none', state: 's' }, copied);
    return { ...paramsOf(answer.location), verifier: pkce.codeVerifier };
  }

  /** The thief at a first-party callback with that code and a login cookie made from their own pair. */
  async function thiefCallback(path: string, loginCookie: string, code: { code?: string; verifier: string }) {
    const state = 'thief-state';
    const answer = await fetch(`${service.url}${path}?${new URLSearchParams({ code: code.code ?? '', state, iss: service.url })}`, {
      redirect: 'manual',
      headers: { cookie: `${loginCookie}=${state}.${code.verifier}` },
    });
    return { status: answer.status, cookies: setCookies(answer.headers), text: await answer.text() };
  }

  it('refuses at /admin/callback a code issued to another app: no console session', async () => {
    const code = await silentCode(appParams(app.clientId, { codeChallenge: '' }));
    assert.ok(code.code, 'the copied cookie alone gets a code for the app (the SSO session is valid)');
    const answer = await thiefCallback('/admin/callback', 'service_console_login', code);
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.cookies.get('service_console'), undefined, 'no console session');
    const { events } = await service.ctx.events.list({ type: 'operator.signed_in', limit: 50 });
    assert.equal(events.filter((e) => e.actor === `operator:${operatorEmail}`).length, 0);
  });

  it('refuses at /account/callback a code issued to another app: no account session', async () => {
    const code = await silentCode(appParams(app.clientId, { codeChallenge: '' }));
    assert.ok(code.code);
    const answer = await thiefCallback('/account/callback', 'service_account_login', code);
    assert.equal(answer.status, 403, answer.text);
    assert.equal(answer.cookies.get('service_account'), undefined, 'no account session');
  });

  it('never answers the console`s client from a session: prompt=none gets login_required, no code', async () => {
    const start = await fetch(`${service.url}/admin/signin`, { redirect: 'manual' });
    const consoleAuthorize = new URL(start.headers.get('location') ?? '');
    const params = Object.fromEntries(consoleAuthorize.searchParams);
    delete params.prompt;
    assert.equal(params.client_id, CONSOLE_CLIENT_ID);
    const code = await silentCode(params);
    assert.equal(code.code, undefined);
    assert.equal(code.error, 'login_required');
  });
});
