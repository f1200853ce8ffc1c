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
 * @example
 * ```ts
 * import { createPkcePair } from 'service-web';
 * import { ServiceUpstream } from 'service-web/upstream';
 * const upstream = new ServiceUpstream();
 * await upstream.init('pk_...', 'https://id.example.com');
 * const back = upstream.result();          // after the provider sent the user back
 * if (back?.status === 'SUCCESS') await sendToBackend(back.code, sessionStorage.getItem('verifier'));
 * // on the button:
 * const pkce = await createPkcePair(); sessionStorage.setItem('verifier', pkce.codeVerifier);
 * upstream.signInWith('con_…', { code_challenge: pkce.codeChallenge });
 * ```
 *
 * @packageDocumentation
 */
import { type DevicePublicJwk, UpstreamPaths } from 'service-protocol';
import { base64urlJson } from './base64url.js';
import { isNonEmptyString } from './checks.js';
import { request } from './http.js';
import { failure, guard, invalid, messageOf, notInitialized, unexpected } from './results.js';
import { DEFAULT_BASE_URL, httpConfig, type ServiceClientDeps } from './session.js';
import type { FailureResult, InitializationResult, InitOptions } from './types.js';

/** A connection as a button: its id for signInWith, its label and its kind (for an icon). */
export interface UpstreamConnection {
  id: string;
  name: string;
  preset: string;
}

export type UpstreamResult =
  | { status: 'SUCCESS'; message: string; success: true; code: string }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: string; userid: string }
  | { status: 'LINK_NEEDED'; message: string; link: string; userid: string }
  | FailureResult;

const STATE_KEY = 'service-upstream-state';
const v1 = (path: string) => path.slice('/v1'.length);

/** Upstream sign-in against service-idp. */
export class ServiceUpstream {
  readonly #deps: ServiceClientDeps;
  #http: Extract<ReturnType<typeof httpConfig>, { http: unknown }>['http'] | undefined;

  constructor(deps: ServiceClientDeps = {}) {
    this.#deps = { ...deps };
  }

  /** Checks the options (the same as the core's init); makes no request. */
  async init(apiKey: string, baseUrl = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    const config = httpConfig(this.#deps, apiKey, baseUrl, options);
    if (config.status) return { ...config, success: false };
    this.#http = config.http;
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
   * Resolves only when it cannot leave (INVALID_REQUEST, NOT_INITIALIZED). The hosted pages
   * (an authorizationRequest) pass their device key's public half: the sign-in registers it.
   */
  signInWith(
    connection: string,
    options: { code_challenge: string; returnTo?: string; devicePublicKey?: DevicePublicJwk },
  ): Promise<FailureResult> {
    return guard(async () => {
      if (!this.#http) return notInitialized();
      if (!isNonEmptyString(connection)) return invalid('connection must be a connection id');
      if (!/^[A-Za-z0-9_-]{43,128}$/.test(options?.code_challenge ?? '')) return invalid('code_challenge must be an S256 challenge');
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
      location.assign(`${this.#http.baseUrl}${UpstreamPaths.start}?${query}`);
      return new Promise<FailureResult>(() => {});
    });
  }

  /**
   * The result the provider's return put in this page's address (its fragment), or null when
   * there is none. Read once: the fragment is cleared. A result this browser did not start (its
   * `state` is not the one signInWith kept) is refused as INVALID_REQUEST (login CSRF).
   */
  result(): UpstreamResult | null {
    const params = new URLSearchParams(location.hash.slice(1));
    const status = params.get('status');
    if (!status) return null;
    history.replaceState(null, '', location.href.split('#')[0]);
    const expected = sessionStorage.getItem(STATE_KEY);
    sessionStorage.removeItem(STATE_KEY);
    if (!expected || params.get('state') !== expected) return failure('INVALID_REQUEST', 'This sign-in was not started on this page.');
    const get = (name: string) => params.get(name) ?? '';
    if (status === 'SUCCESS') return { status, message: 'Signed in', success: true, code: get('code') };
    if (status === 'MFA_REQUIRED')
      return {
        status,
        message: 'Verify with your second factor to finish signing in.',
        sessionId: get('sessionId'),
        method: get('method'),
        userid: get('userid'),
      };
    if (status === 'LINK_NEEDED')
      return {
        status,
        message: 'An account has this address: enter the code we emailed to it to link it.',
        link: get('link'),
        userid: get('userid'),
      };
    return failure(get('code') === 'ERR_SESSION_INVALID' ? 'SESSION_EXPIRED' : 'INVALID_REQUEST', get('message') || 'The sign-in failed.');
  }

  /** The code mailed to the existing account (after LINK_NEEDED): SUCCESS with the code, or MFA_REQUIRED. */
  confirmLink(input: {
    link: string;
    otp: string;
    devicePublicKey?: DevicePublicJwk;
  }): Promise<Exclude<UpstreamResult, { status: 'LINK_NEEDED' }>> {
    return guard(async () => {
      if (!this.#http) return notInitialized();
      if (!/^[0-9]{6}$/.test(input?.otp ?? '')) return failure('INVALID_OTP', 'The code is 6 digits');
      const key = input.devicePublicKey;
      const devicePublicKey = key && { kty: key.kty, crv: key.crv, x: key.x, y: key.y };
      const { body, failure: failed } = await request(this.#http, v1(UpstreamPaths.confirmLink), {
        link: input.link,
        otp: input.otp,
        ...(devicePublicKey ? { devicePublicKey } : {}),
      });
      if (failed) return failed;
      const message = messageOf(body);
      if (body.status === 'SUCCESS' && typeof body.code === 'string')
        return { status: 'SUCCESS' as const, message, success: true as const, code: body.code };
      if (body.status === 'MFA_REQUIRED' && typeof body.sessionId === 'string')
        return { status: 'MFA_REQUIRED' as const, message, sessionId: body.sessionId, method: String(body.method), userid: '' };
      return unexpected();
    });
  }
}
