/**
 * Passkeys in a real browser: Debian chromium through playwright-core, with Chromium's virtual
 * authenticator (DevTools protocol WebAuthn.addVirtualAuthenticator: CTAP2, internal, resident
 * keys, user verification). Pages on http://localhost:PORT and http://sub.localhost:PORT (both
 * secure contexts, rp ids "localhost" and "sub.localhost") load the <script> builds of service-web
 * and service-web/passkeys. A signed-in device registers a passkey; then: sign-in with and without
 * an address (the code exchanged at /oauth/token: amr hwk user mfa), failed user verification, a
 * cloned credential (its counter behind), the credential under another rp id, a replayed
 * assertion, a revoked passkey; and the demo on http://localhost: "Add a passkey" on the account
 * page, then "Sign in with a passkey" in another browser. One browser; one user signs in by
 * email once and adds a passkey per scenario from a fresh virtual authenticator, so no send
 * window is waited out and little time goes to the mailbox.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { addVirtualAuthenticator, demoSignUp, inPage, redeemCode, startRegisteredDemo, type VirtualAuthenticator } from './fixtures.ts';
import { ROOT, type Stack, screenshot, startStack } from './harness.ts';

describe('passkeys in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let origin: string;
  let subOrigin: string;
  let client: { clientId: string; publishableKey: string; secretKey: string };
  let n = 0;
  const newEmail = () => `pk.${Date.now().toString(36)}.${++n}@example.com`;

  before(async () => {
    stack = await startStack();
    const port = new URL(stack.registered.origin).port;
    origin = `http://localhost:${port}`;
    subOrigin = `http://sub.localhost:${port}`;
    client = await stack.idp('clients', 'create', '--name', 'Passkeys', '--origin', origin, '--origin', subOrigin);
    const passkeysScript = readFileSync(join(ROOT, 'packages/web/dist/service-web-passkeys.global.js'), 'utf8').replace(
      /<\/script/gi,
      '<\\/script',
    );
    stack.registered.pages.set(
      '/passkeys.html',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Passkeys</title></head><body>
<h1>Passkeys</h1><pre id="out">…</pre>
<script src="${stack.serviceUrl}/sdk/v1/service-web.js"></script>
<script>${passkeysScript}</script>
<script src="${stack.serviceUrl}/sdk/v1/service-web-devices.js"></script>
<script>
(async () => {
  // The sign-in request bodies, to replay one.
  window.sent = [];
  const recording = (url, init) => { if (String(url).endsWith('/v1/passkeys/authentication')) window.sent.push(init.body); return fetch(url, init); };
  window.sw = ServiceWeb.ServiceInitializer;
  window.passkeys = new ServiceWebPasskeys.ServicePasskeys({ fetch: recording });
  const key = ${JSON.stringify(client.publishableKey)}, url = ${JSON.stringify(stack.serviceUrl)};
  window.devices = new ServiceWebDevices.ServiceDevices();
  window.__ready = [await sw.init(key, url), await passkeys.init(key, url), await devices.init(key, url)];
  document.getElementById('out').textContent = JSON.stringify(window.__ready);
})();
</script></body></html>`,
    );
  });
  after(async () => {
    await stack?.close();
  });

  async function openPage(at = origin): Promise<{ page: Page; context: BrowserContext }> {
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${at}/passkeys.html`);
    const ready = (await (await page.waitForFunction(() => (window as any).__ready)).jsonValue()) as any[];
    assert.deepEqual(
      ready.map((r) => r.status),
      ['INITIALIZED', 'INITIALIZED', 'INITIALIZED'],
      JSON.stringify(ready),
    );
    return { page, context };
  }

  const lib = inPage;

  /** A remembered device for a new user: authenticate, the mailed code, verifyEmailOtp, verifyDevice. */
  async function signUp(page: Page, email: string) {
    const seen = (await stack.mails(email)).length;
    const started = await lib(page, 'return sw.authenticate(arg, { rememberDevice: true });', email);
    assert.equal(started.status, 'OTP_NEEDED', JSON.stringify(started));
    const otp = await stack.nextMailOtp(email, seen);
    assert.equal((await lib(page, 'return sw.verifyEmailOtp(arg);', { userid: email, otp })).status, 'SUCCESS');
    const done = await lib(page, 'return sw.verifyDevice({ userid: arg });', email);
    assert.equal(done.status, 'SUCCESS', JSON.stringify(done));
  }

  /** One user signed in once on one page (its remembered device adds every passkey): no OTP mail per scenario. */
  let home: { email: string; page: Page; authenticator?: VirtualAuthenticator } | undefined;

  /** A fresh virtual authenticator on the signed-in page, and a passkey registered on it. */
  async function withPasskey(name = 'Laptop') {
    if (!home) {
      const email = newEmail();
      const { page } = await openPage();
      await signUp(page, email);
      home = { email, page };
    }
    const { email, page } = home;
    if (home.authenticator) {
      await home.authenticator.cdp.send('WebAuthn.removeVirtualAuthenticator', { authenticatorId: home.authenticator.authenticatorId });
    }
    const authenticator = await addVirtualAuthenticator(page);
    home.authenticator = authenticator;
    const added = await lib(page, 'return passkeys.add(arg);', { userid: email, name });
    assert.equal(added.status, 'SUCCESS', JSON.stringify(added));
    return { email, page, authenticator, passkeyId: added.deviceId as string };
  }

  const claims = (code: string) => redeemCode(stack, client, code);

  it('registers a passkey on a signed-in device; it is listed; a fresh browser signs in with it, without and with the address', async () => {
    const { email, page, authenticator, passkeyId } = await withPasskey();
    const listed = await lib(page, 'return devices.listDevices(arg);', email);
    const passkey = listed.devices.find((d: any) => d.id === passkeyId);
    assert.deepEqual([passkey.kind, passkey.name, passkey.synced], ['passkey', 'Laptop', false], JSON.stringify(listed));
    const again = await lib(page, 'return passkeys.add(arg);', { userid: email });
    assert.equal(again.status, 'PASSKEY_EXISTS', 'excludeCredentials: this authenticator already holds one');

    // Another browser (no remembered device) with the same authenticator's credential: a phone's passkey, say.
    const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId });
    const other = await openPage();
    const otherAuthenticator = await addVirtualAuthenticator(other.page);
    await otherAuthenticator.cdp.send('WebAuthn.addCredential', {
      authenticatorId: otherAuthenticator.authenticatorId,
      credential: credentials[0] as any,
    });
    const without = await lib(other.page, 'return passkeys.signIn();');
    assert.equal(without.status, 'SUCCESS', JSON.stringify(without));
    const token = await claims(without.code);
    assert.equal(token.email, email);
    assert.deepEqual(token.amr, ['hwk', 'user', 'mfa']);
    assert.equal(token.device_id, passkeyId);
    const withAddress = await lib(other.page, 'return passkeys.signIn({ userid: arg });', email.toUpperCase());
    assert.equal(withAddress.status, 'SUCCESS', JSON.stringify(withAddress));
    const wrongAddress = await lib(other.page, 'return passkeys.signIn({ userid: arg });', newEmail());
    assert.equal(wrongAddress.status, 'PASSKEY_REFUSED', JSON.stringify(wrongAddress));
    await screenshot(other.page, '40-passkey-signed-in');
  });

  it('a failed user verification signs nobody in', async () => {
    const { page, authenticator } = await withPasskey();
    await authenticator.cdp.send('WebAuthn.setUserVerified', { authenticatorId: authenticator.authenticatorId, isUserVerified: false });
    const r = await lib(page, 'return passkeys.signIn();');
    assert.notEqual(r.status, 'SUCCESS');
    assert.equal(r.success, false);
    assert.equal(r.status, 'PASSKEY_CANCELLED', JSON.stringify(r));
  });

  it('refuses a cloned credential: its counter is behind the original’s', async () => {
    const { page, authenticator } = await withPasskey();
    const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId });
    const copied = credentials[0] as any;
    for (let i = 0; i < 2; i++) assert.equal((await lib(page, 'return passkeys.signIn();')).status, 'SUCCESS');
    const clone = await openPage();
    const cloneAuthenticator = await addVirtualAuthenticator(clone.page);
    await cloneAuthenticator.cdp.send('WebAuthn.addCredential', {
      authenticatorId: cloneAuthenticator.authenticatorId,
      credential: { ...copied, signCount: 0 },
    });
    const r = await lib(clone.page, 'return passkeys.signIn();');
    assert.equal(r.status, 'PASSKEY_REFUSED', JSON.stringify(r));
    assert.equal((await lib(page, 'return passkeys.signIn();')).status, 'SUCCESS', 'the original still signs in');
  });

  it('refuses the credential presented under another relying party id', async () => {
    const { authenticator } = await withPasskey();
    const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId });
    const elsewhere = await openPage(subOrigin);
    const moved = await addVirtualAuthenticator(elsewhere.page);
    await moved.cdp.send('WebAuthn.addCredential', {
      authenticatorId: moved.authenticatorId,
      credential: { ...(credentials[0] as any), rpId: 'sub.localhost' },
    });
    const r = await lib(elsewhere.page, 'return passkeys.signIn();');
    assert.equal(r.status, 'PASSKEY_REFUSED', JSON.stringify(r));
  });

  it('refuses a replayed assertion', async () => {
    const { page } = await withPasskey();
    assert.equal((await lib(page, 'return passkeys.signIn();')).status, 'SUCCESS');
    const replay = await lib(
      page,
      `const r = await fetch(arg.url + '/v1/passkeys/authentication', { method: 'POST', headers: { 'content-type': 'application/json', 'x-service-key': arg.key }, body: window.sent.at(-1) });
       return { status: r.status, body: await r.json() };`,
      { url: stack.serviceUrl, key: client.publishableKey },
    );
    assert.equal(replay.status, 400, JSON.stringify(replay));
    assert.equal(replay.body.code, 'ERR_SESSION_INVALID');
  });

  it('a revoked passkey no longer signs in', async () => {
    const { email, page, passkeyId } = await withPasskey();
    const revoked = await lib(page, 'return devices.revokeDevice(arg);', { userid: email, deviceId: passkeyId });
    assert.equal(revoked.status, 'SUCCESS', JSON.stringify(revoked));
    const r = await lib(page, 'return passkeys.signIn();');
    assert.equal(r.status, 'PASSKEY_REFUSED', JSON.stringify(r));
  });

  it('the demo: "Add a passkey" on the account page, then "Sign in with a passkey" elsewhere, no address typed', async () => {
    const { demo, origin: demoOrigin } = await startRegisteredDemo(stack);
    try {
      const email = newEmail();
      const laptop = await (await stack.browser.newContext()).newPage();
      laptop.setDefaultTimeout(20_000);
      const authenticator = await addVirtualAuthenticator(laptop);
      await laptop.goto(demoOrigin);
      await laptop.waitForSelector('#app[data-ready="true"]');
      assert.equal(await laptop.isVisible('#passkey-signin'), true, 'offered on a domain, with WebAuthn');
      await demoSignUp(stack, laptop, email, demoOrigin);
      await laptop.waitForSelector('#account[data-state="ready"]');
      await laptop.click('#add-passkey');
      await laptop.waitForSelector('#account[data-passkey="SUCCESS"]');
      await laptop.waitForSelector('#devices li[data-kind="passkey"]');
      await screenshot(laptop, '41-demo-passkey-added');

      const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId });
      const phone = await (await stack.browser.newContext()).newPage();
      phone.setDefaultTimeout(20_000);
      const phoneAuthenticator = await addVirtualAuthenticator(phone);
      await phoneAuthenticator.cdp.send('WebAuthn.addCredential', {
        authenticatorId: phoneAuthenticator.authenticatorId,
        credential: credentials[0] as any,
      });
      await phone.goto(demoOrigin);
      await phone.waitForSelector('#app[data-ready="true"]');
      await phone.click('#passkey-signin');
      await phone.waitForURL(`${demoOrigin}/account`);
      await phone.waitForSelector('#account[data-state="ready"]');
      assert.equal(await phone.textContent('#who'), email);
      assert.match((await phone.textContent('dd[data-claim="amr"]')) ?? '', /hwk, user, mfa/);
      await screenshot(phone, '42-demo-signed-in-with-passkey');
    } finally {
      await demo.close();
    }
  });
});
