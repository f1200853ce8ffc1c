/**
 * One mailbox is one factor, at the operator console: whoever reads an operator's mail must not
 * run the service. The console's hosted sign-in (driven here as the hosted page drives it, with
 * service-web) never takes a mailed code as the operator's second factor: an operator whose
 * method is email, or who has none, sets up an authenticator app or a passkey before any console
 * session exists; and the callback refuses a code whose second factor was the mailbox or SMS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import * as OTPAuth from 'otpauth';
import { createPkcePair } from 'service-web';
import { consoleCallback, setCookies } from '../support/console-helpers.js';
import { registerWithMfa, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, CookieJar, complete, hostedServiceClient, requestIdOf } from '../support/oidc-helpers.js';

describe('the operator console never takes the mailbox as the second factor', () => {
  let service: TestService;
  // Moved past the sign-in code's resend spacing where one address gets a second code.
  let offset = 0;
  before(async () => {
    service = await startTestService({ testMode: true, now: () => Date.now() + offset });
  });
  after(() => service.close());

  const userIdOf = async (email: string) => (await service.ctx.users.find(email)).id as string;
  const methodOf = async (email: string) => (await service.ctx.mfa.methodOf(await userIdOf(email)))?.method;
  const mfaCodesMailed = async (email: string) =>
    (await service.ctx.mailbox.list(50, email)).filter((mail) => /verification code/.test(mail.subject ?? '')).length;

  /** /admin/signin, /authorize, then the hosted page up to the registration after the email code (a new browser). */
  async function consoleSignIn(email: string) {
    const start = await fetch(`${service.url}/admin/signin`, { redirect: 'manual' });
    const login = (setCookies(start.headers).get('service_console_login') ?? '').split(';')[0]?.split('=')[1] ?? '';
    const jar = new CookieJar();
    const pending = await authorize(service, Object.fromEntries(new URL(start.headers.get('location') ?? '').searchParams), jar);
    const requestId = requestIdOf(pending.location);
    const page = await hostedServiceClient(service, new IDBFactory(), requestId, jar);
    const pkce = await createPkcePair();
    const started = await page.authenticate(email, {
      rememberDevice: true,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    assert.equal(started.status, 'OTP_NEEDED');
    assert.equal((await page.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) })).status, 'SUCCESS');
    /** The hosted code traded for the console's, and the console's callback: its answer and session cookie. */
    const finish = async (code: string) => {
      const done = await complete(service, jar, { request: requestId, code, codeVerifier: pkce.codeVerifier });
      const answer = await fetch(done.location ?? '', { redirect: 'manual', headers: { cookie: `service_console_login=${login}` } });
      return { answer, session: setCookies(answer.headers).get('service_console') };
    };
    return { page, finish };
  }

  /** Enrolls an authenticator app at the console's enrollment step and finishes the console sign-in. */
  async function enrollTotp(email: string, page: Awaited<ReturnType<typeof consoleSignIn>>['page']) {
    const started = await page.verifyDevice({ userid: email, mfaMethod: 'totp' });
    assert.equal(started.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(started));
    const secret = (started as { secret: string }).secret;
    const otp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset });
    const confirmed = await page.verifyMfa({ userid: email, otp });
    assert.equal(confirmed.status, 'SUCCESS', JSON.stringify(confirmed));
    return (confirmed as { code: string }).code;
  }

  it('an operator whose second factor is email is asked for an app or a passkey, never a mailed code, and enrolls one before any console session', async () => {
    const email = uniqueEmail('op-mail');
    await registerWithMfa(service, email, 'email');
    await service.ctx.operators.add({ email, role: 'admin' }, 'cli');
    const mailed = await mfaCodesMailed(email);
    offset += 31_000;
    const { page, finish } = await consoleSignIn(email);
    const step = await page.verifyDevice({ userid: email });
    assert.equal(step.status, 'MFA_ENROLLMENT_NEEDED', 'no MFA step by email: the mailbox just proved the first factor');
    assert.deepEqual((step as { methods: string[] }).methods, ['totp', 'passkey']);
    assert.equal(await mfaCodesMailed(email), mailed, 'no second code mailed');
    const byMail = await page.verifyDevice({ userid: email, mfaMethod: 'email' });
    assert.equal(byMail.status, 'MFA_UNAVAILABLE', 'email is refused as the console operator’s second factor');
    assert.equal(await methodOf(email), 'email', 'nothing changed');

    const { answer, session } = await finish(await enrollTotp(email, page));
    assert.equal(answer.status, 303);
    assert.ok(session, 'the console opens only once an authenticator app was set up');
    assert.equal(await methodOf(email), 'totp', 'the app replaced the mailed code as the method');
    const { events } = await service.ctx.events.list({ userId: await userIdOf(email), type: 'operator.signed_in', limit: 5 });
    assert.equal(events[0]?.detail?.amr, 'otp mfa totp');
  });

  it('an operator with no second factor at all sets up an app or a passkey before anything in the console is shown', async () => {
    const email = uniqueEmail('op-none');
    await service.ctx.operators.add({ email, role: 'viewer' }, 'cli');
    const { page, finish } = await consoleSignIn(email);
    const step = await page.verifyDevice({ userid: email });
    assert.equal(step.status, 'MFA_ENROLLMENT_NEEDED');
    assert.deepEqual((step as { methods: string[] }).methods, ['totp', 'passkey']);
    assert.equal((await page.verifyDevice({ userid: email, mfaMethod: 'email' })).status, 'MFA_UNAVAILABLE');
    assert.equal(await methodOf(email), undefined, 'email was not enrolled');
    const { session } = await finish(await enrollTotp(email, page));
    assert.ok(session);
  });

  it('the callback refuses a console code whose second factor was the mailbox or SMS, and records it', async () => {
    const email = uniqueEmail('op-forged');
    const { device } = await registerWithMfa(service, email, 'email');
    await service.ctx.operators.add({ email, role: 'admin' }, 'cli');
    const who = { userId: await userIdOf(email), deviceId: device.deviceId as string };
    for (const amr of [
      ['otp', 'mfa', 'email'],
      ['swk', 'mfa', 'email'],
      ['otp', 'mfa', 'sms'],
    ]) {
      const refused = await consoleCallback(service, who, amr);
      assert.equal(refused.answer.status, 403, amr.join(' '));
      assert.equal(refused.session, undefined);
      assert.match(await refused.answer.text(), /authenticator app or a passkey/);
    }
    const { events } = await service.ctx.events.list({ userId: who.userId, type: 'operator.refused', limit: 5 });
    assert.deepEqual(
      events.map((event) => event.detail?.reason),
      ['no_second_factor', 'no_second_factor', 'no_second_factor'],
    );
    for (const amr of [
      ['swk', 'mfa', 'totp'],
      ['hwk', 'user', 'mfa'],
      ['swk', 'mfa', 'recovery_code'],
    ])
      assert.ok((await consoleCallback(service, who, amr)).session, amr.join(' '));
  });
});
