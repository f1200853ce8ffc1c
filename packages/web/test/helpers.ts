/** Test doubles shared by the service-web suites: an in-memory fake service behind an injected fetch. */
import { compactVerify, importJWK, type JWK } from 'jose';

export interface RecordedCall {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

export type Route = (call: RecordedCall) => { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;

/** A fetch that answers from `routes` (keyed `METHOD /path`) and records every call. */
export function fakeFetch(routes: Record<string, Route>): { fetch: typeof fetch; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init?.headers ?? {}) as Record<string, string>)) headers[k.toLowerCase()] = v;
    const call: RecordedCall = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      headers,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    const route = routes[`${call.method} ${call.path}`];
    if (!route) return json(404, { code: 'ERR_NOT_FOUND', message: 'Not found' });
    const answer = await route(call);
    return json(answer.status, answer.body);
  };
  return { fetch: fetchFn as typeof fetch, calls };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/** The service's issuer as GET /v1/client names it: not the base URL, so a result's `iss` is seen to come from the answer. */
export const ISSUER = 'https://id.example';

export const CLIENT_ROUTE: Record<string, Route> = {
  'GET /v1/client': (call) =>
    call.headers['x-service-key'] === 'pk_test'
      ? { status: 200, body: { clientId: 'client_1', name: 'Demo', issuer: ISSUER } }
      : { status: 401, body: { code: 'ERR_CLIENT_KEY_INVALID', message: 'Unknown key' } },
};

export const BASE_URL = 'http://127.0.0.1:8080';

export const TEST_OTP = '123456';
export const TOTP_SECRET = 'JBSWY3DPEHPK3PXP';

export interface FakeServiceOptions {
  /** 'required': a user without MFA gets MFA_ENROLLMENT_NEEDED from verifyDevice. Default 'optional'. */
  mfaPolicy?: 'optional' | 'required';
}

interface MfaSession {
  email: string;
  method: string;
  /** Enrollment (FINALIZE_REGISTRATION_NEEDED) rather than a login step. */
  enroll: boolean;
  /** The device key sent to verifyDevice, registered once the MFA step succeeds. */
  jwk?: JWK;
  /** The device that proved itself at authenticate, for rememberMe. */
  deviceId?: string;
  phoneNumber?: string;
}

/**
 * A fake service-idp that keeps device keys, checks device proofs the way the protocol says,
 * and runs the MFA steps: enrollment (MFA_ENROLLMENT_NEEDED, FINALIZE_REGISTRATION_NEEDED),
 * MFA on login (MFA_REQUIRED from authenticate or verifyDevice) and rememberMe. Every OTP is TEST_OTP.
 */
export function fakeService(options: FakeServiceOptions = {}) {
  const devices = new Map<string, { jwk: JWK; email: string }>();
  /** Users' MFA methods (and phone for SMS); set one to start a user with MFA. */
  const users = new Map<string, { method: string; phoneNumber?: string }>();
  const sessions = new Map<string, MfaSession>();
  /** Devices on which MFA is skipped (verifyMfa with rememberMe). */
  const mfaRemembered = new Set<string>();
  const challenges = new Set<string>();
  const deviceTokens = new Map<string, { email: string; verified: boolean }>();
  let counter = 0;
  const provenDevice = async (call: RecordedCall): Promise<string | undefined> => {
    const proof = call.body?.deviceProof;
    if (typeof proof !== 'string') return undefined;
    const kid = JSON.parse(Buffer.from(proof.split('.')[0]!, 'base64url').toString()).kid as string;
    const device = devices.get(kid);
    if (!device) return undefined;
    try {
      const { payload, protectedHeader } = await compactVerify(proof, await importJWK(device.jwk, 'ES256'), { algorithms: ['ES256'] });
      const claims = JSON.parse(new TextDecoder().decode(payload));
      const fresh = challenges.delete(claims.nonce);
      const ok =
        fresh && claims.sub === call.body?.userid && device.email === claims.sub && protectedHeader.cv === call.body?.cryptoVersion;
      return ok ? kid : undefined;
    } catch {
      return undefined;
    }
  };
  const ok = (body: Record<string, unknown>) => ({ status: 200, body });
  const error = (status: number, code: string, message: string, extra: Record<string, unknown> = {}) => ({
    status,
    body: { code, message, ...extra },
  });
  const newSession = (session: MfaSession): string => {
    const sessionId = `ms_${++counter}`;
    sessions.set(sessionId, session);
    return sessionId;
  };
  const registerDevice = (jwk: JWK | undefined, email: string): string | undefined => {
    if (!jwk) return undefined;
    const deviceId = `dev_${++counter}`;
    devices.set(deviceId, { jwk, email });
    return deviceId;
  };
  const service = fakeFetch({
    ...CLIENT_ROUTE,
    'POST /v1/device-challenges': () => {
      const challenge = `ch_${++counter}`;
      challenges.add(challenge);
      return ok({ challenge, expiresIn: 120 });
    },
    'POST /v1/authenticate': async (call) => {
      const email = String(call.body?.userid);
      const deviceId = await provenDevice(call);
      if (!deviceId) {
        const deviceToken = `dt_${++counter}`;
        deviceTokens.set(deviceToken, { email, verified: false });
        return ok({ status: 'OTP_NEEDED', message: 'Code sent', deviceToken, code: TEST_OTP });
      }
      const user = users.get(email);
      if (user && !mfaRemembered.has(deviceId)) {
        const sessionId = newSession({ email, method: user.method, enroll: false, deviceId });
        return ok({ status: 'MFA_REQUIRED', message: 'MFA needed', sessionId, method: user.method });
      }
      return ok({ status: 'SUCCESS', message: 'Welcome back', success: true, code: `code_${++counter}` });
    },
    'POST /v1/email-otp/verify': (call) => {
      if (call.body?.otp !== TEST_OTP) return error(400, 'ERR_OTP_INVALID', 'Wrong code', { attemptsRemaining: 4 });
      const token = deviceTokens.get(String(call.body?.deviceToken));
      if (token) token.verified = true;
      return ok({ status: 'SUCCESS', message: 'Email verified' });
    },
    'POST /v1/devices': (call) => {
      const email = String(call.body?.userid);
      const token = deviceTokens.get(String(call.body?.deviceToken));
      if (!token?.verified || token.email !== email) return error(409, 'ERR_SESSION_STEP', 'Verify the email first');
      const jwk = call.body?.devicePublicKey as JWK | undefined;
      const user = users.get(email);
      const mfaMethod = call.body?.mfaMethod as string | undefined;
      if (user) {
        deviceTokens.delete(String(call.body?.deviceToken));
        const sessionId = newSession({ email, method: user.method, enroll: false, jwk });
        return ok({ status: 'MFA_REQUIRED', message: 'MFA needed', sessionId, method: user.method });
      }
      if (mfaMethod) {
        const phoneNumber = call.body?.phoneNumber as string | undefined;
        if (mfaMethod === 'sms' && !/^\+[1-9]\d{6,14}$/.test(phoneNumber ?? '')) {
          return error(400, 'ERR_REQUEST_INVALID', 'phoneNumber is required for sms');
        }
        const sessionId = newSession({ email, method: mfaMethod, enroll: true, jwk, phoneNumber });
        const totp =
          mfaMethod === 'totp' ? { otpauthUri: `otpauth://totp/Demo:${email}?secret=${TOTP_SECRET}&issuer=Demo`, secret: TOTP_SECRET } : {};
        return ok({ status: 'FINALIZE_REGISTRATION_NEEDED', message: 'Confirm your method', sessionId, method: mfaMethod, ...totp });
      }
      if (options.mfaPolicy === 'required') {
        return ok({ status: 'MFA_ENROLLMENT_NEEDED', message: 'Choose an MFA method', methods: ['email', 'sms', 'totp'] });
      }
      deviceTokens.delete(String(call.body?.deviceToken));
      const deviceId = registerDevice(jwk, email);
      if (!deviceId) return ok({ status: 'SUCCESS', message: 'Signed in', code: `code_${++counter}` });
      return ok({ status: 'SUCCESS', message: 'Device registered', code: `code_${++counter}`, deviceId });
    },
    'POST /v1/mfa/initiate': (call) => {
      const session = sessions.get(String(call.body?.sessionId));
      if (!session || session.email !== call.body?.userid) return error(400, 'ERR_SESSION_INVALID', 'Unknown session');
      return ok({ status: 'MFA_INITIATED', message: 'Enter your code', method: session.method });
    },
    'POST /v1/mfa/verify': (call) => {
      const sessionId = String(call.body?.sessionId);
      const session = sessions.get(sessionId);
      if (!session || session.email !== call.body?.userid) return error(400, 'ERR_SESSION_INVALID', 'Unknown session');
      if (call.body?.otp !== TEST_OTP) return error(400, 'ERR_OTP_INVALID', 'Wrong code', { attemptsRemaining: 2 });
      sessions.delete(sessionId);
      if (session.enroll) users.set(session.email, { method: session.method, phoneNumber: session.phoneNumber });
      const deviceId = registerDevice(session.jwk, session.email);
      const remembered = deviceId ?? session.deviceId;
      if (call.body?.rememberMe === true && remembered) mfaRemembered.add(remembered);
      const body = { status: 'SUCCESS', message: 'Verified', success: true, code: `code_${++counter}` };
      return ok(deviceId ? { ...body, deviceId } : body);
    },
  });
  return { ...service, devices, users, sessions, mfaRemembered };
}
