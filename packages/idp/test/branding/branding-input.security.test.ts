/**
 * Hostile branding input. An operator's script (or a stolen admin key) tries to make every
 * user's sign-in page and mail carry something it should not: an oversized image, a file that
 * is not an image (an HTML page, a script), an SVG with a script inside, a colour that leaves
 * the button unreadable or is not a colour at all (CSS injection: `red;}body{…`), a sender name
 * that adds a mail header (`\r\nBcc:`) or reads as another address, a terms link that is a
 * `javascript:` URL or carries credentials. Each must get a clear 400 (exit 2 from the CLI) and
 * store nothing: the branding read back afterwards is the one before.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LOGO_MAX_BYTES } from '../../src/defaults.js';
import { APP_ORIGIN, runCli, startTestService, type TestService } from '../support/helpers.js';

const png = readFileSync(new URL('../support/fixtures/logo-circle.png', import.meta.url));
const SVG_WITH_SCRIPT = '<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>';
const BAD_LOGOS: Array<[string, Buffer, RegExp]> = [
  ['an oversized PNG', Buffer.concat([png, Buffer.alloc(LOGO_MAX_BYTES)]), /at most 131072 are accepted/],
  ['an SVG with a script', Buffer.from(SVG_WITH_SCRIPT), /SVG logos are refused/],
  ['an SVG without its XML prolog', Buffer.from('  <svg onload="alert(1)"/>'), /SVG logos are refused/],
  ['an HTML page', Buffer.from('<!doctype html><script>alert(1)</script>'), /not a PNG, JPEG or WebP/],
  ['a GIF', Buffer.from('GIF89a\x01\x00\x01\x00', 'latin1'), /not a PNG, JPEG or WebP/],
];
const BAD_FIELDS: Array<[string, Record<string, string>, RegExp]> = [
  ['a yellow accent (1.07:1 on white)', { accent: '#ffff00' }, /against the light page background/],
  ['a black accent (invisible in the dark theme)', { accent: '#000000' }, /against the dark page background/],
  ['a navy accent (dark theme)', { accent: '#001f3f' }, /dark page background/],
  ['a colour name', { accent: 'red' }, /#RRGGBB/],
  ['CSS injected through the colour', { accent: '#0a64d8;}body{display:none' }, /#RRGGBB/],
  ['a three-digit colour', { accent: '#06c' }, /#RRGGBB/],
  ['a sender name with a Bcc header', { mailSenderName: 'Acme\r\nBcc: thief@evil.example' }, /control/],
  ['a sender name that reads as an address', { mailSenderName: 'support@bank.example' }, /none of/],
  ['a sender name that closes the quotes', { mailSenderName: 'Acme" <thief@evil.example>' }, /none of/],
  ['a right-to-left override in the display name', { displayName: 'Acme\u202Egnp.exe' }, /control or invisible/],
  ['an over-long display name', { displayName: 'x'.repeat(101) }, /1 to 100 characters/],
  ['a javascript: terms URL', { termsUrl: 'javascript:alert(1)' }, /https URL/],
  ['an http privacy URL', { privacyUrl: 'http://wiki.example/privacy' }, /https URL/],
  [
    'a privacy URL with credentials',
    { privacyUrl: 'https://user:secret@wiki.example/p' },
    /no user name or password \(https:\/\/wiki\.example\)/,
  ],
];

describe('branding input attacks (admin API)', () => {
  let service: TestService;
  let key: string;
  let baseline: unknown;
  before(async () => {
    service = await startTestService();
    key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
    baseline = (await call('PATCH', `/clients/${service.clientId}/branding`, { displayName: 'Acme Wiki', accent: '#0a64d8' })).body;
  });
  after(() => service.close());

  async function call(method: string, path: string, body?: unknown) {
    const response = await fetch(`${service.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }
  const unchanged = async () => assert.deepEqual((await call('GET', `/clients/${service.clientId}/branding`)).body, baseline);

  for (const [what, bytes, message] of BAD_LOGOS) {
    it(`refuses ${what} as a logo with a 400, storing nothing (not even the valid fields beside it)`, async () => {
      const answer = await call('PATCH', `/clients/${service.clientId}/branding`, {
        displayName: 'Changed',
        logo: bytes.toString('base64'),
      });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID');
      assert.match(answer.body.message, message);
      await unchanged();
    });
  }

  it('refuses a body far over the logo limit before reading it (413), and base64 that is not base64 (400)', async () => {
    const huge = await call('PATCH', `/clients/${service.clientId}/branding`, { logo: 'A'.repeat(LOGO_MAX_BYTES * 4) });
    assert.equal(huge.status, 413);
    const notBase64 = await call('PATCH', `/clients/${service.clientId}/branding`, { logo: '<svg/>' });
    assert.equal(notBase64.status, 400);
    await unchanged();
  });

  for (const [what, body, message] of BAD_FIELDS) {
    it(`refuses ${what} with a 400, storing nothing`, async () => {
      const answer = await call('PATCH', `/clients/${service.clientId}/branding`, { termsUrl: 'https://wiki.example/terms', ...body });
      assert.equal(answer.status, 400);
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID');
      assert.match(answer.body.message, message);
      await unchanged();
    });
  }

  it('refuses a product name with a line break or nothing in it, keeping the old one', async () => {
    await call('PATCH', '/settings', { productName: 'Acme Accounts' });
    for (const productName of ['Acme\nAccounts', '   ', 'x'.repeat(101)]) {
      const answer = await call('PATCH', '/settings', { productName });
      assert.equal(answer.status, 400, JSON.stringify(productName));
    }
    // The service's own page URLs (discovery's op_policy_uri, op_tos_uri, service_documentation): pages only.
    for (const field of ['policyUrl', 'termsUrl', 'documentationUrl']) {
      for (const url of ['javascript:alert(1)', 'http://acme.example/policy', 'https://user:pw@acme.example/']) {
        const answer = await call('PATCH', '/settings', { [field]: url });
        assert.equal(answer.status, 400, `${field}: ${url}`);
      }
    }
    const none = { policyUrl: null, termsUrl: null, documentationUrl: null };
    assert.deepEqual((await call('GET', '/settings')).body, { productName: 'Acme Accounts', ...none });
  });

  it('no stylesheet can be had for a colour that fails the check, so no page can be given one', async () => {
    for (const file of ['ffff00.css', '000000.css', '0a64d8;}body{x.css']) {
      assert.equal((await fetch(`${service.url}/branding/accent/${encodeURIComponent(file)}`)).status, 404);
    }
  });
});

describe('branding input attacks (CLI)', () => {
  let data: string;
  let clientId: string;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-branding-'));
    const created = await runCli(['clients', 'create', '--name', 'wiki', '--origin', APP_ORIGIN, '--json', '--data', data]);
    clientId = JSON.parse(created.stdout).clientId;
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  const branding = async () => JSON.parse((await runCli(['clients', 'branding', clientId, '--json', '--data', data])).stdout);

  it('exits 2 on an SVG logo, a low-contrast or malformed colour and a sender name with a header; nothing is stored', async () => {
    const before = await branding();
    const svg = join(data, 'logo.svg');
    writeFileSync(svg, SVG_WITH_SCRIPT);
    const empty = join(data, 'empty.png');
    writeFileSync(empty, '');
    const attempts = [
      ['--logo', svg, '--display-name', 'Changed'],
      ['--accent', '#ffff00', '--display-name', 'Changed'],
      ['--accent', 'red;}', '--display-name', 'Changed'],
      ['--mail-sender-name', 'Acme\r\nBcc: thief@evil.example'],
      ['--logo', join(data, 'missing.png')],
      ['--logo', empty],
    ];
    for (const flags of attempts) {
      const run = await runCli(['clients', 'update', clientId, ...flags, '--data', data]);
      assert.equal(run.code, 2, `${flags.join(' ')}: ${run.stderr}`);
      assert.match(run.stderr, /^service-idp: /);
    }
    assert.deepEqual(await branding(), before);
  });
});
