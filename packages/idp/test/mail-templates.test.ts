/** Operator mail templates replace the built-in ones; a template that would lose the code is refused at start-up. */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.js';
import { loadMailTemplates } from '../src/mail/templates.js';
import { startTestService, type TestService, uniqueEmail } from './helpers.js';

describe('mail templates', () => {
  let dir: string;
  let service: TestService;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'templates-'));
    writeFileSync(
      join(dir, 'sign-in-code.txt'),
      'Subject: {{client}}: confirm it is you\nHello! Your code: {{code}} (valid {{minutes}} min).\n',
    );
    writeFileSync(join(dir, 'sign-in-code.html'), '<p>Code for {{client}}: <b>{{code}}</b></p>');
    service = await startTestService({ env: { SERVICE_IDP_MAIL_TEMPLATES: dir, SERVICE_IDP_MAIL_FROM: 'Acme <login@acme.test>' } });
  });
  after(async () => {
    await service.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('uses the operator files for subject, text and HTML, and the built-in ones for the rest', async () => {
    const email = uniqueEmail();
    await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    const [mail] = await service.ctx.mailbox.list(1, email);
    assert.equal(mail?.subject, 'Test App: confirm it is you');
    assert.match(mail?.text ?? '', /^Hello! Your code: \d{6} \(valid 5 min\)\.$/m);
    assert.match(mail?.html ?? '', /^<p>Code for Test App: <b>\d{6}<\/b><\/p>$/);
    const mfa = loadMailTemplates(dir).render('mfa-code', 'a@example.com', { code: '123456', client: 'X' });
    assert.equal(mfa.subject, 'Your X verification code', 'no override: built-in');
  });

  it('escapes values in the HTML part', () => {
    const html = loadMailTemplates().render('sign-in-code', 'a@example.com', { code: '123456', client: '<script>x</script>' }).html;
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /&lt;script&gt;/);
  });

  it('refuses a template without {{code}}', () => {
    const bad = mkdtempSync(join(tmpdir(), 'templates-bad-'));
    writeFileSync(join(bad, 'mfa-code.html'), '<p>Your code is on its way</p>');
    assert.throws(() => loadMailTemplates(bad), /mfa-code \(html\).*no \{\{code\}\}/);
    rmSync(bad, { recursive: true, force: true });
  });

  it('refuses incomplete or unsafe SMS configuration', () => {
    assert.throws(() => loadConfig({}, { SMS_TRANSPORT: 'pigeon' }), /SMS_TRANSPORT must be/);
    assert.throws(() => loadConfig({}, { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: 'https://x.test' }), /needs SMS_WEBHOOK_SECRET/);
    assert.throws(
      () => loadConfig({}, { SMS_TRANSPORT: 'webhook', SMS_WEBHOOK_URL: 'https://x.test', SMS_WEBHOOK_SECRET: 'short' }),
      /at least 16/,
    );
    assert.throws(() => loadConfig({}, { SMS_TRANSPORT: 'twilio', TWILIO_ACCOUNT_SID: 'AC1' }), /needs TWILIO_AUTH_TOKEN/);
  });
});
