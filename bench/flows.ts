/**
 * The workloads run against the service: what a browser and a backend send, byte for byte
 * (origin and publishable key on browser calls, client_secret_post on the token call).
 */
import type { KeyObject } from 'node:crypto';
import { Paths, PUBLISHABLE_KEY_HEADER } from 'service-protocol';
import type { Workload } from './load.js';
import { deviceProof } from './proof.js';

export interface BenchClient {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}

export interface BenchDevice {
  email: string;
  deviceId: string;
  privateKey: KeyObject;
}

export const BENCH_ORIGIN = 'http://bench.test';

/** node-oidc-provider's token endpoint path (bench/oidc-provider-server.ts). */
export const OIDC_PROVIDER_TOKEN_PATH = '/token';

const browserHeaders = (client: BenchClient) => ({
  'content-type': 'application/json',
  origin: BENCH_ORIGIN,
  [PUBLISHABLE_KEY_HEADER]: client.publishableKey,
});

/** POST /v1/device-challenges alone: the first half of a login. */
export function challengeOnly(client: BenchClient): () => Workload {
  return () => ({
    requests: [{ method: 'POST', path: Paths.deviceChallenge, headers: browserHeaders(client), body: '{}' }],
    tally: (r) => ({ ok: r['2xx'], failed: r.non2xx }),
  });
}

/**
 * A trusted-device login as service-web's authenticate() does it for a remembered device:
 * get a challenge, sign the proof with the device key, authenticate with it. Devices are used
 * round-robin; a login counts only when the answer is SUCCESS with a code.
 */
export function trustedLogin(client: BenchClient, devices: BenchDevice[]): () => Workload {
  return () => {
    let next = 0;
    let ok = 0;
    let failed = 0;
    return {
      requests: [
        {
          method: 'POST',
          path: Paths.deviceChallenge,
          headers: browserHeaders(client),
          body: '{}',
          onResponse(status, body, context) {
            context.challenge = status === 200 ? (JSON.parse(body) as { challenge: string }).challenge : undefined;
            if (status !== 200) failed++;
          },
        },
        {
          method: 'POST',
          path: Paths.authenticate,
          headers: browserHeaders(client),
          // Returning undefined (no challenge) makes autocannon start the sequence again.
          setupRequest(request, context) {
            if (typeof context.challenge !== 'string') return undefined;
            const device = devices[next++ % devices.length] as BenchDevice;
            const proof = deviceProof(device.privateKey, device.deviceId, device.email, context.challenge);
            return { ...request, body: JSON.stringify({ userid: device.email, cryptoVersion: 'v1', deviceProof: proof }) };
          },
          onResponse(status, body) {
            if (status === 200 && body.includes('"status":"SUCCESS"') && body.includes('"code":"ac_')) ok++;
            else failed++;
          },
        },
      ],
      tally: () => ({ ok, failed }),
    };
  };
}

/**
 * POST /oauth/token with a fresh single-use code per request. The codes are minted before the
 * run; the run is capped to the codes at hand (each connection builds one request ahead).
 */
export function tokenExchange(
  client: Pick<BenchClient, 'clientId' | 'secretKey'>,
  codes: string[],
  connections: number,
  path: string = Paths.token,
): () => Workload {
  return () => ({
    maxRequests: Math.max(1, codes.length - connections),
    requests: [
      {
        method: 'POST',
        path,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        setupRequest(request) {
          const code = codes.pop() ?? 'exhausted';
          const form = new URLSearchParams({
            grant_type: 'authorization_code',
            code,
            client_id: client.clientId,
            client_secret: client.secretKey,
          });
          return { ...request, body: form.toString() };
        },
      },
    ],
    tally: (r) => ({ ok: r['2xx'], failed: r.non2xx }),
  });
}

/** A machine client and the API it is granted (bench/idp-server.ts, bench/oidc-provider-server.ts). */
export interface BenchMachine {
  clientId: string;
  secretKey: string;
  /** The API's identifier: the token's `aud` (RFC 8707 resource). */
  resource: string;
  scope: string;
}

/** The API both servers issue client_credentials tokens for. */
export const BENCH_API = 'https://api.bench.test';

/**
 * POST /oauth/token with grant_type=client_credentials (RFC 6749 4.4), client_secret_post, the
 * API named by `resource` and its permission in `scope`: an RFC 9068 JWT per request. Nothing
 * is single-use, so nothing is minted before the run.
 */
export function clientCredentialsGrant(machine: BenchMachine, path: string = Paths.token): () => Workload {
  const body = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: machine.clientId,
    client_secret: machine.secretKey,
    resource: machine.resource,
    scope: machine.scope,
  }).toString();
  return () => ({
    requests: [{ method: 'POST', path, headers: { 'content-type': 'application/x-www-form-urlencoded' }, body }],
    tally: (r) => ({ ok: r['2xx'], failed: r.non2xx }),
  });
}
