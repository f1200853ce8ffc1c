/**
 * "Continue with …" an upstream OpenID Connect provider in a real browser (issue 26): a real
 * provider (node-oidc-provider) on loopback is the upstream, connected with the CLI
 * (`service-idp connections create`); an app signs in through the hosted pages with
 * openid-client as its relying party. A new user, a returning user, linking to an existing
 * account with its emailed code, an app that requires MFA (the user's method follows the
 * provider), and SSO to a second app through the service's own session: the "Continue with"
 * sign-in registered the page's device key and opened it, so the provider is not visited again.
 * axe-core on the new steps (the buttons, the link step) at phone and desktop sizes.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it as test } from 'node:test';
import { build } from 'esbuild';
import type { Page } from 'playwright-core';
import { startUpstream, type TestUpstream } from '../../../packages/idp/test/support/upstream.ts';
import {
  authorizationRequest,
  callbackClaims,
  demoSignUpWithEmailMfa,
  type Expected,
  inPage,
  type RelyingParty,
  redeemCode,
  registerRelyingParty,
  emailAndCode as signInByEmail,
} from './fixtures.ts';
import { type PageServer, ROOT, SEND_WINDOW_MS, type Stack, screenshot, servePages, startStack } from './harness.ts';
import { assertAccessible, VIEWPORTS } from './visual.ts';

/** Over https, the scenarios whose cookies the scheme changes run again: the new user, and the account center. */
const OVER_HTTPS = [/^a new user/, /^the account center/];

describe('continue with an upstream provider on the hosted pages, in Chromium', { timeout: 5 * 60_000 }, () => upstreamScenarios('http'));
// Over https (a TLS front, __Host- cookies): the flow cookie must come back at the callback, and the
// account center's cookies must keep its session. Chromium drops a __Host- cookie whose Path is not /.
describe('continue with an upstream provider on the hosted pages, in Chromium, over https', { timeout: 3 * 60_000 }, () =>
  upstreamScenarios('https'),
);

function upstreamScenarios(scheme: 'http' | 'https') {
  const it = (name: string, run: () => Promise<void>) => {
    if (scheme === 'http' || OVER_HTTPS.some((pattern) => pattern.test(name))) test(name, run);
  };
  let stack: Stack;
  let upstream: TestUpstream;
  let rpPages: PageServer;
  const run = Date.now().toString(36);
  const apps: Record<string, RelyingParty> = {};
  const violations: string[] = [];
  let connectionId = '';

  before(async () => {
    stack = await startStack({ https: scheme === 'https' });
    upstream = await startUpstream(`${stack.serviceUrl}/upstream/callback`);
    rpPages = await servePages();
    const clientIds: string[] = [];
    for (const [name, path, policy] of [
      ['Acme Portal', '/portal/callback', undefined],
      ['Second App', '/second/callback', undefined],
      ['Strict App', '/strict/callback', 'required'],
    ] as const) {
      apps[name] = await registerRelyingParty(stack, rpPages, name, path, policy ? { mfaPolicy: policy } : {});
      clientIds.push((apps[name] as RelyingParty).clientId);
    }
    const made = await stack.idp<{ id: string; hasSecret: boolean }>(
      'connections',
      'create',
      '--preset',
      'oidc',
      '--upstream-issuer',
      upstream.issuer,
      '--client-id',
      upstream.clientId,
      '--client-secret',
      upstream.clientSecret,
      '--name',
      'Acme ID',
      '--clients',
      clientIds.join(','),
    );
    assert.equal(made.hasSecret, true);
    // The demo client (the app pages on stack.registered) shows it too.
    await stack.cli('connections', 'update', made.id, '--clients', [...clientIds, stack.client.clientId].join(','));
    connectionId = made.id;
  });
  after(async () => {
    assert.deepEqual(violations, [], 'no CSP violation');
    await rpPages?.close();
    await upstream?.close();
    await stack?.close();
  });

  async function newPage(): Promise<Page> {
    const context = await stack.browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    return page;
  }

  /** An authorization request of `app` opened in `page`: what its callback must match. */
  async function open(page: Page, app: string) {
    const expected = await navigate(page, app);
    await page.getByRole('heading', { name: `Sign in to ${app}` }).waitFor();
    return expected;
  }
  /** axe-core on the step showing, at the phone's size and the desktop's. */
  async function accessibleAtBothSizes(page: Page, what: string) {
    for (const [size, viewport] of Object.entries(VIEWPORTS)) {
      await page.setViewportSize(viewport);
      await assertAccessible(page, `${what} (${size})`);
    }
  }
  /** Navigates `page` to an authorization request of `app` (the sign-in page, or straight back by SSO). */
  async function navigate(page: Page, app: string) {
    const { url, expected } = await authorizationRequest(apps[app] as RelyingParty);
    await page.goto(url.href);
    return expected;
  }
  const claimsAt = (page: Page, app: string, expected: Expected) => callbackClaims(page, apps[app] as RelyingParty, expected);
  const emailAndCode = (page: Page, email: string) => signInByEmail(stack, page, email);

  /**
   * An account with email MFA (the demo's sign-up, in its own browser: the hosted pages never
   * offer email as a strict app's second factor, the email code having just proved the mailbox): its subject.
   */
  async function accountWithEmailMfa(email: string): Promise<string> {
    const first = await newPage();
    const owner = await demoSignUpWithEmailMfa(stack, first, email);
    await first.context().close();
    return owner;
  }

  it('a new user: one click on "Acme ID", the account made from the verified address, amr fed', async () => {
    const email = `new.${run}@example.com`;
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    const expected = await open(page, 'Acme Portal');
    await page.getByRole('group', { name: 'Or continue with' }).waitFor();
    await screenshot(page, 'upstream-hosted-buttons');
    await accessibleAtBothSizes(page, 'the sign-in page with its "Continue with" buttons');
    const seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Acme ID' }).click();
    const claims = await claimsAt(page, 'Acme Portal', expected);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);
    // The page's device key was registered as after the emailed code: the new-device mail.
    const mails = await stack.mails(email);
    assert.equal(mails.slice(seen).filter((m) => /new device/i.test(m.subject ?? '')).length, 1, 'one new-device mail');

    // SSO to a second app through the service's own session: straight back with a code, the
    // provider never visited (not by the browser, not by the service's token exchange).
    const atProvider: string[] = [];
    page.on('request', (request) => {
      if (request.url().startsWith(upstream.issuer)) atProvider.push(request.url());
    });
    const tokens = upstream.tokenRequests();
    const second = await navigate(page, 'Second App');
    const secondClaims = await claimsAt(page, 'Second App', second);
    assert.equal(secondClaims.email, email);
    assert.equal(secondClaims.sub, claims.sub);
    assert.deepEqual(atProvider, [], 'the provider was not visited');
    assert.equal(upstream.tokenRequests(), tokens);
    await page.context().close();
  });

  it('a returning user signs in to the same account', async () => {
    const email = `back.${run}@example.com`;
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const subs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const page = await newPage();
      const expected = await open(page, 'Acme Portal');
      await page.getByRole('button', { name: 'Acme ID' }).click();
      subs.push((await claimsAt(page, 'Acme Portal', expected)).sub);
      await page.context().close();
    }
    assert.equal(subs[0], subs[1]);
  });

  it("an existing account is linked only after its emailed code; an app that requires MFA asks the user's method after the provider", async () => {
    const email = `link.${run}@example.com`;
    const owner = await accountWithEmailMfa(email);

    // The same address at the provider: the link step, then the account's code.
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    const portal = await open(page, 'Acme Portal');
    let seen = (await stack.mails(email)).length;
    await page.getByRole('button', { name: 'Acme ID' }).click();
    const linkCode = page.getByLabel(/link this sign-in/);
    await linkCode.waitFor();
    await screenshot(page, 'upstream-hosted-link-step');
    await accessibleAtBothSizes(page, 'the link step (the code emailed to the existing account)');
    await linkCode.fill(await stack.nextMailOtp(email, seen));
    seen = (await stack.mails(email)).length;
    await linkCode.press('Enter');
    // The user has email MFA: the step follows the link, whatever the app's policy.
    let code = page.getByLabel('The 6-digit code we sent by email');
    await code.waitFor();
    await code.fill(await stack.nextMailOtp(email, seen));
    await code.press('Enter');
    const linked = await claimsAt(page, 'Acme Portal', portal);
    assert.equal(linked.sub, owner);
    assert.deepEqual(linked.amr, ['fed', 'otp', 'mfa', 'email']);
    // The link's sign-in registered the page's key too: the session answers the strict app (it has mfa).
    const bySession = await navigate(page, 'Strict App');
    assert.equal((await claimsAt(page, 'Strict App', bySession)).sub, owner);
    await page.context().close();

    // The strict app in another browser: the provider, then the MFA step; its code carries mfa (after the resend spacing).
    await new Promise((resolve) => setTimeout(resolve, SEND_WINDOW_MS));
    const other = await newPage();
    const again = await open(other, 'Strict App');
    seen = (await stack.mails(email)).length;
    await other.getByRole('button', { name: 'Acme ID' }).click();
    code = other.getByLabel('The 6-digit code we sent by email');
    await code.waitFor();
    await code.fill(await stack.nextMailOtp(email, seen));
    await code.press('Enter');
    const claims = await claimsAt(other, 'Strict App', again);
    assert.equal(claims.sub, owner);
    assert.ok((claims.amr as string[]).includes('mfa'));
    await other.context().close();
  });

  /**
   * The app's page: service-web/upstream and the core client, bundled as an app would. One button
   * signs in with the provider, the other also remembers this browser; `window.core` is the core
   * client for a later sign-in by address.
   */
  let appPageReady: Promise<void> | undefined;
  function upstreamAppPage(): Promise<void> {
    appPageReady ??= (async () => {
      const bundled = await build({
        stdin: {
          contents: "export { ServiceUpstream } from 'service-web/upstream'; export { createPkcePair, ServiceClient } from 'service-web';",
          resolveDir: `${ROOT}/examples/demo`,
        },
        bundle: true,
        format: 'iife',
        globalName: 'Lib',
        write: false,
      });
      const script = bundled.outputFiles[0]?.text ?? '';
      const init = `(${JSON.stringify(stack.client.publishableKey)}, ${JSON.stringify(stack.serviceUrl)})`;
      stack.registered.pages.set(
        '/upstream-app',
        `<!doctype html><html lang="en"><title>App</title><body><button id="go">Continue with Acme ID</button>
<button id="remember">Continue with Acme ID and remember this browser</button><pre id="result"></pre>
<script>${script}
const upstream = new Lib.ServiceUpstream();
window.upstream = upstream;
window.core = new Lib.ServiceClient();
window.coreReady = window.core.init${init};
upstream.init${init}.then(async () => {
  const back = await upstream.result();
  document.getElementById('result').textContent = JSON.stringify(back ? { ...back, verifier: sessionStorage.getItem('verifier') } : null);
});
for (const id of ['go', 'remember'])
  document.getElementById(id).addEventListener('click', async () => {
    const pkce = await Lib.createPkcePair();
    sessionStorage.setItem('verifier', pkce.codeVerifier);
    await upstream.signInWith(${JSON.stringify(connectionId)}, { code_challenge: pkce.codeChallenge, rememberDevice: id === 'remember' });
  });
</script></body></html>`,
      );
    })();
    return appPageReady;
  }

  /** A click on the app page's `button`, the trip to the provider and back: the page's result. */
  async function appPageSignIn(page: Page, button: string) {
    await page.goto(`${stack.registered.origin}/upstream-app`);
    await page.getByRole('button', { name: button, exact: true }).click();
    await page.waitForURL(`${stack.registered.origin}/upstream-app`);
    await page.waitForFunction(() => (document.getElementById('result')?.textContent ?? '').includes('status'));
    return JSON.parse((await page.locator('#result').textContent()) ?? 'null');
  }

  it("service-web/upstream on the app's own page: signInWith, result() with the code for the backend, and a forged return refused", async () => {
    await upstreamAppPage();
    const email = `embedded.${run}@example.com`;
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    const result = await appPageSignIn(page, 'Continue with Acme ID');
    assert.equal(result.status, 'SUCCESS', JSON.stringify(result));
    assert.equal(result.deviceRemembered, undefined, 'no device asked for');
    assert.equal(new URL(page.url()).hash, '', 'the fragment is cleared');
    // The app's backend: the code and the page's verifier for the ID token.
    const response = await fetch(`${stack.serviceUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: result.code,
        code_verifier: result.verifier,
        client_id: stack.client.clientId,
        client_secret: stack.client.secretKey,
      }),
    });
    const tokens = await response.json();
    assert.equal(response.status, 200, JSON.stringify(tokens));
    const claims = JSON.parse(Buffer.from(tokens.id_token.split('.')[1], 'base64url').toString());
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['fed']);

    // Login CSRF on the page: a return this page did not start is refused (a fresh load of the page).
    await page.goto('about:blank');
    await page.goto(`${stack.registered.origin}/upstream-app#status=SUCCESS&code=planted&state=forged`);
    await page.waitForFunction(() => (document.getElementById('result')?.textContent ?? '').includes('status'));
    assert.equal(JSON.parse((await page.locator('#result').textContent()) ?? 'null').status, 'INVALID_REQUEST');
    await page.context().close();
  });

  it('service-web/upstream with rememberDevice: the page keeps its device key, the core signs in with it, and the same browser is the same device', async () => {
    await upstreamAppPage();
    const email = `remembered.${run}@example.com`;
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    const newDeviceMails = async () =>
      (await stack.mails(email)).filter((m) => m.subject?.startsWith('A new device can now sign in')).length;

    const first = await appPageSignIn(page, 'Continue with Acme ID and remember this browser');
    assert.equal(first.status, 'SUCCESS', JSON.stringify(first));
    assert.equal(first.deviceRemembered, true);
    const devicesOf = async () =>
      (
        await stack.idp<{ devices: { id: string; kind: string; removedAt: number | null }[] }>('devices', 'list', '--user', email)
      ).devices.filter((d) => d.kind !== 'passkey');
    const [device] = await devicesOf();
    assert.ok(device, 'the browser is a device of the new account');
    assert.equal(await newDeviceMails(), 1, 'the new-device mail');
    // The code the page finished with is bound to that device.
    const claims = await redeemCode(stack, stack.client, first.code, first.verifier);
    assert.equal(claims.email, email);
    assert.equal(claims.device_id, device.id);

    // The core client on the same page signs in by address with the kept key: no code mailed.
    const mailsBefore = (await stack.mails(email)).length;
    const byDevice = await inPage(page, 'await window.coreReady; return window.core.authenticate(arg);', email);
    assert.equal(byDevice.status, 'SUCCESS', JSON.stringify(byDevice));
    assert.equal((await stack.mails(email)).length, mailsBefore, 'no sign-in code sent');

    // The same browser back through the provider: the same device, no second new-device mail.
    const again = await appPageSignIn(page, 'Continue with Acme ID and remember this browser');
    assert.equal(again.status, 'SUCCESS', JSON.stringify(again));
    assert.equal(again.deviceRemembered, true);
    assert.deepEqual(
      (await devicesOf()).map((d) => d.id),
      [device.id],
    );
    assert.equal(await newDeviceMails(), 1);

    // A planted DEVICE_KEY_NEEDED this page did not start: refused before any key or ticket is sent.
    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/v1/upstream/device')) sent.push(request.url());
    });
    await page.goto('about:blank');
    await page.goto(`${stack.registered.origin}/upstream-app#status=DEVICE_KEY_NEEDED&ticket=planted&userid=${email}&state=forged`);
    await page.waitForFunction(() => (document.getElementById('result')?.textContent ?? '').includes('status'));
    assert.equal(JSON.parse((await page.locator('#result').textContent()) ?? 'null').status, 'INVALID_REQUEST');
    assert.deepEqual(sent, []);
    await page.context().close();
  });

  it('service-web/upstream with rememberDevice and an existing account: confirmLink sends this browser’s key and keeps it', async () => {
    await upstreamAppPage();
    const email = `remembered-link.${run}@example.com`;
    // The account exists (an email-code sign-in on the hosted pages, in another browser).
    const first = await newPage();
    const portal = await open(first, 'Acme Portal');
    await emailAndCode(first, email);
    const owner = (await claimsAt(first, 'Acme Portal', portal)).sub;
    await first.context().close();

    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    const seen = (await stack.mails(email)).length;
    const back = await appPageSignIn(page, 'Continue with Acme ID and remember this browser');
    assert.equal(back.status, 'LINK_NEEDED', JSON.stringify(back));
    // A mistyped code first: refused, and the next try still sends the key.
    const wrong = await inPage(page, 'return window.upstream.confirmLink(arg);', { link: back.link, otp: '000000' });
    assert.notEqual(wrong.status, 'SUCCESS', JSON.stringify(wrong));
    const linked = await inPage(page, 'return window.upstream.confirmLink(arg);', {
      link: back.link,
      otp: await stack.nextMailOtp(email, seen),
    });
    assert.equal(linked.status, 'SUCCESS', JSON.stringify(linked));
    assert.equal(linked.deviceRemembered, true);
    const claims = await redeemCode(stack, stack.client, linked.code, back.verifier);
    assert.equal(claims.sub, owner);
    assert.ok(claims.device_id, 'the code is bound to the new device');
    // The kept key signs the core in by address, with no code mailed.
    const mailsBefore = (await stack.mails(email)).length;
    const byDevice = await inPage(page, 'await window.coreReady; return window.core.authenticate(arg);', email);
    assert.equal(byDevice.status, 'SUCCESS', JSON.stringify(byDevice));
    assert.equal((await stack.mails(email)).length, mailsBefore);
    await page.context().close();
  });

  it('service-web/upstream with rememberDevice for a user with a second factor: MFA_REQUIRED, the core’s MFA step, then the key signs in', async () => {
    await upstreamAppPage();
    const email = `remembered-mfa.${run}@example.com`;
    const owner = await accountWithEmailMfa(email);
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true });
    const page = await newPage();
    let seen = (await stack.mails(email)).length;
    const back = await appPageSignIn(page, 'Continue with Acme ID and remember this browser');
    assert.equal(back.status, 'LINK_NEEDED', JSON.stringify(back));
    const linked = await inPage(page, 'return window.upstream.confirmLink(arg);', {
      link: back.link,
      otp: await stack.nextMailOtp(email, seen),
    });
    assert.equal(linked.status, 'MFA_REQUIRED', JSON.stringify(linked));
    assert.equal(linked.deviceRemembered, true, 'kept under the id the device gets once the step passes');
    seen = (await stack.mails(email)).length;
    const step = { userid: email, sessionId: linked.sessionId };
    assert.equal((await inPage(page, 'await window.coreReady; return window.core.initiateMfa(arg);', step)).status, 'MFA_INITIATED');
    const verified = await inPage(page, 'return window.core.verifyMfa(arg);', { ...step, otp: await stack.nextMailOtp(email, seen) });
    assert.equal(verified.status, 'SUCCESS', JSON.stringify(verified));
    const claims = await redeemCode(stack, stack.client, verified.code, back.verifier);
    assert.equal(claims.sub, owner);
    assert.ok(claims.device_id && (claims.amr as string[]).includes('mfa'), JSON.stringify(claims));
    // The kept key now proves this browser: the core skips the emailed code and asks the second factor.
    const byDevice = await inPage(page, 'return window.core.authenticate(arg);', email);
    assert.equal(byDevice.status, 'MFA_REQUIRED', JSON.stringify(byDevice));
    await page.context().close();
  });

  it('the account center (opened by the session the upstream sign-in left) lists the linked identity and unlinks it (issue 26)', async () => {
    const email = `unlink.${run}@example.com`;
    upstream.signInAs({ sub: `acme-${email}`, email, email_verified: true, name: 'Una Link' });
    const page = await newPage();
    const expected = await open(page, 'Acme Portal');
    await page.getByRole('button', { name: 'Acme ID' }).click();
    assert.equal((await claimsAt(page, 'Acme Portal', expected)).email, email);

    // The upstream sign-in left the service's own session (this browser's device key): the account page opens by it.
    await page.goto(`${stack.serviceUrl}/account`);
    const section = page.getByRole('region', { name: 'Linked sign-ins' });
    await section.waitFor();
    const text = (await section.textContent()) ?? '';
    assert.match(text, /Acme ID/);
    assert.ok(text.includes(email), 'the address the provider gave');
    await assertAccessible(page, 'account page with a linked identity');
    await page.setViewportSize({ width: 375, height: 740 });
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1), 'fits a phone');
    await section.getByRole('button', { name: 'Unlink' }).click();
    await page.getByRole('heading', { name: 'Your account', level: 1 }).waitFor();
    assert.equal(await page.getByRole('region', { name: 'Linked sign-ins' }).count(), 0, 'unlinked');
    await page.context().close();
  });
}
