/**
 * Branding (docs/operations.md, Branding): the product name and each application's display
 * name, logo, accent, links and mail sender name, set through the admin API and the CLI, read
 * back, and served (the logo by content hash, the accent as a stylesheet), cached for a year.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { contrast } from '../../src/branding/validate.js';
import { ACCENT_SURFACE_CONTRAST_MIN, ACCENT_TEXT_CONTRAST_MIN, PAGE_BACKGROUND_DARK, PAGE_BACKGROUND_LIGHT } from '../../src/defaults.js';
import { APP_ORIGIN, runCli, startTestService, type TestService } from '../support/helpers.js';

const fixture = (name: string) => readFileSync(new URL(`../support/fixtures/${name}`, import.meta.url));

describe('branding through the admin API', () => {
  let service: TestService;
  let key: string;
  before(async () => {
    service = await startTestService();
    key = (await service.ctx.adminKeys.create('ops', 'cli')).key;
  });
  after(() => service.close());

  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${service.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  it('starts unbranded, then stores every field and serves the logo by its hash with a year of cache', async () => {
    const empty = await call('GET', `/clients/${service.clientId}/branding`);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body, {
      clientId: service.clientId,
      displayName: null,
      accent: null,
      accentText: null,
      termsUrl: null,
      privacyUrl: null,
      mailSenderName: null,
      logoUrl: null,
    });
    const logo = fixture('logo-circle.png');
    const changed = await call('PATCH', `/clients/${service.clientId}/branding`, {
      displayName: 'Acme Wiki',
      accent: '#0A64D8',
      termsUrl: 'https://wiki.example/terms',
      privacyUrl: 'https://wiki.example/privacy',
      mailSenderName: 'Acme Wiki',
      logo: logo.toString('base64'),
    });
    assert.equal(changed.status, 200);
    const sha = createHash('sha256').update(logo).digest('hex');
    assert.deepEqual(changed.body, {
      clientId: service.clientId,
      displayName: 'Acme Wiki',
      accent: '#0a64d8',
      accentText: '#ffffff',
      termsUrl: 'https://wiki.example/terms',
      privacyUrl: 'https://wiki.example/privacy',
      mailSenderName: 'Acme Wiki',
      logoUrl: `${service.url}/branding/logos/${sha}.png`,
    });
    assert.deepEqual((await call('GET', `/clients/${service.clientId}/branding`)).body, changed.body);

    const served = await fetch(changed.body.logoUrl);
    assert.equal(served.status, 200);
    assert.equal(served.headers.get('content-type'), 'image/png');
    assert.equal(served.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff');
    assert.deepEqual(Buffer.from(await served.arrayBuffer()), logo);
    // Another hash, or the right hash with another extension, is nothing.
    assert.equal((await fetch(`${service.url}/branding/logos/${'0'.repeat(64)}.png`)).status, 404);
    assert.equal((await fetch(`${service.url}/branding/logos/${sha}.jpg`)).status, 404);

    const events = await call('GET', `/events?type=client.updated`);
    assert.equal(events.body.events[0].detail.branding, 'displayName accent termsUrl privacyUrl mailSenderName logo');
  });

  it('changes one field without touching the others, and null clears one', async () => {
    const before = (await call('GET', `/clients/${service.clientId}/branding`)).body;
    const changed = await call('PATCH', `/clients/${service.clientId}/branding`, { termsUrl: null, accent: '#c2410c' });
    assert.equal(changed.status, 200);
    assert.deepEqual(changed.body, { ...before, termsUrl: null, accent: '#c2410c', accentText: '#ffffff' });
    const logo = fixture('logo-square.png');
    const relogo = await call('PATCH', `/clients/${service.clientId}/branding`, { logo: logo.toString('base64') });
    assert.notEqual(relogo.body.logoUrl, before.logoUrl, 'a new logo is a new URL');
    assert.equal((await fetch(before.logoUrl)).status, 404, 'the old logo is no longer served');
    assert.equal((await call('PATCH', `/clients/${service.clientId}/branding`, { logo: null })).body.logoUrl, null);
  });

  it('serves the stylesheet of an accent that passes the contrast check, and nothing else', async () => {
    const css = await fetch(`${service.url}/branding/accent/0a64d8.css`);
    assert.equal(css.status, 200);
    assert.equal(css.headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal(css.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    assert.match(await css.text(), /--accent: #0a64d8;\s*--accent-text: #ffffff;/);
    for (const file of ['ffff00.css', '000000.css', 'red.css', '0A64D8.css', '0a64d8.css;x', '0a64d8']) {
      assert.equal((await fetch(`${service.url}/branding/accent/${encodeURIComponent(file)}`)).status, 404, file);
    }
  });

  it('sets the product name; the built-in hosted client has no branding of its own', async () => {
    const initial = await call('GET', '/settings');
    const none = { policyUrl: null, termsUrl: null, documentationUrl: null };
    assert.deepEqual(initial.body, { productName: new URL(service.ctx.config.issuer).hostname, ...none });
    const set = await call('PATCH', '/settings', { productName: '  Acme Accounts ' });
    assert.deepEqual(set.body, { productName: 'Acme Accounts', ...none });
    assert.deepEqual((await call('GET', '/settings')).body, { productName: 'Acme Accounts', ...none });
    // The service's own pages, published in discovery; null takes one out again.
    const pages = {
      policyUrl: 'https://acme.example/privacy',
      termsUrl: 'https://acme.example/terms',
      documentationUrl: 'https://acme.example/developers',
    };
    assert.deepEqual((await call('PATCH', '/settings', pages)).body, { productName: 'Acme Accounts', ...pages });
    const discovery = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal(discovery.op_policy_uri, pages.policyUrl);
    assert.equal(discovery.op_tos_uri, pages.termsUrl);
    assert.equal(discovery.service_documentation, pages.documentationUrl);
    assert.deepEqual(discovery.ui_locales_supported, ['en', 'de', 'es', 'fr']);
    assert.equal(discovery.claims_parameter_supported, false);
    await call('PATCH', '/settings', { policyUrl: null, termsUrl: '', documentationUrl: null });
    const cleared = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.equal('op_policy_uri' in cleared || 'op_tos_uri' in cleared || 'service_documentation' in cleared, false);
    assert.equal((await call('GET', '/clients/cli_hosted_signin/branding')).status, 404);
    assert.equal((await call('PATCH', '/clients/cli_hosted_signin/branding', { displayName: 'x' })).status, 404);
    assert.equal((await call('GET', '/clients/cli_unknown/branding')).status, 404);
    const brand = await service.ctx.branding.brandOf({ id: 'cli_hosted_signin', name: 'Hosted sign-in' });
    assert.equal(brand.name, 'Acme Accounts');
  });

  it('deleting a client deletes its branding and stops serving its logo', async () => {
    const other = await service.ctx.clients.create({ name: 'Other', origins: [APP_ORIGIN] });
    const logo = fixture('logo-circle.png');
    const set = await call('PATCH', `/clients/${other.clientId}/branding`, { logo: logo.toString('base64'), displayName: 'Other App' });
    assert.equal((await fetch(set.body.logoUrl)).status, 200);
    assert.equal((await call('DELETE', `/clients/${other.clientId}`)).status, 204);
    assert.equal((await fetch(set.body.logoUrl)).status, 404);
  });
});

describe('branding through the CLI', () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-branding-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('clients update --logo --accent --display-name …, clients branding, settings set product-name', async () => {
    const created = await runCli(['clients', 'create', '--name', 'wiki', '--origin', APP_ORIGIN, '--json', '--data', data]);
    assert.equal(created.code, 0, created.stderr);
    const { clientId } = JSON.parse(created.stdout);
    const logo = fileURLToPathOf('logo-circle.png');
    const update = await runCli([
      'clients',
      'update',
      clientId,
      '--logo',
      logo,
      '--accent',
      '#0a64d8',
      '--display-name',
      'Acme Wiki',
      '--terms-url',
      'https://wiki.example/terms',
      '--mail-sender-name',
      'Acme Wiki',
      '--json',
      '--data',
      data,
    ]);
    assert.equal(update.code, 0, update.stderr);
    const shown = JSON.parse(update.stdout);
    assert.equal(shown.displayName, 'Acme Wiki');
    assert.equal(shown.accent, '#0a64d8');
    assert.match(shown.logoUrl, /\/branding\/logos\/[0-9a-f]{64}\.png$/);
    const read = await runCli(['clients', 'branding', clientId, '--json', '--data', data]);
    assert.deepEqual(JSON.parse(read.stdout), shown);
    const cleared = await runCli(['clients', 'update', clientId, '--logo', '', '--terms-url', '', '--json', '--data', data]);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(JSON.parse(cleared.stdout).logoUrl, null);
    assert.equal(JSON.parse(cleared.stdout).termsUrl, null);

    const set = await runCli(['settings', 'set', 'product-name', 'Acme Accounts', '--json', '--data', data]);
    assert.equal(set.code, 0, set.stderr);
    const none = { policyUrl: null, termsUrl: null, documentationUrl: null };
    assert.deepEqual(JSON.parse(set.stdout), { productName: 'Acme Accounts', ...none }, 'the API shape, as settings show --json');
    const settings = await runCli(['settings', 'show', '--json', '--data', data]);
    assert.deepEqual(JSON.parse(settings.stdout), { productName: 'Acme Accounts', ...none });
    const policy = await runCli(['settings', 'set', 'policy-url', 'https://acme.example/privacy', '--json', '--data', data]);
    assert.equal(JSON.parse(policy.stdout).policyUrl, 'https://acme.example/privacy');
    const notAPage = await runCli(['settings', 'set', 'terms-url', 'javascript:alert(1)', '--data', data]);
    assert.equal(notAPage.code, 2, 'a URL that is no page is refused');
    const removed = await runCli(['settings', 'set', 'policy-url', '', '--json', '--data', data]);
    assert.deepEqual(JSON.parse(removed.stdout), { productName: 'Acme Accounts', ...none });
    const bad = await runCli(['settings', 'set', 'colour', 'x', '--data', data]);
    assert.equal(bad.code, 2);
  });
});

describe('the accent check (WCAG 2.1 contrast)', () => {
  it('computes the WCAG ratio: black on white is 21:1, a colour on itself 1:1', () => {
    assert.equal(contrast('#000000', '#ffffff'), 21);
    assert.equal(contrast('#0a64d8', '#0a64d8'), 1);
    // #767676 on white is the well-known 4.54:1.
    assert.equal(contrast('#767676', '#ffffff').toFixed(2), '4.54');
  });

  it('the design system backgrounds leave a band of accents that pass both themes', () => {
    assert.ok(contrast('#0a64d8', PAGE_BACKGROUND_LIGHT) >= ACCENT_SURFACE_CONTRAST_MIN);
    assert.ok(contrast('#0a64d8', PAGE_BACKGROUND_DARK) >= ACCENT_SURFACE_CONTRAST_MIN);
    assert.ok(contrast('#0a64d8', '#ffffff') >= ACCENT_TEXT_CONTRAST_MIN);
  });
});

function fileURLToPathOf(name: string): string {
  return new URL(`../support/fixtures/${name}`, import.meta.url).pathname;
}
