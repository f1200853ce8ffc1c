/**
 * Real mail delivery: the service sends through nodemailer to a local SMTP server
 * (smtp-server), and the OTP read from the received message completes the registration.
 * An SMTP failure gives a clear 503 and leaves no usable code behind.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startSmtp, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('SMTP delivery', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SERVICE_IDP_MAIL_FROM: 'Test <login@example.com>' },
    });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  it('delivers the OTP over SMTP, and the received code registers the device', async () => {
    const email = uniqueEmail('smtp');
    const device = await service.newDevice();
    const started = await device.authenticate(email, { rememberDevice: true });
    assert.equal(started.status, 'OTP_NEEDED');
    const message = smtp.inbox.find((m) => m.to.includes(email));
    assert.ok(message, 'the SMTP server received the mail');
    assert.match(message.raw, /^From: Test <login@example\.com>/m);
    assert.match(message.raw, /Content-Type: text\/plain/i);
    assert.match(message.raw, /Content-Type: text\/html/i);
    const otp = message.raw.match(/sign-in code for Test App is: (\d{6})/)?.[1];
    assert.ok(otp, 'the plain-text part carries the code');
    assert.equal((await device.verifyEmailOtp({ userid: email, otp })).status, 'SUCCESS');
    assert.equal((await device.verifyDevice({ userid: email })).status, 'SUCCESS');
    assert.equal((await service.ctx.mailbox.list(10)).length, 0, 'nothing went to the development mailbox');
    const devMail = await fetch(`${service.url}/dev/mail`, { headers: { accept: 'application/json' } });
    assert.equal(devMail.status, 404, 'no development mailbox page when SMTP is configured');
  });
});

describe('MFA by email over SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const codeIn = (email: string, pattern: RegExp) => {
    const message = [...smtp.inbox].reverse().find((m) => m.to.includes(email) && pattern.test(m.raw));
    return message?.raw.match(pattern)?.[1] as string;
  };

  it('delivers the MFA code over SMTP and the received code passes MFA', async () => {
    const email = uniqueEmail('mfa-smtp');
    const device = await service.newDevice();
    await device.authenticate(email, { rememberDevice: true });
    await device.verifyEmailOtp({ userid: email, otp: codeIn(email, /sign-in code for Test App is: (\d{6})/) });
    assert.equal((await device.verifyDevice({ userid: email, mfaMethod: 'email' })).status, 'SUCCESS');
    // The MFA code follows the sign-in code at once: another purpose, so no resend spacing.
    const challenged = await device.authenticate(email);
    assert.equal(challenged.status, 'MFA_REQUIRED');
    assert.equal((await device.initiateMfa({ userid: email, sessionId: challenged.sessionId as string })).status, 'MFA_INITIATED');
    const otp = codeIn(email, /verification code for Test App is: (\d{6})/);
    assert.ok(otp, 'the MFA mail arrived over SMTP');
    assert.equal((await device.verifyMfa({ userid: email, otp })).status, 'SUCCESS');
  });
});

describe('SMTP failure', () => {
  let service: TestService;
  before(async () => {
    const dead = await startSmtp();
    const port = dead.port;
    await new Promise<void>((resolve) => dead.server.close(() => resolve()));
    service = await startTestService({ testMode: true, env: { SMTP_URL: `smtp://127.0.0.1:${port}` } });
  });
  after(() => service.close());

  it('answers 503 ERR_DELIVERY_FAILED without the code, and the undelivered code is dead', async () => {
    const email = uniqueEmail('nosmtp');
    const r = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    assert.equal(r.status, 503);
    assert.equal(r.body.code, 'ERR_DELIVERY_FAILED');
    assert.equal(r.body.deviceToken, undefined);
    assert.doesNotMatch(JSON.stringify(r.body), /\d{6}/, 'no code in the response, even in test mode');
    const rows = await service.ctx.db.selectFrom('registrations').select(['otp_expires_at']).execute();
    assert.equal(rows.length, 1);
    assert.ok(Number(rows[0]?.otp_expires_at) <= Date.now(), 'the registration was expired at once');
  });
});
