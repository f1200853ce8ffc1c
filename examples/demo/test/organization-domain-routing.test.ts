/**
 * Each company's own sign-in, in Chromium (issue 38): Acme proves it owns its domain with a DNS
 * TXT record (served by a DNS server on loopback the service is pointed at), routes it to its own
 * OpenID Connect provider (node-oidc-provider on loopback), and from then on the hosted
 * email-first screen sends an Acme address straight to that provider: no "Continue with"
 * button, no mailed code. An address of another domain still gets its code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { startDns, type TestDns } from '../../../packages/idp/test/support/dns-server.ts';
import { startUpstream, type TestUpstream } from '../../../packages/idp/test/support/upstream.ts';
import { authorizationRequest, callbackClaims, type RelyingParty, registerRelyingParty } from './fixtures.ts';
import { type PageServer, type Stack, servePages, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

describe('a verified domain routes its addresses to the organization’s provider, in Chromium', { timeout: 3 * 60_000 }, () => {
  let dns: TestDns;
  let stack: Stack;
  let upstream: TestUpstream;
  let pages: PageServer;
  let app: RelyingParty;
  const run = Date.now().toString(36);
  const domain = `acme-${run}.example`;
  const violations: string[] = [];

  before(async () => {
    dns = await startDns();
    stack = await startStack({ env: { SERVICE_IDP_DNS_SERVERS: dns.server } });
    upstream = await startUpstream(`${stack.serviceUrl}/upstream/callback`);
    pages = await servePages();
    app = await registerRelyingParty(stack, pages, 'Acme Wiki', '/wiki/callback');
    // The operator's steps: Acme's provider as a connection no application shows as a button,
    // the organization, its domain claim, the record Acme's DNS administrator publishes, the proof, the route.
    const connection = await stack.idp<{ id: string }>(
      ...['connections', 'create', '--preset', 'oidc', '--upstream-issuer', upstream.issuer, '--client-id', upstream.clientId],
      ...['--client-secret', upstream.clientSecret, '--name', 'Acme SSO'],
    );
    const org = await stack.idp<{ id: string }>('orgs', 'create', '--name', 'Acme');
    const claim = await stack.idp<{ record: { name: string; value: string } }>('orgs', 'domains', 'add', org.id, domain);
    dns.publish(claim.record.name, [[claim.record.value]]);
    const verified = await stack.idp<{ verified: boolean; verifiedBy: string }>('orgs', 'domains', 'verify', org.id, domain);
    assert.deepEqual([verified.verified, verified.verifiedBy], [true, 'dns']);
    await stack.idp('orgs', 'domains', 'route', org.id, domain, '--connection', connection.id);
  });
  after(async () => {
    assert.deepEqual(violations, [], 'no CSP violation');
    await pages?.close();
    await upstream?.close();
    await stack?.close();
    await dns?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await (await stack.browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    return page;
  }

  it('an Acme address goes from the address step to Acme’s provider with no button and no mailed code', async () => {
    const email = `alice@${domain}`;
    upstream.signInAs({ sub: `acme-alice-${run}`, email });
    const page = await newPage();
    const { url, expected } = await authorizationRequest(app);
    await page.goto(url.href);
    await page.getByRole('heading', { name: 'Sign in to Acme Wiki' }).waitFor();
    // The organization's provider is no button here: the address alone leads there.
    assert.equal(await page.getByRole('group', { name: 'Or continue with' }).isVisible(), false);
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      await assertAccessible(page, `the sign-in page of an app with no buttons (${size})`);
    }
    const atProvider: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(upstream.issuer)) atProvider.push(request.url());
    });
    await page.getByLabel('Email address').fill(email);
    await page.getByRole('button', { name: 'Continue' }).click();
    const claims = await callbackClaims(page, app, expected);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);
    assert.ok(atProvider.length > 0, 'the browser went to Acme’s provider');
    assert.deepEqual(
      (await stack.mails(email)).filter((mail) => /code/i.test(mail.subject ?? '')),
      [],
      'no sign-in code was mailed',
    );
    await page.context().close();
  });

  it('an address of another domain still signs in by mailed code', async () => {
    const email = `bob.${run}@example.com`;
    const page = await newPage();
    const { url } = await authorizationRequest(app);
    await page.goto(url.href);
    await page.getByLabel('Email address').fill(email);
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByLabel(/6-digit code we emailed/).waitFor();
    assert.ok((await stack.nextMailOtp(email, seen)).match(/^\d{6}$/));
    await page.context().close();
  });
});
