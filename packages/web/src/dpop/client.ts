import { BrowserPaths, normalizeEmail } from 'service-protocol';
import { base64url, base64urlJson } from '../base64url.js';
import { cryptoOf, deviceRecord } from '../device-keys.js';
import { exportDevicePublicJwk } from '../device-proof.js';
import { request } from '../http.js';
import { failure, guard, invalid, notInitialized, unexpected } from '../results.js';
import { DEFAULT_BASE_URL, httpConfig, type ServiceClientDeps, type Session } from '../session.js';
import type { FailureResult, InitializationResult, InitOptions } from '../types.js';

/** What a proof is for (RFC 9449 4.2). */
export interface DpopInput {
  /** The remembered user whose device key signs. */
  userid: string;
  /** The request's method (`htm`). */
  method: string;
  /** The request's URL (`htu`; query and fragment are dropped). */
  url: string;
  /** The access token sent with the request, for a resource request (`ath`). */
  accessToken?: string;
  /** The server's latest `DPoP-Nonce`, once it asked for one. */
  nonce?: string;
}

/** A proof, as the header to send, and the JWK thumbprint of the key (what `cnf.jkt` names). */
export type DpopResult =
  | { status: 'SUCCESS'; success: true; headers: { DPoP: string }; jkt: string }
  | (FailureResult & { success: false });

const sha256 = async (crypto: Crypto, text: string) =>
  base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))));

/**
 * DPoP proofs signed by the device key the core client stored for a user on this browser.
 * Initialize it with the same key and base URL as the core client. No method throws.
 */
export class ServiceDpop {
  readonly #deps: ServiceClientDeps;
  #session: Session | undefined;

  constructor(deps: ServiceClientDeps = {}) {
    this.#deps = { ...deps };
  }

  /** Checks the publishable key, as the core init() does. */
  init(apiKey: string, baseUrl = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    return guard(
      async () => {
        this.#session = undefined;
        const config = httpConfig(this.#deps, apiKey, baseUrl, options);
        if (config.status) return config;
        const { body, failure: failed, httpStatus } = await request(config.http, BrowserPaths.client);
        if (failed) return httpStatus === 401 || httpStatus === 403 ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
        if (typeof body.clientId !== 'string') return unexpected();
        this.#session = { ...config, clientId: body.clientId, iss: body.issuer as string, deps: this.#deps };
        return { status: 'INITIALIZED', message: 'Initialized for DPoP', success: true };
      },
      (r) => !('success' in r),
    );
  }

  /**
   * A DPoP proof for one request, signed by `userid`'s device key (ES256): send `headers` with
   * the request. Statuses: SUCCESS, DEVICE_KEY_UNAVAILABLE (this browser is not a remembered
   * device for `userid`), NOT_INITIALIZED, INVALID_REQUEST.
   *
   * @example
   * ```ts
   * const r = await dpop.dpop({ userid, method: 'GET', url: userinfoUrl, accessToken, nonce });
   * ```
   */
  dpop(input: DpopInput): Promise<DpopResult> {
    return guard(
      async (): Promise<DpopResult | FailureResult> => {
        const session = this.#session;
        if (!session) return notInitialized();
        let htu: URL;
        try {
          htu = new URL(input.url);
        } catch {
          return invalid('url must be an absolute URL');
        }
        if (!/^[A-Z]+$/.test(input.method)) return invalid('method must be an HTTP method in capitals');
        const crypto = cryptoOf(session.deps);
        const record = crypto?.subtle && (await deviceRecord(session, normalizeEmail(input.userid)).catch(() => undefined));
        if (!crypto || !record) return failure('DEVICE_KEY_UNAVAILABLE', 'This browser is not a remembered device for this user');
        const jwk = await exportDevicePublicJwk(crypto, record.keyPair.publicKey);
        const header = { typ: 'dpop+jwt', alg: 'ES256', jwk };
        const payload = {
          jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
          htm: input.method,
          htu: htu.origin + htu.pathname,
          iat: Math.floor(Date.now() / 1000),
          ...(input.accessToken ? { ath: await sha256(crypto, input.accessToken) } : {}),
          ...(input.nonce ? { nonce: input.nonce } : {}),
        };
        const signingInput = `${base64urlJson(header)}.${base64urlJson(payload)}`;
        // WebCrypto's ECDSA signature is raw r||s, the JWS ES256 form (RFC 7518 3.4).
        const signature = await crypto.subtle.sign(
          { name: 'ECDSA', hash: 'SHA-256' },
          record.keyPair.privateKey,
          new TextEncoder().encode(signingInput),
        );
        const proof = `${signingInput}.${base64url(new Uint8Array(signature))}`;
        // RFC 7638 3.2: the required members in lexicographic order.
        const jkt = await sha256(crypto, JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }));
        return { status: 'SUCCESS', success: true, headers: { DPoP: proof }, jkt };
      },
      (r) => !('success' in r),
    );
  }
}
