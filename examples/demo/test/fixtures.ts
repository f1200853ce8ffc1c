/**
 * The shared set-ups of the browser scenarios, on top of harness.ts's stack: a watched page, the
 * hosted page's email-and-code steps, a relying party registered at the service and driven with
 * openid-client (authorization request, callback claims), a demo OIDC app, and Chromium's
 * virtual authenticator. One copy each, so a change to the hosted pages is one change here.
 */
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before } from 'node:test';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, BrowserContextOptions, CDPSession, Page } from 'playwright-core';
import { postLogoutRedirectUri, type RunningOidcApp, startOidcApp } from '../src/oidc-app.ts';
import { type RunningDemo, startDemo } from '../src/server.ts';
import { freePort, type PageServer, type Stack, servePages, startStack } from './harness.ts';

/**
 * A page with the scenarios' timeout whose Content Security Policy refusals land in `violations`.
 * From a browser: in a context of its own (a device of its own); from a context: another tab of it.
 */
export async function watchedPage(
  from: Browser | BrowserContext,
  violations: string[],
  options: BrowserContextOptions = {},
): Promise<Page> {
  const page = 'newContext' in from ? await (await from.newContext(options)).newPage() : await from.newPage();
  page.setDefaultTimeout(20_000);
  page.on('console', (message) => {
    if (process.env.DEBUG_OIDC) console.log('page:', message.text());
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  return page;
}

/** The hosted page's labels, for scenarios in another language. */
export interface EmailAndCodeLabels {
  email: string | RegExp;
  remember: string | RegExp;
  go: string | RegExp;
  otp: string | RegExp;
}

const ENGLISH: EmailAndCodeLabels = {
  email: 'Email address',
  remember: 'Remember this device',
  go: 'Continue',
  otp: /6-digit code we emailed/,
};

/**
 * The hosted page's first two steps for a new device: the address (filled unless the page already
 * has it from `login_hint`), then the code from the development mailbox. `remember`: ticks
 * "Remember this device" where the page offers it.
 */
export async function emailAndCode(
  stack: Stack,
  page: Page,
  email: string,
  options: { remember?: boolean; labels?: EmailAndCodeLabels } = {},
): Promise<void> {
  const labels = options.labels ?? ENGLISH;
  const field = page.getByLabel(labels.email);
  if ((await field.inputValue()) !== email) await field.fill(email);
  if (options.remember) {
    const remember = page.getByLabel(labels.remember);
    if (await remember.isVisible()) await remember.check();
  }
  const seen = (await stack.mails(email)).length;
  await page.getByRole('button', { name: labels.go }).click();
  const otp = page.getByLabel(labels.otp);
  await otp.fill(await stack.nextMailOtp(email, seen));
  await otp.press('Enter');
}

/** The organization invitation's link in a mail to `email` newer than the `seen` ones (the development mailbox), within 15 s. */
export async function nextInvitationLink(stack: Stack, email: string, seen: number): Promise<string> {
  for (let i = 0; i < 150; i++) {
    const mails = await stack.mails(email);
    const link = mails.length > seen ? mails[0]?.text.match(/https?:\/\/\S+\/account\/invitations\/accept\?token=\S+/)?.[0] : undefined;
    if (link) return link;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`no invitation arrived for ${email} at the test SMTP server`);
}

/**
 * A bare /authorize URL of the service for `clientId` (code flow, PKCE S256 with a throwaway
 * verifier, scope openid; `extra`: more parameters, e.g. login_hint, prompt): for a page test
 * that looks at the hosted pages and never redeems the code.
 */
export function authorizeUrl(stack: Stack, clientId: string, redirectUri: string, extra: Record<string, string> = {}): string {
  const challenge = createHash('sha256').update(randomBytes(32).toString('base64url')).digest('base64url');
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...extra,
  });
  return `${stack.serviceUrl}/authorize?${query}`;
}

/** An application registered at the service, as openid-client sees it. */
export interface RelyingParty {
  name: string;
  clientId: string;
  config: oidc.Configuration;
  redirectUri: string;
}

/**
 * Registers an application (`clients create`) whose callback is `path` on `pages`, with the
 * policy asked for, and discovers the service with openid-client as that application.
 */
export async function registerRelyingParty(
  stack: Stack,
  pages: PageServer,
  name: string,
  path: string,
  options: { public?: boolean; mfaPolicy?: 'required'; update?: string[] } = {},
): Promise<RelyingParty> {
  const redirectUri = `${pages.origin}${path}`;
  pages.pages.set(path, '<!doctype html><title>callback</title><p>back at the app</p>');
  const keys = await stack.idp<{ clientId: string; secretKey?: string }>(
    'clients',
    'create',
    '--name',
    name,
    '--redirect-uri',
    redirectUri,
    ...(options.public ? ['--public'] : []),
  );
  const update = [...(options.mfaPolicy ? ['--mfa-policy', options.mfaPolicy] : []), ...(options.update ?? [])];
  if (update.length) await stack.cli('clients', 'update', keys.clientId, ...update);
  const auth = keys.secretKey ? oidc.ClientSecretPost(keys.secretKey) : oidc.None();
  const config = await oidc.discovery(new URL(stack.serviceUrl), keys.clientId, undefined, auth, {
    execute: [oidc.allowInsecureRequests], // loopback over http
  });
  return { name, clientId: keys.clientId, config, redirectUri };
}

/** What the callback of one authorization request must match (openid-client's checks). */
export interface Expected {
  pkceCodeVerifier: string;
  expectedState: string;
  expectedNonce: string;
}

/** A fresh authorization request of `app` (PKCE S256, state, nonce): its URL and what the callback must match. */
export async function authorizationRequest(
  app: RelyingParty,
  extra: Record<string, string> = {},
): Promise<{ url: URL; expected: Expected }> {
  const verifier = oidc.randomPKCECodeVerifier();
  const expected = { pkceCodeVerifier: verifier, expectedState: oidc.randomState(), expectedNonce: oidc.randomNonce() };
  const url = oidc.buildAuthorizationUrl(app.config, {
    redirect_uri: app.redirectUri,
    scope: 'openid email',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: expected.expectedState,
    nonce: expected.expectedNonce,
    ...extra,
  });
  return { url, expected };
}

/** Waits for `page` at `app`'s callback and redeems it with openid-client: the tokens. */
export async function callbackTokens(page: Page, app: RelyingParty, expected: Expected) {
  await page.waitForURL(`${app.redirectUri}?**`);
  return oidc.authorizationCodeGrant(app.config, new URL(page.url()), expected);
}

/** The same, its ID token's claims. */
export async function callbackClaims(page: Page, app: RelyingParty, expected: Expected): Promise<oidc.IDToken> {
  const claims = (await callbackTokens(page, app, expected)).claims();
  assert.ok(claims);
  return claims;
}

/** The demo's OIDC middleware app (src/oidc-app.ts) registered at the service under `name`, on a free port. */
export async function startRegisteredOidcApp(
  stack: Stack,
  name: string,
  options: { mfaPolicy?: 'required'; host?: string; responseMode?: 'form_post' } = {},
): Promise<RunningOidcApp> {
  const port = await freePort();
  // Cookies ignore the port: two apps signed in together in one browser need two hosts (another loopback address).
  const host = options.host ?? '127.0.0.1';
  const origin = `http://${host}:${port}`;
  const keys = await stack.idp<{ clientId: string; secretKey: string }>(
    'clients',
    'create',
    '--name',
    name,
    '--redirect-uri',
    `${origin}/callback`,
    '--post-logout-redirect-uri',
    postLogoutRedirectUri(origin),
    // The middleware's back-channel logout route (express-openid-connect's backchannelLogout).
    '--backchannel-logout-uri',
    `${origin}/backchannel-logout`,
  );
  if (options.mfaPolicy) await stack.cli('clients', 'update', keys.clientId, '--mfa-policy', options.mfaPolicy);
  return startOidcApp({
    issuerBaseURL: stack.serviceUrl,
    publicOrigin: origin,
    clientId: keys.clientId,
    clientSecret: keys.secretKey,
    port,
    ...(options.host ? { hosts: [options.host] } : {}),
    ...(options.responseMode ? { responseMode: options.responseMode } : {}),
    log: (line) => {
      if (process.env.DEBUG_OIDC) console.log(line);
    },
  });
}

export interface VirtualAuthenticator {
  cdp: CDPSession;
  authenticatorId: string;
}

/**
 * Chromium's virtual platform authenticator (DevTools WebAuthn) for this tab, across its
 * navigations: resident keys, user verification, presence answered automatically. `options`
 * overrides any of those (e.g. `isUserVerified: false`).
 */
export async function addVirtualAuthenticator(page: Page, options: Record<string, unknown> = {}): Promise<VirtualAuthenticator> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable', { enableUI: false });
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      ctap2Version: 'ctap2_1',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
      ...options,
    },
  });
  return { cdp, authenticatorId };
}

/** The demo (Acme Notes, src/server.ts) registered at the service under its own origin on a free port, as a second app. */
export async function startRegisteredDemo(stack: Stack, name = 'Acme Notes'): Promise<{ demo: RunningDemo; origin: string }> {
  const port = await freePort();
  const origin = `http://localhost:${port}`;
  const keys = await stack.idp<{ clientId: string; publishableKey: string; secretKey: string }>(
    'clients',
    'create',
    '--name',
    name,
    '--origin',
    origin,
  );
  const demo = await startDemo({ serviceUrl: stack.serviceUrl, publicOrigin: origin, ...keys, port, log: () => undefined });
  return { demo, origin };
}

/** The demo page's address and emailed-code steps for a new device, up to its second-factor choice. */
export async function demoEmailAndCode(stack: Stack, page: Page, email: string): Promise<void> {
  const seen = (await stack.mails(email)).length;
  await page.fill('#email', email);
  await page.click('#email-step button[type=submit]');
  await page.waitForSelector('#otp-step:not([hidden])');
  await page.fill('#otp', await stack.nextMailOtp(email, seen));
  await page.click('#otp-step button[type=submit]');
  await page.waitForSelector('#method-step:not([hidden])');
}

/** The same, then no second factor: the demo's account page at `origin`. */
export async function demoSignUp(stack: Stack, page: Page, email: string, origin = stack.demoUrl): Promise<void> {
  await demoEmailAndCode(stack, page, email);
  await page.check('#method-step input[value=none]');
  await page.click('#method-step button[type=submit]');
  await page.waitForURL(`${origin}/account`);
}

/**
 * A new account whose second factor is email, made at the demo (its page lets a user choose it;
 * the hosted pages never offer email, which after the emailed code would be the same mailbox):
 * the demo's sign-up in `page` with "a code by email", the recovery codes passed. Its subject.
 */
export async function demoSignUpWithEmailMfa(stack: Stack, page: Page, email: string): Promise<string> {
  await page.goto(stack.demoUrl);
  await page.waitForSelector('#app[data-ready="true"]');
  await demoEmailAndCode(stack, page, email);
  await page.check('#method-step input[value=email]');
  await page.click('#method-step button[type=submit]');
  await page.waitForSelector('#recovery-step:not([hidden])');
  await page.click('#recovery-step button[type=submit]');
  await page.waitForURL(`${stack.demoUrl}/account`);
  await page.waitForSelector('#account[data-state="ready"]');
  return (await page.textContent('dd[data-claim="sub"]')) ?? '';
}

/**
 * The stack on http://localhost (a passkey's rp id is a domain) and "Strict Portal", a relying
 * party whose policy requires a second factor: started before the suite, closed after it;
 * `started` hands them over.
 */
export function strictPortalSuite(started: (suite: { stack: Stack; app: RelyingParty }) => void): void {
  let stack: Stack | undefined;
  let rpPages: PageServer | undefined;
  before(async () => {
    stack = await startStack({ serviceHost: 'localhost' });
    rpPages = await servePages();
    started({ stack, app: await registerRelyingParty(stack, rpPages, 'Strict Portal', '/callback', { mfaPolicy: 'required' }) });
  });
  after(async () => {
    await rpPages?.close();
    await stack?.close();
  });
}

/**
 * At the hosted MFA enrollment (after the email code): a passkey as the second factor, made by
 * the page's (virtual) authenticator; `beforeCreate` runs on the passkey step (a screenshot).
 * The recovery codes the page showed, once "I have saved them" is pressed.
 */
export async function enrollPasskeyMfa(page: Page, beforeCreate?: () => Promise<unknown>): Promise<string[]> {
  await page.locator('#enroll-step:not([hidden])').waitFor();
  await page.getByRole('radio', { name: 'A passkey' }).check();
  await page.locator('#enroll-step button[type=submit]').click();
  await page.locator('#passkey-mfa-step:not([hidden])').waitFor();
  await beforeCreate?.();
  await page.getByRole('button', { name: 'Create a passkey' }).click();
  await page.locator('#codes-step:not([hidden])').waitFor();
  const codes = await page.locator('#recovery-codes li').allTextContents();
  await page.getByRole('button', { name: 'I have saved them' }).click();
  return codes;
}

/** Runs `script` (an async function body with `arg`) in the page: how the scenarios call the library a test page loaded. */
export const inPage = <T = any>(page: Page, script: string, arg?: unknown): Promise<T> =>
  page.evaluate(({ script, arg }) => new Function('arg', `return (async () => { ${script} })();`)(arg), { script, arg });

/** Redeems an authorization code at the token endpoint as a confidential `client` (with the page's PKCE verifier, if any): its ID token's claims, unverified. */
export async function redeemCode(
  stack: Stack,
  client: { clientId: string; secretKey: string },
  code: string,
  codeVerifier?: string,
): Promise<Record<string, any>> {
  const form = { grant_type: 'authorization_code', code, client_id: client.clientId, client_secret: client.secretKey };
  const response = await fetch(`${stack.serviceUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(codeVerifier ? { ...form, code_verifier: codeVerifier } : form),
  });
  const body = await response.json();
  assert.equal(response.status, 200, JSON.stringify(body));
  return JSON.parse(Buffer.from(body.id_token.split('.')[1], 'base64url').toString());
}
