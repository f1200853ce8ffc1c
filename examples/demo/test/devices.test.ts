/**
 * Device management in a real browser (Debian chromium through playwright-core), through the
 * <script> builds of service-web and service-web/devices on a page of a registered origin: two browser contexts register
 * as two devices of one user; the first lists both, renames and revokes the second; the
 * second's next authenticate gets OTP_NEEDED and its stored key is gone; then "sign out
 * everywhere else". Codes come from the development mailbox, so a second code for the address
 * waits out the service's resend spacing (short here: the harness's SEND_SPACING_SECONDS).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { inPage } from './fixtures.ts';
import { plainPage, SEND_WINDOW_MS, type Stack, screenshot, startStack } from './harness.ts';

describe('devices in a real browser', { timeout: 6 * 60_000 }, () => {
  let stack: Stack;
  const email = `dev.${Date.now().toString(36)}@example.com`;
  let lastSend = 0;
  before(async () => {
    stack = await startStack();
    stack.registered.pages.set(
      '/devices.html',
      plainPage(
        stack.serviceUrl,
        'Devices',
        // Device management is its own script (service-web/devices), loaded beside the core one.
        `await new Promise((resolve, reject) => {
           const script = Object.assign(document.createElement('script'), { src: ${JSON.stringify(`${stack.serviceUrl}/sdk/v1/service-web-devices.js`)}, onload: resolve, onerror: reject });
           document.head.append(script);
         });
         window.sw = ServiceWeb.ServiceInitializer;
         window.devices = new ServiceWebDevices.ServiceDevices();
         const key = ${JSON.stringify(stack.client.publishableKey)}, url = ${JSON.stringify(stack.serviceUrl)};
         const ready = await devices.init(key, url);
         if (ready.status !== 'INITIALIZED') return ready;
         return await sw.init(key, url);`,
      ),
    );
  });
  after(async () => {
    await stack?.close();
  });

  /** A fresh browser context (its own IndexedDB) with the library initialised. */
  async function newBrowser(): Promise<Page> {
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.registered.origin}/devices.html`);
    const init = (await (await page.waitForFunction(() => (window as any).__result)).jsonValue()) as any;
    assert.equal(init.status, 'INITIALIZED', JSON.stringify(init));
    return page;
  }

  const lib = inPage;

  /** Device records this browser keeps in IndexedDB (service-web's database). */
  const storedKeys = (page: Page) =>
    lib<number>(
      page,
      `return await new Promise((resolve, reject) => {
         const open = indexedDB.open('service-web');
         open.onerror = () => reject(open.error);
         open.onsuccess = () => {
           const db = open.result;
           if (!db.objectStoreNames.contains('devices')) { db.close(); return resolve(0); }
           const count = db.transaction('devices').objectStore('devices').count();
           count.onsuccess = () => { db.close(); resolve(count.result); };
         };
       });`,
    );

  async function waitSendWindow() {
    const wait = lastSend + SEND_WINDOW_MS - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }

  /** authenticate → OTP from the mailbox → verifyEmailOtp → verifyDevice: a remembered device. */
  async function register(page: Page) {
    await waitSendWindow();
    const seen = (await stack.mails(email)).length;
    const started = await lib(page, 'return sw.authenticate(arg, { rememberDevice: true });', email);
    lastSend = Date.now();
    assert.equal(started.status, 'OTP_NEEDED', JSON.stringify(started));
    const otp = await stack.nextMailOtp(email, seen);
    assert.equal((await lib(page, 'return sw.verifyEmailOtp(arg);', { userid: email, otp })).status, 'SUCCESS');
    const done = await lib(page, 'return sw.verifyDevice({ userid: arg });', email);
    assert.equal(done.status, 'SUCCESS', JSON.stringify(done));
    assert.equal(done.deviceRemembered, true);
  }

  let first: Page;
  let second: Page;
  let secondId: string;

  it('two contexts register as two devices; the first lists both and renames the second', async () => {
    first = await newBrowser();
    second = await newBrowser();
    await register(first);
    await register(second);
    const notices = (await stack.mails(email)).filter((m) => m.subject.startsWith('A new device can now sign in'));
    assert.equal(notices.length, 2, 'each new device was mailed about');

    const listed = await lib(first, 'return devices.listDevices(arg);', email);
    assert.equal(listed.status, 'SUCCESS', JSON.stringify(listed));
    assert.equal(listed.devices.length, 2);
    const mine = listed.devices.find((d: any) => d.current);
    const other = listed.devices.find((d: any) => !d.current);
    assert.ok(mine && other, JSON.stringify(listed.devices));
    assert.match(mine.browser, /Chrom/, 'browser parsed from the real User-Agent');
    assert.match(mine.os, /Linux/);
    secondId = other.id;

    const renamed = await lib(first, 'return devices.renameDevice(arg);', { userid: email, deviceId: secondId, name: 'Second browser' });
    assert.equal(renamed.status, 'SUCCESS', JSON.stringify(renamed));
    const again = await lib(second, 'return devices.listDevices(arg);', email);
    assert.equal(again.devices.find((d: any) => d.current).name, 'Second browser', 'the second sees its new name');
    const bad = await lib(first, 'return devices.renameDevice(arg);', { userid: email, deviceId: secondId, name: 'bad\u0007name' });
    assert.equal(bad.status, 'INVALID_REQUEST');
    await screenshot(first, '20-devices-listed');
  });

  it('the first revokes the second: its next authenticate gets OTP_NEEDED and its stored key is gone', async () => {
    assert.equal(await storedKeys(second), 1);
    const revoked = await lib(first, 'return devices.revokeDevice(arg);', { userid: email, deviceId: secondId });
    assert.deepEqual([revoked.status, revoked.revoked], ['SUCCESS', 1], JSON.stringify(revoked));
    await waitSendWindow();
    const next = await lib(second, 'return sw.authenticate(arg, { rememberDevice: true });', email);
    lastSend = Date.now();
    assert.equal(next.status, 'OTP_NEEDED', JSON.stringify(next));
    assert.equal(await storedKeys(second), 0, 'the refused key was removed from IndexedDB');
    const list = await lib(second, 'return devices.listDevices(arg);', email);
    assert.equal(list.status, 'DEVICE_KEY_UNAVAILABLE');
    const remaining = await lib(first, 'return devices.listDevices(arg);', email);
    assert.deepEqual(
      remaining.devices.map((d: any) => d.current),
      [true],
    );
  });

  it('"sign out everywhere else" from the first ends the second (registered again) and keeps the first', async () => {
    await register(second);
    assert.equal(await storedKeys(second), 1);
    const out = await lib(first, 'return devices.revokeOtherDevices(arg);', email);
    assert.deepEqual([out.status, out.revoked], ['SUCCESS', 1], JSON.stringify(out));
    const refused = await lib(second, 'return devices.listDevices(arg);', email);
    assert.equal(refused.status, 'DEVICE_KEY_UNAVAILABLE', JSON.stringify(refused));
    assert.equal(await storedKeys(second), 0, 'a refused device-management proof also drops the key');
    const still = await lib(first, 'return sw.authenticate(arg);', email);
    assert.equal(still.status, 'SUCCESS', 'the first device still signs in without a code');
    await screenshot(first, '21-devices-signed-out-elsewhere');
  });

  it("the demo's account page: new-device banner, device list, rename, sign out everywhere else", async () => {
    const user = `demo.${Date.now().toString(36)}@example.com`;
    let sent = 0;
    /** Signs `user` in through the demo's page in a fresh context, as a new remembered device. */
    const demoSignIn = async () => {
      const wait = sent + SEND_WINDOW_MS - Date.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const page = await (await stack.browser.newContext()).newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(stack.demoUrl);
      await page.waitForSelector('#app[data-ready="true"]');
      const seen = (await stack.mails(user)).length;
      await page.fill('#email', user);
      await page.click('#email-step button[type=submit]');
      await page.waitForSelector('#otp-step:not([hidden])');
      sent = Date.now();
      await page.fill('#otp', await stack.nextMailOtp(user, seen));
      await page.click('#otp-step button[type=submit]');
      await page.waitForSelector('#method-step:not([hidden])');
      await page.check('#method-step input[value=none]');
      await page.click('#method-step button[type=submit]');
      await page.waitForURL(`${stack.demoUrl}/account`);
      await page.waitForSelector('#account[data-state="ready"]');
      return page;
    };
    const names = (page: Page) => page.$$eval('#devices li .device-name', (els) => els.map((e) => e.textContent));

    const laptop = await demoSignIn();
    assert.equal(await laptop.isVisible('#new-device'), true, 'banner after sign-in on a new device');
    assert.match((await laptop.textContent('#new-device')) ?? '', /emailed you/);
    await laptop.waitForSelector('#devices[data-state="SUCCESS"] li[data-current="true"]');
    const phone = await demoSignIn();
    await laptop.reload();
    await laptop.waitForSelector('#devices[data-state="SUCCESS"] li:nth-child(2)');
    assert.equal((await names(laptop)).length, 2);

    const other = laptop.locator('#devices li[data-current="false"]');
    await other.locator('input[name=name]').fill('Phone');
    await other.locator('button[type=submit]').click();
    await laptop.waitForSelector('#message.success');
    await laptop.waitForFunction(() => [...document.querySelectorAll('#devices .device-name')].some((e) => e.textContent === 'Phone'));
    await screenshot(laptop, '22-demo-devices');

    await laptop.click('#revoke-others');
    await laptop.waitForFunction(() => document.querySelectorAll('#devices li').length === 1);
    assert.match((await laptop.textContent('#message')) ?? '', /Signed out everywhere else \(1 device\)/);
    assert.equal(await laptop.getAttribute('#devices li', 'data-current'), 'true');

    await phone.reload();
    await phone.waitForSelector('#devices[data-state="DEVICE_KEY_UNAVAILABLE"]', { state: 'attached' });
    assert.match((await phone.textContent('#devices-note')) ?? '', /not a remembered device/);
    await screenshot(laptop, '23-demo-signed-out-elsewhere');
  });
});
