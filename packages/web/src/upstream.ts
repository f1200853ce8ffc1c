/**
 * service-web/upstream: "Continue with Google" (or Microsoft, Apple, GitHub, any OpenID Connect
 * provider the operator connected), beside the core library in its own entry point so that the
 * core stays small. The sign-in leaves the page for the provider and comes back to it: call
 * `signInWith` on the button, and `result()` when the page loads again. Same conventions as the
 * core: no method throws, every result has a `status`; SUCCESS carries the code for the backend
 * (exchanged with the PKCE verifier of the challenge you passed), MFA_REQUIRED continues with the
 * core's initiateMfa and verifyMfa, LINK_NEEDED asks for the code mailed to the existing account
 * (`confirmLink`). docs/protocol.md, "Continue with an upstream provider".
 *
 * With `rememberDevice`, the browser is remembered as after the core's verifyDevice: `result()`
 * finishes the sign-in with this browser's device key (kept in IndexedDB, never exported), so
 * the core's `authenticate` later signs in with it and the same browser coming back through the
 * provider is the same device (no second new-device mail).
 *
 * @example
 * ```ts
 * import { createPkcePair } from 'service-web';
 * import { ServiceUpstream } from 'service-web/upstream';
 * const upstream = new ServiceUpstream();
 * await upstream.init('pk_...', 'https://id.example.com');
 * const back = await upstream.result();    // after the provider sent the user back
 * if (back?.status === 'SUCCESS') await sendToBackend(back.code, sessionStorage.getItem('verifier'));
 * // on the button:
 * const pkce = await createPkcePair(); sessionStorage.setItem('verifier', pkce.codeVerifier);
 * upstream.signInWith('con_…', { code_challenge: pkce.codeChallenge, rememberDevice: true });
 * ```
 *
 * @packageDocumentation
 */
import { BrowserPaths, type CryptoVersion, type DevicePublicJwk, normalizeEmail, UpstreamPaths } from 'service-protocol';
import { base64urlJson } from './base64url.js';
import { isNonEmptyString } from './checks.js';
import { cryptoOf, deviceRecord, keepDeviceKey } from './device-keys.js';
import { exportDevicePublicJwk, type NewDeviceKey, newDeviceKey } from './device-proof.js';
import { request } from './http.js';
import { failure, guard, invalid, messageOf, notInitialized, unexpected, withNote } from './results.js';
import { DEFAULT_BASE_URL, httpConfig, type ServiceClientDeps, type Session } from './session.js';
import type { FailureResult, InitializationResult, InitOptions } from './types.js';

/** A connection as a button: its id for signInWith, its label and its kind (for an icon). */
export interface UpstreamConnection {
  id: string;
  name: string;
  preset: string;
}

/** `deviceRemembered`: with signInWith's rememberDevice, whether this browser's key is kept (as verifyDevice says it). */
export type UpstreamResult =
  | { status: 'SUCCESS'; message: string; success: true; code: string; deviceRemembered?: boolean }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: string; userid: string; deviceRemembered?: boolean }
  | { status: 'LINK_NEEDED'; message: string; link: string; userid: string }
  | FailureResult;

type Http = Extract<ReturnType<typeof httpConfig>, { http: unknown }>['http'];
type GoesOn = Exclude<UpstreamResult, { status: 'LINK_NEEDED' }>;

const STATE_KEY = 'service-upstream-state';
/** signInWith's rememberDevice, and the account a LINK_NEEDED named: kept across the trip for confirmLink. */
const REMEMBER_KEY = 'service-upstream-remember';
const v1 = (path: string) => path.slice('/v1'.length);

/** Upstream sign-in against service-idp. */
export class ServiceUpstream {
  readonly #deps: ServiceClientDeps;
  #http: Http | undefined;
  #cryptoVersion: CryptoVersion = 'v1';
  #session: Session | undefined;

  constructor(deps: ServiceClientDeps = {}) {
    this.#deps = { ...deps };
  }

  /** Checks the options (the same as the core's init); makes no request. */
  async init(apiKey: string, baseUrl = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    const config = httpConfig(this.#deps, apiKey, baseUrl, options);
    if (config.status) return { ...config, success: false };
    this.#http = config.http;
    this.#cryptoVersion = config.cryptoVersion;
    this.#session = undefined;
    return { status: 'INITIALIZED', message: 'Initialized for upstream sign-in', success: true };
  }

  /** The connections this application shows, one button each. */
  connections(): Promise<{ status: 'SUCCESS'; message: string; connections: UpstreamConnection[] } | FailureResult> {
    return guard(async () => {
      if (!this.#http) return notInitialized();
      const { body, failure: failed } = await request(this.#http, v1(UpstreamPaths.connections));
      if (failed) return failed;
      if (!Array.isArray(body.connections)) return unexpected();
      return { status: 'SUCCESS' as const, message: 'Connections', connections: body.connections as UpstreamConnection[] };
    });
  }

  /**
   * Leaves the page for the provider (a navigation); the result comes back to `returnTo`
   * (default: this page), which must be on one of the application's registered origins.
   * Resolves only when it cannot leave (INVALID_REQUEST, NOT_INITIALIZED). An application passes
   * `rememberDevice` to remember this browser (result() finishes with its device key; without
   * WebCrypto the sign-in goes on unremembered); the hosted pages (an authorizationRequest) pass
   * their device key's public half instead: the sign-in registers it.
   */
  signInWith(
    connection: string,
    options: { code_challenge: string; returnTo?: string; rememberDevice?: boolean; devicePublicKey?: DevicePublicJwk },
  ): Promise<FailureResult> {
    return guard(async () => {
      if (!this.#http) return notInitialized();
      if (!isNonEmptyString(connection)) return invalid('connection must be a connection id');
      if (!/^[A-Za-z0-9_-]{43,128}$/.test(options?.code_challenge ?? '')) return invalid('code_challenge must be an S256 challenge');
      const { rememberDevice } = options;
      if (rememberDevice !== undefined && typeof rememberDevice !== 'boolean') return invalid('rememberDevice must be a boolean');
      if (rememberDevice && this.#http.authorizationRequest) return invalid('rememberDevice is for applications: pass devicePublicKey');
      const state = Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
      sessionStorage.setItem(STATE_KEY, state);
      const returnTo = options.returnTo ?? location.href.split('#')[0];
      const query = new URLSearchParams({
        connection,
        key: this.#http.apiKey,
        return_to: returnTo as string,
        state,
        code_challenge: options.code_challenge,
      });
      if (this.#http.authorizationRequest) query.set('request', this.#http.authorizationRequest);
      if (options.devicePublicKey) {
        const { kty, crv, x, y } = options.devicePublicKey;
        query.set('device_key', base64urlJson({ kty, crv, x, y }));
      }
      const remember = rememberDevice === true && !!cryptoOf(this.#deps)?.subtle;
      if (remember) query.set('remember_device', '1');
      sessionStorage.setItem(REMEMBER_KEY, remember ? '1' : '');
      location.assign(`${this.#http.baseUrl}${UpstreamPaths.start}?${query}`);
      return new Promise<FailureResult>(() => {});
    });
  }

  /**
   * The result the provider's return put in this page's address (its fragment), or null when
   * there is none. Read once: the fragment is cleared. A result this browser did not start (its
   * `state` is not the one signInWith kept) is refused as INVALID_REQUEST (login CSRF), before
   * anything is sent. With rememberDevice, the sign-in is finished here with this browser's key.
   */
  async result(): Promise<UpstreamResult | null> {
    const params = new URLSearchParams(location.hash.slice(1));
    const status = params.get('status');
    if (!status) return null;
    history.replaceState(null, '', location.href.split('#')[0]);
    const expected = sessionStorage.getItem(STATE_KEY);
    sessionStorage.removeItem(STATE_KEY);
    if (!expected || params.get('state') !== expected) return failure('INVALID_REQUEST', 'This sign-in was not started on this page.');
    const get = (name: string) => params.get(name) ?? '';
    if (status === 'DEVICE_KEY_NEEDED')
      return guard(() =>
        this.#withDevice(get('userid'), (devicePublicKey) =>
          this.#post(UpstreamPaths.device, { ticket: get('ticket'), devicePublicKey }, get('userid')),
        ),
      );
    if (status === 'SUCCESS') return { status, message: 'Signed in', success: true, code: get('code') };
    if (status === 'MFA_REQUIRED')
      return {
        status,
        message: 'Verify with your second factor to finish signing in.',
        sessionId: get('sessionId'),
        method: get('method'),
        userid: get('userid'),
      };
    if (status === 'LINK_NEEDED') {
      // confirmLink remembers the browser for this account when signInWith asked to.
      if (sessionStorage.getItem(REMEMBER_KEY)) sessionStorage.setItem(REMEMBER_KEY, get('userid'));
      return {
        status,
        message: 'An account has this address: enter the code we emailed to it to link it.',
        link: get('link'),
        userid: get('userid'),
      };
    }
    return failure(get('code') === 'ERR_SESSION_INVALID' ? 'SESSION_EXPIRED' : 'INVALID_REQUEST', get('message') || 'The sign-in failed.');
  }

  /**
   * The code mailed to the existing account (after LINK_NEEDED): SUCCESS with the code, or
   * MFA_REQUIRED. The hosted pages pass their device key; after signInWith's rememberDevice this
   * browser's key goes along and is kept.
   */
  confirmLink(input: {
    link: string;
    otp: string;
    devicePublicKey?: DevicePublicJwk;
  }): Promise<Exclude<UpstreamResult, { status: 'LINK_NEEDED' }>> {
    return guard(async () => {
      if (!this.#http) return notInitialized();
      if (!/^[0-9]{6}$/.test(input?.otp ?? '')) return failure('INVALID_OTP', 'The code is 6 digits');
      const body = { link: input.link, otp: input.otp };
      const key = input.devicePublicKey;
      if (key)
        return this.#post(UpstreamPaths.confirmLink, { ...body, devicePublicKey: { kty: key.kty, crv: key.crv, x: key.x, y: key.y } });
      const account = sessionStorage.getItem(REMEMBER_KEY);
      if (!account || account === '1') return this.#post(UpstreamPaths.confirmLink, body);
      return this.#withDevice(account, (devicePublicKey) => this.#post(UpstreamPaths.confirmLink, { ...body, devicePublicKey }, account));
    });
  }

  /** A step that goes on with a code or the MFA step (the link, the device ticket); `userid` for MFA_REQUIRED. */
  async #post(path: string, body: object, userid = ''): Promise<GoesOn & { deviceId?: unknown }> {
    const { body: answer, failure: failed } = await request(this.#http as Http, v1(path), body);
    if (failed) return failed;
    const message = messageOf(answer);
    const deviceId = isNonEmptyString(answer.deviceId) ? { deviceId: answer.deviceId } : {};
    if (answer.status === 'SUCCESS' && typeof answer.code === 'string')
      return { status: 'SUCCESS' as const, message, success: true as const, code: answer.code, ...deviceId };
    if (answer.status === 'MFA_REQUIRED' && typeof answer.sessionId === 'string')
      return { status: 'MFA_REQUIRED' as const, message, sessionId: answer.sessionId, method: String(answer.method), userid, ...deviceId };
    return unexpected();
  }

  /**
   * Runs `step` with this browser's device key for the account (the one kept for it, so the same
   * browser is the same device, or a new pair), then keeps the key under the device id the
   * service answers. The id answered at MFA_REQUIRED is the device's once the step passes: if it
   * never does, the core's authenticate finds the key refused and forgets it.
   */
  async #withDevice(userid: string, step: (devicePublicKey: DevicePublicJwk) => Promise<GoesOn & { deviceId?: unknown }>): Promise<GoesOn> {
    const session = await this.#sessionOf();
    if ('status' in session) return session;
    const email = normalizeEmail(userid);
    const crypto = cryptoOf(this.#deps);
    const kept = await deviceRecord(session, email).catch(() => undefined);
    const key: NewDeviceKey =
      kept && crypto
        ? { keyPair: kept.keyPair, publicJwk: await exportDevicePublicJwk(crypto, kept.keyPair.publicKey) }
        : await newDeviceKey(crypto);
    if (!key.publicJwk) return failure('SERVICE_ERROR', `This browser cannot keep a device key (${key.problem})`);
    const { deviceId, ...result } = await step(key.publicJwk);
    // A refusal (a mistyped link code) keeps the remembered choice for the next try.
    if (result.status !== 'SUCCESS' && result.status !== 'MFA_REQUIRED') return result;
    sessionStorage.removeItem(REMEMBER_KEY);
    const { deviceRemembered, problem } = await keepDeviceKey(session, email, false, key, deviceId);
    return { ...result, message: withNote(result.message, problem), deviceRemembered };
  }

  /** What the device store needs of this client (its id, as the core's init reads it): asked once, on the first remembered sign-in. */
  async #sessionOf(): Promise<Session | FailureResult> {
    if (this.#session) return this.#session;
    const http = this.#http as Http;
    const { body, failure: failed } = await request(http, BrowserPaths.client);
    if (failed) return failed;
    if (!isNonEmptyString(body.clientId)) return unexpected();
    this.#session = { http, clientId: body.clientId, iss: String(body.issuer), cryptoVersion: this.#cryptoVersion, deps: this.#deps };
    return this.#session;
  }
}
