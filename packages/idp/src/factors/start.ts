import type { MfaMethod } from 'service-protocol';
import type { ClientService } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import type { DomainRouting } from '../organization-domains/service.js';
import { deviceProofKeyId } from './device-key/proof.js';
import type { DeviceKeySignIn } from './device-key/sign-in.js';
import type { DeviceKeyRead } from './device-key/sign-in-store.js';
import type { NewDeviceSignIn } from './email-code/new-device.js';

export interface SignInStartDeps {
  /** The first factor of a remembered device. */
  deviceKey: DeviceKeySignIn;
  /** The first factor of a new device (or of a refused proof): the emailed code. */
  emailCode: Pick<NewDeviceSignIn, 'start'>;
  clients: ClientService;
  /** Addresses whose organization signs them in with its own provider (organization-domains/). */
  routing: Pick<DomainRouting, 'upstreamFor'>;
}

export interface AuthenticateInput {
  email: string;
  cryptoVersion: string;
  rememberDevice: boolean;
  codeChallenge: string | null;
  deviceProof?: string;
  ip: string;
  /** The sign-in's read, when open() made it with the client; otherwise the device key reads. */
  read?: DeviceKeyRead;
}

export type AuthenticateOutcome =
  | { kind: 'trusted'; code: string }
  | { kind: 'mfa'; sessionId: string; method: MfaMethod }
  /** The address's verified domain is routed to its organization's provider: nothing was sent or tried. */
  | { kind: 'upstream'; connection: string }
  /** `deviceRefused`: a device proof was sent and not accepted (the browser drops its key). */
  | { kind: 'otp'; deviceToken: string; otp: string; deviceRefused: boolean };

export interface SignInStart {
  /**
   * The client of an authenticate request (the checks and errors of every browser route).
   * With a device proof, it is read in the device key's one read, with the device the proof names.
   */
  open(
    credentials: {
      publishableKey?: string;
      origin?: string;
    },
    deviceProof?: string,
  ): Promise<{
    client: ClientRecord;
    read?: DeviceKeyRead;
  }>;
  authenticate(client: ClientRecord, input: AuthenticateInput): Promise<AuthenticateOutcome>;
}

/**
 * The start of every sign-in through the API (sign-in/pipeline.ts), `POST /v1/authenticate`: it
 * picks the first factor. A remembered device that proves possession of its key signs in with
 * it (factors/device-key/sign-in.ts); anything else (no proof, a forged proof, another user's
 * device, a removed key) starts the emailed code (factors/email-code/new-device.ts), answered
 * identically for known and unknown addresses.
 */
export function createSignInStart({ deviceKey, emailCode, clients, routing }: SignInStartDeps): SignInStart {
  return {
    async open(credentials, deviceProof) {
      const deviceId = deviceProof === undefined ? undefined : deviceProofKeyId(deviceProof);
      if (deviceId === undefined || credentials.publishableKey === undefined) {
        return { client: await clients.authenticateBrowser(credentials.publishableKey, credentials.origin) };
      }
      const read = await deviceKey.read({ publishableKeyHash: clients.publishableKeyHash(credentials.publishableKey) }, deviceId);
      return { client: clients.checkBrowserOrigin(read?.client, credentials.origin), ...(read ? { read } : {}) };
    },

    async authenticate(client, input) {
      // An organization that signs its people in with its own provider: neither a mailed code nor a
      // remembered device opens the door to its addresses (its provider decides who is still in).
      const connection = await routing.upstreamFor(input.email);
      if (connection !== undefined) return { kind: 'upstream', connection };
      let proven = false;
      if (input.deviceProof !== undefined) {
        const outcome = await deviceKey.attempt(client, {
          email: input.email,
          cryptoVersion: input.cryptoVersion,
          codeChallenge: input.codeChallenge,
          deviceProof: input.deviceProof,
          ...(input.read ? { read: input.read } : {}),
        });
        if (outcome.kind !== 'not-signed-in') return outcome;
        proven = outcome.proven;
      }
      const started = await emailCode.start(client, input.email, {
        rememberDevice: input.rememberDevice,
        cryptoVersion: input.cryptoVersion,
        codeChallenge: input.codeChallenge,
        ip: input.ip,
      });
      return { kind: 'otp', ...started, deviceRefused: input.deviceProof !== undefined && !proven };
    },
  };
}
