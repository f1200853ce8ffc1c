/**
 * A passkey as the MFA method in a real browser (Debian chromium through playwright-core,
 * Chromium's virtual authenticator over the DevTools protocol). Through the browser libraries
 * (the <script> builds of service-web and service-web/passkeys): a new user chooses a passkey
 * at registration (verifyDevice with mfaMethod passkey, then enrollMfa), then signs in again on
 * that remembered device and passes the MFA step with the passkey (verifyMfa, remember_me),
 * after which the device signs in without it. Then the demo: the method step offers "Passkey", the passkey is
 * made, the recovery codes shown, and a later sign-in asks for the passkey.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { addVirtualAuthenticator, demoEmailAndCode, inPage, redeemCode, startRegisteredDemo } from './fixtures.ts';
import { ROOT, type Stack, screenshot, startStack } from './harness.ts';

describe('a passkey as the MFA method, in a real browser', { timeout: 5 * 60_000 }, () => {
  let stack: Stack;
  let origin: string;
  let client: { clientId: string; publishableKey: string; secretKey: string };
  let n = 0;
  const newEmail = () => `pkmfa.${Date.now().toString(36)}.${++n}@example.com`;

  before(async () => {
    stack = await startStack();
    origin = `http://localhost:${new URL(stack.registered.origin).port}`;
    client = await stack.idp('clients', 'create', '--name', 'Passkey MFA', '--origin', origin);
    const passkeysScript = readFileSync(join(ROOT, 'packages/web/dist/service-web-passkeys.global.js'), 'utf8').replace(
      /<\/script/gi,
      '<\\/script',
    );
    stack.registered.pages.set(
      '/passkey-mfa.html',
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Passkey MFA</title></head><body>
<script src="${stack.serviceUrl}/sdk/v1/service-web.js"></script>
<script>${passkeysScript}</script>
<script>
(async () => {
  window.sw = ServiceWeb.ServiceInitializer;
  window.passkeys = new ServiceWebPasskeys.ServicePasskeys();
  const key = ${JSON.stringify(client.publishableKey)}, url = ${JSON.stringify(stack.serviceUrl)};
  window.__ready = [await sw.init(key, url), await passkeys.init(key, url)];
})();
</script></body></html>`,
    );
  });
  after(async () => {
    await stack?.close();
  });

  const lib = inPage;

  const claims = (code: string) => redeemCode(stack, client, code);

  it('enrolls a passkey as the MFA method at registration, then passes the MFA step with it (remember_me)', async () => {
    const email = newEmail();
    const page = await (await stack.browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
    const authenticator = await addVirtualAuthenticator(page);
    await page.goto(`${origin}/passkey-mfa.html`);
    const ready = (await (await page.waitForFunction(() => (window as any).__ready)).jsonValue()) as any[];
    assert.deepEqual(
      ready.map((r) => r.status),
      ['INITIALIZED', 'INITIALIZED'],
    );

    const seen = (await stack.mails(email)).length;
    assert.equal((await lib(page, 'return sw.authenticate(arg, { rememberDevice: true });', email)).status, 'OTP_NEEDED');
    const otp = await stack.nextMailOtp(email, seen);
    assert.equal((await lib(page, 'return sw.verifyEmailOtp(arg);', { userid: email, otp })).status, 'SUCCESS');
    const chosen = await lib(page, 'return sw.verifyDevice({ userid: arg, mfaMethod: ServiceWeb.MfaMethod.PASSKEY });', email);
    assert.equal(chosen.status, 'FINALIZE_REGISTRATION_NEEDED', JSON.stringify(chosen));
    assert.equal(chosen.method, 'passkey');
    const enrolled = await lib(page, 'return passkeys.enrollMfa(arg);', { userid: email, sessionId: chosen.sessionId });
    assert.equal(enrolled.status, 'SUCCESS', JSON.stringify(enrolled));
    assert.equal(enrolled.recoveryCodes.length, 10);
    assert.deepEqual((await claims(enrolled.code)).amr, ['otp', 'mfa', 'hwk', 'user']);
    const { credentials } = await authenticator.cdp.send('WebAuthn.getCredentials', { authenticatorId: authenticator.authenticatorId });
    assert.equal(credentials.length, 1, 'the authenticator holds the new passkey');

    // The remembered device signs in again: the MFA step asks for the passkey.
    const step = await lib(page, 'return sw.authenticate(arg);', email);
    assert.equal(step.status, 'MFA_REQUIRED', JSON.stringify(step));
    assert.equal(step.method, 'passkey');
    const verified = await lib(page, 'return passkeys.verifyMfa(arg);', { userid: email, sessionId: step.sessionId, remember_me: true });
    assert.equal(verified.status, 'SUCCESS', JSON.stringify(verified));
    assert.deepEqual((await claims(verified.code)).amr, ['swk', 'mfa', 'hwk', 'user']);
    const remembered = await lib(page, 'return sw.authenticate(arg);', email);
    assert.equal(remembered.status, 'SUCCESS', 'remember_me: no MFA step on this device now');

    await screenshot(page, '45-passkey-mfa-library');
  });

  it('the demo offers the passkey as the second step, shows the recovery codes, and asks for the passkey at the next sign-in', async () => {
    const { demo, origin: demoOrigin } = await startRegisteredDemo(stack);
    try {
      const email = newEmail();
      const page = await (await stack.browser.newContext()).newPage();
      page.setDefaultTimeout(20_000);
      await addVirtualAuthenticator(page);
      await page.goto(demoOrigin);
      await page.waitForSelector('#app[data-ready="true"]');
      await demoEmailAndCode(stack, page, email);
      assert.equal(await page.isVisible('#method-step .option[data-method="passkey"]'), true, 'the passkey is offered');
      await page.check('#method-step input[value=passkey]');
      await page.click('#method-step button[type=submit]');
      await page
        .waitForSelector('#passkey-mfa-step:not([hidden])')
        .catch(async (error) =>
          assert.fail(`${error}: ${await page.getAttribute('#app', 'data-status')} ${await page.textContent('#message')}`),
        );
      await screenshot(page, '46-demo-passkey-mfa-create');
      await page.click('#passkey-mfa-button');
      await page.waitForSelector('#recovery-step:not([hidden])');
      assert.equal(await page.locator('#recovery-codes li').count(), 10);
      await page.click('#recovery-step button[type=submit]');
      await page.waitForURL(`${demoOrigin}/account`);
      await page.waitForSelector('#account[data-state="ready"]');
      assert.match((await page.textContent('dd[data-claim="amr"]')) ?? '', /otp, mfa, hwk, user/);

      await page.click('#sign-out');
      await page.waitForURL(`${demoOrigin}/`);
      await page.waitForSelector('#app[data-ready="true"]');
      await page.fill('#email', email);
      await page.click('#email-step button[type=submit]');
      await page.waitForSelector('#passkey-mfa-step:not([hidden])');
      assert.equal(await page.isVisible('#passkey-use-recovery'), true, 'a recovery code is offered beside the passkey');
      await screenshot(page, '47-demo-passkey-mfa-step');
      await page.click('#passkey-mfa-button');
      await page.waitForURL(`${demoOrigin}/account`);
      await page.waitForSelector('#account[data-state="ready"]');
      assert.match((await page.textContent('dd[data-claim="amr"]')) ?? '', /swk, mfa, hwk, user/);
    } finally {
      await demo.close();
    }
  });
});
