import { BrowserPaths, DeviceOps } from 'service-protocol';
import { request } from '../http.js';
import { failure, guard, lacksSuccess, notInitialized, unexpected } from '../results.js';
import { DEFAULT_BASE_URL, httpConfig, type ServiceClientDeps, type Session } from '../session.js';
import type { DeviceChangeResult, FailureResult, InitializationResult, InitOptions, ListDevicesResult } from '../types.js';
import { deviceOperation } from './operation.js';

/**
 * The user's trusted devices for this application, managed from a browser that is one of them:
 * each operation is proven by the device key the core client stored for the user here.
 * Initialize it with the same key and base URL as the core client. No method throws; failures
 * come back as a `status`, as in the core.
 */
export class ServiceDevices {
  readonly #deps: ServiceClientDeps;
  #session: Session | undefined;

  /** Reads no global until a method runs, so constructing one is safe anywhere. */
  constructor(deps: ServiceClientDeps = {}) {
    this.#deps = { ...deps };
  }

  /**
   * Checks the publishable key, as the core init() does.
   *
   * @example
   * ```ts
   * await devices.init('pk_...', 'https://id.example.com');
   * ```
   */
  init(apiKey: string, baseUrl: string = DEFAULT_BASE_URL, options: InitOptions = {}): Promise<InitializationResult> {
    return guard(async (): Promise<InitializationResult | FailureResult> => {
      this.#session = undefined;
      const config = httpConfig(this.#deps, apiKey, baseUrl ?? DEFAULT_BASE_URL, options);
      if (config.status) return config;
      const { body, failure: failed, httpStatus } = await request(config.http, BrowserPaths.client);
      if (failed) return httpStatus === 401 || httpStatus === 403 ? failure('INVALID_API_KEY', 'The API key was refused') : failed;
      if (typeof body.clientId !== 'string') return unexpected();
      this.#session = { ...config, clientId: body.clientId, iss: body.issuer as string, deps: this.#deps };
      return { status: 'INITIALIZED', message: 'Initialized for devices', success: true };
    }, lacksSuccess);
  }

  /**
   * Lists the user's trusted devices for this application (name, browser, OS, created, last
   * used, `current` for this browser). Needs this browser to be one of them: it proves itself
   * with its device key. A refused device (revoked, expired) forgets its key and gets
   * DEVICE_KEY_UNAVAILABLE; the next authenticate then asks for the email OTP.
   *
   * @example
   * ```ts
   * const r = await devices.listDevices('ann@example.com');
   * if (r.status === 'SUCCESS') for (const d of r.devices) console.log(d.name, d.current ? '(this device)' : '');
   * ```
   */
  listDevices(userid: string): Promise<ListDevicesResult> {
    return this.#run(deviceOperation, userid, BrowserPaths.listDevices, DeviceOps.list) as Promise<ListDevicesResult>;
  }

  /**
   * Renames one of the user's devices (1 to 64 characters, no control characters; the service
   * checks, INVALID_REQUEST otherwise).
   *
   * @example
   * ```ts
   * await devices.renameDevice({ userid: 'ann@example.com', deviceId: d.id, name: 'Work laptop' });
   * ```
   */
  renameDevice(input: { userid: string; deviceId: string; name: string }): Promise<DeviceChangeResult> {
    return this.#run(deviceOperation, input?.userid, BrowserPaths.renameDevice, DeviceOps.rename, {
      deviceId: input?.deviceId,
      name: input?.name,
    });
  }

  /**
   * Revokes one of the user's devices: it must verify by email to sign in again. Revoking this
   * browser's own device also forgets its key here.
   *
   * @example
   * ```ts
   * const r = await devices.revokeDevice({ userid: 'ann@example.com', deviceId: lost.id });
   * ```
   */
  revokeDevice(input: { userid: string; deviceId: string }): Promise<DeviceChangeResult> {
    return this.#run(deviceOperation, input?.userid, BrowserPaths.revokeDevice, DeviceOps.revoke, { deviceId: input?.deviceId });
  }

  /**
   * "Sign out everywhere else": revokes every device of the user for this application except
   * this browser. `revoked` says how many.
   *
   * @example
   * ```ts
   * const r = await devices.revokeOtherDevices('ann@example.com');
   * if (r.status === 'SUCCESS') alert(`${r.revoked} device(s) signed out`);
   * ```
   */
  revokeOtherDevices(userid: string): Promise<DeviceChangeResult> {
    return this.#run(deviceOperation, userid, BrowserPaths.revokeOtherDevices, DeviceOps.revokeOthers);
  }

  /** Runs an operation of an initialized client with `args` under guard (NOT_INITIALIZED otherwise). */
  #run<A extends unknown[], T>(operation: (session: Session, ...args: A) => Promise<T>, ...args: A): Promise<T> {
    return guard(async () => (this.#session ? operation(this.#session, ...args) : notInitialized()));
  }
}
