import { createHash } from 'node:crypto';
import { after, before } from 'node:test';
import { ACCOUNT_CLIENT_ID } from '../../src/clients/service.js';
import { setCookies } from './console-helpers.js';
import { registerRawDevice, sendClock, startTestService, type TestService, type TestServiceOptions, uniqueEmail } from './helpers.js';

const cookieValue = (line: string | undefined) => (line ?? '').split(';')[0]?.split('=').slice(1).join('=') ?? '';

export interface AccountClock {
  now: () => number;
  tick: () => void;
}

/** A user with `devices` remembered browsers (raw wire protocol, test mode); the clock moves past the OTP send spacing before each. */
export async function accountUser(service: TestService, clock: AccountClock, devices = 1) {
  const email = uniqueEmail('account');
  const ids: string[] = [];
  for (let i = 0; i < devices; i++) {
    clock.tick();
    ids.push((await registerRawDevice(service, email, `Mozilla/5.0 (X11; Linux x86_64) Chrome/13${i}.0`)).deviceId);
  }
  const user = await service.ctx.users.find(email);
  return { email, userId: user.id, deviceIds: ids, deviceId: ids[0] as string };
}

/**
 * The account center's sign-in as the browser sees its two ends: GET /account/signin (the login
 * cookie, the /authorize URL), then GET /account/callback with a code the hosted sign-in would
 * have issued to the account client for this user and device, signed in `authAgeSeconds` ago.
 */
export async function accountCallback(
  service: TestService,
  who: { userId: string; deviceId: string | null },
  options: { now?: () => number; authAgeSeconds?: number; state?: string; loginCookie?: string; fresh?: boolean } = {},
) {
  const start = await fetch(`${service.url}/account/signin${options.fresh ? '?fresh=1' : ''}`, { redirect: 'manual' });
  const login = setCookies(start.headers).get('service_account_login');
  const authorize = new URL(start.headers.get('location') ?? '');
  const [state = '', verifier = ''] = cookieValue(login).split('.');
  const redirectUri = authorize.searchParams.get('redirect_uri') ?? '';
  const code = await service.ctx.codes.issue({
    clientId: ACCOUNT_CLIENT_ID,
    userId: who.userId,
    codeChallenge: createHash('sha256').update(verifier).digest('base64url'),
    amr: ['hwk'],
    authTime: Math.floor((options.now ?? Date.now)() / 1000) - (options.authAgeSeconds ?? 0),
    deviceId: who.deviceId,
    redirectUri,
  });
  const callback = new URL(redirectUri);
  callback.search = new URLSearchParams({ code, state: options.state ?? state, iss: service.url }).toString();
  const answer = await fetch(callback, {
    redirect: 'manual',
    headers: { cookie: `service_account_login=${options.loginCookie ?? cookieValue(login)}` },
  });
  const sessionLine = setCookies(answer.headers).get('service_account');
  return { answer, authorize, sessionLine, session: sessionLine ? cookieValue(sessionLine) : undefined };
}

/** A signed-in account session (cookie and CSRF token). */
export async function accountSession(
  service: TestService,
  who: { userId: string; deviceId: string },
  now: () => number,
  authAgeSeconds = 0,
) {
  const { session } = await accountCallback(service, who, { now, authAgeSeconds });
  if (!session) throw new Error('no account session');
  const info = await fetch(`${service.url}/account/session`, { headers: { cookie: `service_account=${session}` } });
  const { csrfToken } = (await info.json()) as { csrfToken: string };
  return { session, csrfToken };
}

/** An account action as the page's form posts it (cookie, csrf field, same-origin), with `override`s to attack it. */
export async function accountAction(
  service: TestService,
  who: { session: string; csrfToken: string },
  action: string,
  fields: Record<string, string> = {},
  override: Record<string, string | undefined> = {},
) {
  const headers: Record<string, string> = {
    cookie: `service_account=${who.session}`,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/x-www-form-urlencoded',
  };
  const form: Record<string, string> = { csrf: who.csrfToken, ...fields };
  for (const [name, value] of Object.entries(override)) {
    if (name === 'csrf') {
      if (value === undefined) delete form.csrf;
      else form.csrf = value;
    } else if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return fetch(`${service.url}/account/${action}`, { method: 'POST', headers, body: new URLSearchParams(form), redirect: 'manual' });
}

/** A JSON call as the account page's script makes it (cookie, x-account-csrf, same-origin); `override` replaces or (undefined) drops a header. */
export function accountJson(
  service: TestService,
  who: { session: string; csrfToken: string },
  path: string,
  body: unknown,
  override: Record<string, string | undefined> = {},
) {
  const headers: Record<string, string> = {
    cookie: `service_account=${who.session}`,
    origin: service.url,
    'sec-fetch-site': 'same-origin',
    'content-type': 'application/json',
    'x-account-csrf': who.csrfToken,
  };
  for (const [name, value] of Object.entries(override)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  return fetch(`${service.url}/account/${path}`, { method: 'POST', headers, body: JSON.stringify(body), redirect: 'manual' });
}

/** The MFA session id an account code step carries in its form (account-center/factor-page.ts). */
export const stepSession = (html: string) => html.match(/name="session" value="([^"]+)"/)?.[1] ?? '';

/** Opens the proof of a proven action (/account/proof): the code page's status, text and session id. */
export async function accountProof(
  service: TestService,
  who: { session: string; csrfToken: string },
  action: 'export' | 'delete' | 'recovery-codes',
  fields: Record<string, string> = {},
) {
  const answer = await accountAction(service, who, 'proof', { action, ...fields });
  const html = await answer.text();
  return { status: answer.status, html, sessionId: stepSession(html) };
}

/** A proof opened for `action` by a user without a second factor, and the code mailed for it (the stand-in). */
export async function mailedProof(
  service: TestService,
  who: { session: string; csrfToken: string },
  email: string,
  action: 'export' | 'delete' | 'recovery-codes',
  fields: Record<string, string> = {},
) {
  const seen = await accountCodes(service, email);
  const open = await accountProof(service, who, action, fields);
  return { open, code: await nextMailCode(service, email, seen) };
}

/** The codes the account center (its client is named "Account") has mailed `email`, in no particular order (one fake clock). */
async function accountCodes(service: TestService, email: string): Promise<string[]> {
  const mails = await service.ctx.mailbox.list(100, email);
  return mails.filter((m) => /\bAccount\b/.test(m.subject)).map((m) => m.text.match(/\b(\d{6})\b/)?.[1] ?? '');
}

/** The codes the account center has mailed `email` so far (to tell the next one apart). */
export const mailedCodes = accountCodes;

/** The next code the account center mails `email`, one not among `seen` (the MFA step sends after answering, so this waits). */
export async function nextMailCode(service: TestService, email: string, seen: string[]): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const fresh = (await accountCodes(service, email)).find((c) => !seen.includes(c));
    if (fresh) return fresh;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no new mail for ${email}`);
}

/**
 * The account suites' set-up: a test-mode service on a clock the test moves (past send spacing,
 * past the recent-sign-in window), started before the suite and closed after it; `started`
 * hands it to the suite. `exists`: whether the account of an address is still there. `options`
 * add to the service's (a host-name issuer for passkeys: oidc-passkey-helpers.ts).
 */
export function accountSuite(started: (service: TestService) => void, options: TestServiceOptions = {}) {
  const clock = sendClock();
  let service: TestService | undefined;
  before(async () => {
    service = await startTestService({ testMode: true, ...options, now: clock.now });
    started(service);
  });
  after(() => service?.close());
  const exists = async (email: string) =>
    (service as TestService).ctx.users.find(email).then(
      () => true,
      () => false,
    );
  return { clock, exists };
}
