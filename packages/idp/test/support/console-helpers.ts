import { createHash } from 'node:crypto';
import * as OTPAuth from 'otpauth';
import { CONSOLE_CLIENT_ID } from '../../src/clients/service.js';
import { registerWithMfa, type TestService, uniqueEmail } from './helpers.js';

/** The Set-Cookie values of an answer, by name. */
export function setCookies(headers: Headers): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const line of headers.getSetCookie()) {
    const [pair = ''] = line.split(';');
    const eq = pair.indexOf('=');
    cookies.set(pair.slice(0, eq), line);
  }
  return cookies;
}
/** Where the console is served: its own listener when the service has one (config.console), else the issuer. */
export const consoleBase = (service: TestService) => service.consoleUrl ?? service.url;
const cookieValue = (line: string | undefined) => (line ?? '').split(';')[0]?.split('=').slice(1).join('=') ?? '';

/**
 * A user with a remembered device and an authenticator app as their second factor (raw wire
 * protocol, test mode: enrolled and confirmed at the registration), for the console's threat
 * tests; `operator` adds them as an operator with that role.
 */
export async function consoleUser(service: TestService, operator?: 'viewer' | 'admin') {
  const email = uniqueEmail('operator');
  const { device, body } = await registerWithMfa(service, email, 'totp');
  const otp = new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(body.secret) }).generate();
  const confirmed = await service.post('/v1/mfa/verify', { userid: email, sessionId: body.sessionId, otp });
  if (confirmed.status !== 200) throw new Error(`confirm TOTP: ${JSON.stringify(confirmed.body)}`);
  device.deviceId = confirmed.body.deviceId;
  const user = await service.ctx.users.find(email);
  if (operator) await service.ctx.operators.add({ email, role: operator }, 'cli');
  return { email, userId: user.id, deviceId: device.deviceId as string };
}

/**
 * The console's sign-in as the browser sees its two ends: GET /admin/signin (the login cookie,
 * the /authorize URL), then GET /admin/callback with a code the hosted sign-in would have issued
 * to the console client for this user, `amr` and device (the hosted sign-in itself runs in
 * Chromium: examples/demo/test/console.test.ts). Returns the answer and the session cookie.
 */
export async function consoleCallback(
  service: TestService,
  who: { userId: string; deviceId: string | null },
  amr: string[],
  tamper: { state?: string; loginCookie?: string } = {},
) {
  const start = await fetch(`${consoleBase(service)}/admin/signin`, { redirect: 'manual' });
  const login = setCookies(start.headers).get('service_console_login');
  const authorize = new URL(start.headers.get('location') ?? '');
  const [state = '', verifier = ''] = cookieValue(login).split('.');
  const challenge = createHash('sha256').update(verifier).digest('base64url');
  const redirectUri = authorize.searchParams.get('redirect_uri') ?? '';
  const code = await service.ctx.codes.issue({
    clientId: CONSOLE_CLIENT_ID,
    userId: who.userId,
    codeChallenge: challenge,
    amr,
    authTime: Math.floor(Date.now() / 1000),
    deviceId: who.deviceId,
    redirectUri,
  });
  const callback = new URL(redirectUri);
  callback.search = new URLSearchParams({ code, state: tamper.state ?? state, iss: service.url }).toString();
  const answer = await fetch(callback, {
    redirect: 'manual',
    headers: { cookie: `service_console_login=${tamper.loginCookie ?? cookieValue(login)}` },
  });
  const sessionLine = setCookies(answer.headers).get('service_console');
  return { answer, authorize, sessionLine, session: sessionLine ? cookieValue(sessionLine) : undefined };
}

/** The console's session (cookie and CSRF token) for a new operator with this role. */
export async function operatorSession(service: TestService, role: 'viewer' | 'admin') {
  const user = await consoleUser(service, role);
  const { session } = await consoleCallback(service, user, ['otp', 'mfa', 'totp']);
  if (!session) throw new Error('no console session');
  const info = await fetch(`${consoleBase(service)}/admin/session`, { headers: { cookie: `service_console=${session}` } });
  const { csrfToken } = (await info.json()) as { csrfToken: string };
  return { ...user, session, csrfToken };
}

/** An admin API call as the console makes it (cookie, token, same-origin), with `override`s to attack it. */
export async function consoleCall(
  service: TestService,
  who: { session: string; csrfToken: string },
  method: string,
  path: string,
  override: Record<string, string | undefined> = {},
  body?: unknown,
) {
  const headers: Record<string, string> = {
    cookie: `service_console=${who.session}`,
    'x-console-csrf': who.csrfToken,
    origin: consoleBase(service),
    'sec-fetch-site': 'same-origin',
  };
  for (const [name, value] of Object.entries(override)) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${consoleBase(service)}/admin/v1${path}`, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}
