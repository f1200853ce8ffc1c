/** Operator mail templates replace the built-in ones; a template that would lose the code is refused at start-up. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { loadMailTemplates, TEMPLATE_NAMES } from '../../src/mail/templates.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

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

  it('lets the operator replace every mail the service sends, and documents each one', () => {
    const every = mkdtempSync(join(tmpdir(), 'templates-every-'));
    const operations = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');
    const values = { client: 'Acme', code: '123456', method: 'totp', link: 'L', remaining: '3' };
    try {
      for (const name of TEMPLATE_NAMES) {
        writeFileSync(join(every, `${name}.txt`), `Subject: ${name} for {{client}}\ntext {{code}} {{method}} {{link}} {{remaining}}\n`);
        writeFileSync(join(every, `${name}.html`), `<p>html {{code}} {{method}} {{link}} {{remaining}}</p>`);
        assert.match(operations, new RegExp(`\`${name}\\.txt\`, \`${name}\\.html\``), `docs/operations.md lists ${name}`);
      }
      const templates = loadMailTemplates(every);
      for (const name of TEMPLATE_NAMES) {
        const mail = templates.render(name, 'a@example.com', values);
        assert.deepEqual(
          { subject: mail.subject, text: mail.text, html: mail.html },
          { subject: `${name} for Acme`, text: 'text 123456 totp L 3\n', html: '<p>html 123456 totp L 3</p>' },
        );
      }
    } finally {
      rmSync(every, { recursive: true, force: true });
    }
  });

  it('escapes values in the HTML part', () => {
    const html = loadMailTemplates().render('sign-in-code', 'a@example.com', { code: '123456', client: '<script>x</script>' }).html;
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /&lt;script&gt;/);
  });

  it('refuses a template without {{code}}, or a notice without what it notifies', () => {
    const bad = mkdtempSync(join(tmpdir(), 'templates-bad-'));
    writeFileSync(join(bad, 'mfa-code.html'), '<p>Your code is on its way</p>');
    assert.throws(() => loadMailTemplates(bad), /mfa-code \(html\).*no \{\{code\}\}/);
    rmSync(join(bad, 'mfa-code.html'));
    writeFileSync(join(bad, 'mfa-changed.txt'), 'Something changed.\n');
    assert.throws(() => loadMailTemplates(bad), /mfa-changed \(text\).*no \{\{method\}\}/);
    rmSync(join(bad, 'mfa-changed.txt'));
    writeFileSync(join(bad, 'new-device.html'), '<p>A new device signed in.</p>');
    assert.throws(() => loadMailTemplates(bad), /new-device \(html\).*no \{\{link\}\}/);
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
