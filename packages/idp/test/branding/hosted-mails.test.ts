/**
 * Mails say who is writing (issue 28): a user signing in to "Acme Wiki" through the hosted
 * pages gets the sign-in code and the new-device notice, and later the MFA code, naming Acme
 * Wiki, never the built-in client the hosted pages run on ("Hosted sign-in"). Received over
 * SMTP (smtp-server), parsed as a mail reader would (mailparser).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { createPkcePair } from 'service-web';
import { startSmtp, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { appParams, authorize, hostedBrowser, registerApp } from '../support/oidc-helpers.js';

describe('hosted sign-in mails name the application', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SERVICE_IDP_MAIL_FROM: 'Sign-in <login@example.com>' },
    });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const mailsTo = async (email: string) => Promise.all(smtp.inbox.filter((m) => m.to.includes(email)).map((m) => simpleParser(m.raw)));

  it('the code and new-device mails of a hosted sign-in name the app, not "Hosted sign-in"', async () => {
    const wiki = await registerApp(service, 'Acme Wiki');
    const email = uniqueEmail('wiki');
    const browser = hostedBrowser(service);
    const start = await authorize(service, appParams(wiki.clientId, await createPkcePair()), browser.jar);
    // hostedBrowser reads the code from the development mailbox; over SMTP it reads it here.
    service.latestOtp = async (to: string) => {
      const mails = await mailsTo(to);
      return mails.at(-1)?.text?.match(/\b(\d{6})\b/)?.[1] ?? '';
    };
    const done = await browser.signIn(start.location ?? '', email);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const mails = await mailsTo(email);
    const subjects = mails.map((m) => m.subject);
    assert.deepEqual(subjects, ['Your Acme Wiki sign-in code', 'A new device can now sign in to Acme Wiki']);
    for (const mail of mails) {
      assert.doesNotMatch(`${mail.subject}\n${mail.text}\n${mail.html}`, /Hosted sign-in/);
      assert.match(mail.text ?? '', /Acme Wiki/);
    }
  });
});
