/**
 * The hosted sign-in page's files as served: the page loads one script, the bundle built by
 * packages/hosted (service-web compiled in, so no separate SDK script), byte for byte; the CSP
 * is PAGE_CSP exactly (our own files only, no inline script or style); the style sheet is the
 * package's. The script and style sheet are cacheable for five minutes, as before.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { PAGE_CSP } from '../../src/http/page.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { authorize, RP_CALLBACK, registerApp } from '../support/oidc-helpers.js';

const built = (file: string) => readFileSync(new URL(`../../../hosted/dist/${file}`, import.meta.url), 'utf8');

describe('the hosted sign-in page serves the built bundle under the same CSP', () => {
  let service: TestService;
  let html: string;
  let csp: string | null;
  before(async () => {
    service = await startTestService();
    const rp = await registerApp(service, 'RP');
    const start = await authorize(service, { response_type: 'code', client_id: rp.clientId, redirect_uri: RP_CALLBACK, scope: 'openid' });
    const page = await fetch(new URL(start.location ?? '', service.url));
    assert.equal(page.status, 200);
    csp = page.headers.get('content-security-policy');
    html = await page.text();
  });
  after(() => service.close());

  it('answers with the strict policy, unchanged', () => {
    assert.equal(
      csp,
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    assert.equal(csp, PAGE_CSP);
  });

  it('loads one script, /signin/signin.js, and no longer the SDK script (the messages are a JSON data block, never run)', () => {
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map(([tag]) => tag);
    assert.deepEqual(scripts, ['<script type="application/json" id="service-messages">', '<script src="/signin/signin.js" defer>']);
    assert.doesNotMatch(html, /\/sdk\/v1\//);
  });

  it('serves the bundle packages/hosted built, byte for byte, with service-web inside', async () => {
    const response = await fetch(`${service.url}/signin/signin.js`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(response.headers.get('cache-control'), 'public, max-age=300');
    const script = await response.text();
    assert.equal(script, built('signin.js'));
    assert.match(script, /x-service-authorization-request/, "service-web's request header is in the bundle");
    assert.doesNotMatch(script, /ServiceWeb\./, 'no global of the SDK script');
  });

  it('serves the package`s style sheet', async () => {
    const response = await fetch(`${service.url}/signin/signin.css`);
    assert.equal(response.status, 200);
    assert.equal(await response.text(), built('signin.css'));
  });
});
