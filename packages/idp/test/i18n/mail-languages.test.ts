/**
 * Mails in the recipient's language, over real SMTP: the browser's Accept-Language, the
 * switcher's cookie over it, the user's saved choice when the browser says nothing; the code in
 * a French mail signs in; plurals in the recovery-code notice.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sendClock, startSmtp, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

/** The decoded subject and text part of a raw message (RFC 2047 words, quoted-printable). */
function decode(raw: string): { subject: string; text: string; html: string } {
  const bytes = (qp: string) =>
    Buffer.from(
      qp.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_w, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
      'latin1',
    ).toString('utf8');
  const header = raw.slice(0, raw.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  const subjectLine = header.match(/^Subject: (.*)$/m)?.[1] ?? '';
  const subject = subjectLine
    .replace(/\?=\s+=\?/g, '?==?')
    .replace(/=\?UTF-8\?Q\?(.*?)\?=/gi, (_w, q: string) => bytes(q.replace(/_/g, ' ')))
    .replace(/=\?UTF-8\?B\?(.*?)\?=/gi, (_w, b: string) => Buffer.from(b, 'base64').toString('utf8'));
  const part = (type: string) => {
    const start = raw.search(new RegExp(`Content-Type: ${type}`, 'i'));
    const body = raw.slice(raw.indexOf('\r\n\r\n', start) + 4);
    const content = body.slice(0, body.search(/\r\n--/));
    return /Content-Transfer-Encoding: quoted-printable/i.test(raw.slice(start, raw.indexOf('\r\n\r\n', start))) ? bytes(content) : content;
  };
  return { subject, text: part('text/plain'), html: part('text/html') };
}

describe('mails in the recipient’s language, over SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({ now: clock.now, env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });
  const mailTo = (email: string) => {
    const message = [...smtp.inbox].reverse().find((m) => m.to.includes(email));
    assert.ok(message, `a mail reached ${email}`);
    return decode(message.raw);
  };

  it('Accept-Language: fr → a French sign-in code mail whose code signs in', async () => {
    const email = uniqueEmail('fr');
    // service-web's fetch in a French browser: the header goes with the call.
    const started = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, undefined, {
      'accept-language': 'fr-FR,fr;q=0.9',
    });
    assert.equal(started.body.status, 'OTP_NEEDED');
    const mail = mailTo(email);
    assert.equal(mail.subject, 'Votre code de connexion Test App');
    const code = mail.text.match(/Votre code de connexion pour Test App est : (\d{6})/)?.[1];
    assert.ok(code, mail.text);
    assert.match(mail.text, /Il expire dans 5 minutes et ne sert qu’une fois\./);
    assert.match(mail.html, /<html lang="fr">/);
    assert.match(mail.html, /Votre code de connexion pour <strong>Test App<\/strong> est :/);
    assert.doesNotMatch(mail.text, /sign-in code|expires/, 'no English left');
    const verified = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: started.body.deviceToken, otp: code });
    assert.equal(verified.status, 200, 'the code in the French mail works');
  });

  it('the switcher’s cookie outranks Accept-Language', async () => {
    const email = uniqueEmail('cookie');
    await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, undefined, {
      'accept-language': 'fr',
      cookie: 'service_locale=de',
    });
    assert.equal(mailTo(email).subject, 'Ihr Anmeldecode für Test App');
  });

  it('the user’s saved choice outranks Accept-Language; with neither, English', async () => {
    const email = uniqueEmail('saved');
    await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    assert.equal(mailTo(email).subject, 'Your Test App sign-in code', 'no choice: English');
    const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    await service.ctx.enabledUsers.setLocale(user?.id as string, 'es');
    smtp.inbox.length = 0;
    clock.tick(); // past the send spacing of one recipient
    await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, undefined, { 'accept-language': 'de' });
    const mail = mailTo(email);
    assert.equal(mail.subject, 'Su código de inicio de sesión de Test App');
    assert.match(mail.text, /Caduca en 5 minutos y solo sirve una vez\./);
  });
});
