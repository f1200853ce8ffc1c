/**
 * Machine baselines, measured in worker threads (one per core) in a tight loop for a fixed
 * time; the per-thread rates are summed.
 *
 * - A: raw RSA-2048 (RS256) signatures/s: the ceiling of a token endpoint that signs one RSA
 *   ID token per request.
 * - ES256 (P-256) verifications/s of a device-proof-sized input: the ceiling of trusted-device
 *   logins, each of which verifies one proof.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// Plain CommonJS so the worker needs no loader. The inputs are about the size of an ID token's
// signing input and of a device proof's.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPrivateKey, createPublicKey, sign, verify } = require('node:crypto');
const data = Buffer.alloc(workerData.bytes, 'a');
let run;
if (workerData.kind === 'rsa-sign') {
  const key = createPrivateKey(workerData.pem);
  run = () => sign('sha256', data, key);
} else {
  const key = createPublicKey(workerData.pem);
  const signature = Buffer.from(workerData.signature, 'base64');
  run = () => { if (!verify('sha256', data, { key, dsaEncoding: 'ieee-p1363' }, signature)) throw new Error('bad signature'); };
}
for (let i = 0; i < 50; i++) run();
let count = 0;
const start = performance.now();
const end = start + workerData.ms;
while (performance.now() < end) { run(); count++; }
parentPort.postMessage(count / ((performance.now() - start) / 1000));
`;

export interface CryptoBaseline {
  /** Operations per second, all cores. */
  rate: number;
  perCore: number[];
  threads: number;
}

function onAllCores(seconds: number, workerData: Record<string, unknown>): Promise<CryptoBaseline> {
  const threads = availableParallelism();
  return Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const worker = new Worker(WORKER, { eval: true, workerData: { ...workerData, ms: seconds * 1000 } });
          worker.once('message', (rate: number) => {
            resolve(rate);
            void worker.terminate();
          });
          worker.once('error', reject);
        }),
    ),
  ).then((perCore) => ({ rate: perCore.reduce((a, b) => a + b, 0), perCore, threads }));
}

export function rsaSigningRate(seconds: number): Promise<CryptoBaseline> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return onAllCores(seconds, { kind: 'rsa-sign', bytes: 600, pem: privateKey.export({ format: 'pem', type: 'pkcs8' }) });
}

export function es256VerifyRate(seconds: number): Promise<CryptoBaseline> {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const bytes = 250;
  const signature = sign('sha256', Buffer.alloc(bytes, 'a'), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64');
  return onAllCores(seconds, { kind: 'es256-verify', bytes, signature, pem: publicKey.export({ format: 'pem', type: 'spki' }) });
}
