/**
 * DPoP with the device key, in Chromium (issue 27): the demo page signs proofs with the
 * non-extractable key service-web keeps in IndexedDB (service-web/dpop); the demo's backend
 * forwards them, so the code exchange binds the tokens to the device and the backend reads
 * userinfo with the bound token and a proof the device signed. The access token the page was
 * handed is refused by the service without the device's key: as a bearer token, and with a
 * proof from another browser's key.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoSignUp } from './fixtures.ts';
import { type Stack, screenshot, startStack } from './harness.ts';

describe('DPoP with the device key in a real browser', { timeout: 4 * 60_000 }, () => {
  let stack: Stack;
  const email = `dora.${Date.now().toString(36)}@example.com`;
  before(async () => {
    stack = await startStack();
  });
  after(async () => {
    await stack?.close();
  });

  it('binds the demo`s tokens to the device key, and the backend reads userinfo with them', { timeout: 120_000 }, async () => {
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('pageerror', (error) => console.log(`page error: ${error.message}`));
    const logins: { status: number; body: any }[] = [];
    page.on('response', async (response) => {
      if (response.url() === `${stack.demoUrl}/api/login`) logins.push({ status: response.status(), body: await response.json() });
    });
    await page.goto(stack.demoUrl);
    await page.waitForSelector('#app[data-ready="true"]');
    await demoSignUp(stack, page, email);

    // RFC 9449 8: the first exchange was asked for the service's nonce, and the page signed again with it.
    assert.deepEqual(
      logins.map((l) => [l.status, l.body.error ?? l.body.tokenType]),
      [
        [401, 'use_dpop_nonce'],
        [200, 'DPoP'],
      ],
    );
    const me = await page.evaluate(async () => (await fetch('/api/me')).json());
    assert.equal(me.tokenType, 'DPoP');
    assert.equal(me.userinfo?.email, email, 'the backend read userinfo with the device-bound token');
    assert.equal(me.userinfo?.sub, me.sub);

    // The key is this browser's device key: service-web/dpop, in the page, names the same thumbprint.
    await page.addScriptTag({ url: '/static/service-web-dpop.js' });
    const jkt = await page.evaluate(
      async ([serviceUrl, key, userid]) => {
        const dpop = new (window as any).ServiceWebDpop.ServiceDpop();
        await dpop.init(key, serviceUrl);
        return (await dpop.dpop({ userid, method: 'GET', url: `${serviceUrl}/oauth/userinfo` })).jkt;
      },
      [stack.serviceUrl, stack.client.publishableKey, email] as const,
    );
    assert.equal(me.boundTo, jkt);
    const stored = await page.evaluate(
      () =>
        new Promise<boolean>((resolve) => {
          const open = indexedDB.open('service-web');
          open.onsuccess = () => {
            const read = open.result.transaction('devices').objectStore('devices').getAll();
            read.onsuccess = () =>
              resolve(read.result.every((r: { keyPair: CryptoKeyPair }) => r.keyPair.privateKey.extractable === false));
          };
        }),
    );
    assert.equal(stored, true, 'the private key cannot leave the browser');

    // The access token alone, copied off the page, is refused by the service.
    const accessToken = logins[1]?.body.accessToken as string;
    const asBearer = await fetch(`${stack.serviceUrl}/oauth/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
    assert.equal(asBearer.status, 401);
    const other = await stack.browser.newContext();
    const otherPage = await other.newPage();
    await otherPage.goto(stack.demoUrl);
    await otherPage.waitForSelector('#app[data-ready="true"]');
    const thief = await otherPage.evaluate(
      async ([serviceUrl, key, userid]) => {
        const dpop = new (window as any).ServiceWebDpop.ServiceDpop();
        await dpop.init(key, serviceUrl);
        return (await dpop.dpop({ userid, method: 'GET', url: `${serviceUrl}/oauth/userinfo` })).status;
      },
      [stack.serviceUrl, stack.client.publishableKey, email] as const,
    );
    assert.equal(thief, 'DEVICE_KEY_UNAVAILABLE', 'another browser has no key to sign with');
    await screenshot(page, 'dpop-device-bound-account');
    await other.close();
    await context.close();
  });
});
