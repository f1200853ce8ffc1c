/**
 * Mails say who is writing (issue 28): a user signing in to "Acme Wiki" through the hosted
 * pages gets the sign-in code and the new-device notice, and later the MFA code, naming Acme
 * Wiki, never the built-in client the hosted pages run on ("Hosted sign-in"). Received over
 * SMTP (smtp-server), parsed as a mail reader would (mailparser).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { createPkcePair } from 'service-web';
import { newRawDevice, startSmtp, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
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

  const signIn = async (clientId: string, email: string) => {
    const browser = hostedBrowser(service);
    const start = await authorize(service, appParams(clientId, await createPkcePair()), browser.jar);
    service.latestOtp = async (to: string) => (await mailsTo(to)).at(-1)?.text?.match(/\b(\d{6})\b/)?.[1] ?? '';
    const done = await browser.signIn(start.location ?? '', email);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    return mailsTo(email);
  };

  it("a branded app's mails come from its sender name, open with its logo (absolute, served) and colour, and keep the plain text; a second app keeps its own", async () => {
    const wiki = await registerApp(service, 'wiki-internal');
    const notes = await registerApp(service, 'notes-internal');
    const logo = readFileSync(new URL('../support/fixtures/logo-circle.png', import.meta.url));
    const wikiBrand = await service.ctx.branding.update(wiki.clientId, {
      displayName: 'Acme Wiki',
      accent: '#c2410c',
      mailSenderName: 'Acme Wiki',
      logo,
    });
    await service.ctx.branding.update(notes.clientId, { accent: '#047857' });
    const wikiMails = await signIn(wiki.clientId, uniqueEmail('brand-wiki'));
    assert.equal(wikiMails.length, 2);
    for (const mail of wikiMails) {
      assert.equal(mail.from?.value[0]?.name, 'Acme Wiki');
      assert.equal(mail.from?.value[0]?.address, 'login@example.com');
      assert.ok(mail.html && wikiBrand.logoUrl);
      assert.ok(mail.html.includes(`<img src="${wikiBrand.logoUrl}" alt="Acme Wiki"`), 'the logo, by its absolute URL');
      assert.match(mail.html, /border-top:4px solid #c2410c/);
      assert.doesNotMatch(mail.html, /#047857/);
      assert.match(mail.text ?? '', /Acme Wiki/);
      assert.doesNotMatch(mail.text ?? '', /<img/);
    }
    assert.match(wikiMails[0]?.html || '', /font-weight:bold;color:#c2410c/, 'the code in the accent');
    assert.equal((await fetch(wikiBrand.logoUrl ?? '')).status, 200, 'the logo URL answers');
    const notesMails = await signIn(notes.clientId, uniqueEmail('brand-notes'));
    for (const mail of notesMails) {
      assert.equal(mail.from?.value[0]?.name, 'Sign-in', 'no sender name set: the configured one');
      assert.match(mail.html || '', /border-top:4px solid #047857/);
      assert.doesNotMatch(mail.html || '', /<img|#c2410c|Acme Wiki/);
      assert.match(mail.subject ?? '', /notes-internal/);
    }
  });

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

  it("the /v1 API's code and new-device mails name the app by its display name in the subject and the text, never its client name", async () => {
    // The service's own test client is called "Test App"; its users know it as "Acme Notes".
    await service.ctx.branding.update(service.clientId, { displayName: 'Acme Notes' });
    try {
      const email = uniqueEmail('v1-brand');
      const started = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
      assert.equal(started.body.status, 'OTP_NEEDED', JSON.stringify(started.body));
      const [codeMail] = await mailsTo(email);
      const otp = codeMail?.text?.match(/\b(\d{6})\b/)?.[1] ?? '';
      const verified = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: started.body.deviceToken, otp });
      assert.equal(verified.status, 200, JSON.stringify(verified.body));
      const device = await newRawDevice();
      const registered = await service.post('/v1/devices', {
        userid: email,
        deviceToken: started.body.deviceToken,
        devicePublicKey: device.publicJwk,
      });
      assert.equal(registered.status, 200, JSON.stringify(registered.body));
      let mails = await mailsTo(email);
      for (let wait = 0; mails.length < 2 && wait < 50; wait += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        mails = await mailsTo(email);
      }
      assert.deepEqual(
        mails.map((m) => m.subject),
        ['Your Acme Notes sign-in code', 'A new device can now sign in to Acme Notes'],
      );
      for (const mail of mails) {
        assert.match(mail.text ?? '', /Acme Notes/);
        assert.doesNotMatch(`${mail.subject}\n${mail.text}\n${mail.html}`, /Test App/);
      }
    } finally {
      await service.ctx.branding.update(service.clientId, { displayName: null });
    }
  });
});
