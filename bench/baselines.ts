/**
 * Baseline A: the machine's raw RSA-2048 (RS256) signing rate over all cores. One worker
 * thread per core signs in a tight loop for a fixed time; the rates are summed. This is the
 * ceiling for a token endpoint that signs one RSA ID token per request.
 */
import { generateKeyPairSync } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';

// Plain CommonJS so the worker needs no loader. The input is about the size of an ID token's
// signing input, though for RSA the private-key operation dominates and size barely matters.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createPrivateKey, sign } = require('node:crypto');
const key = createPrivateKey(workerData.pem);
const data = Buffer.alloc(600, 'a');
for (let i = 0; i < 50; i++) sign('sha256', data, key);
let count = 0;
const start = performance.now();
const end = start + workerData.ms;
while (performance.now() < end) { sign('sha256', data, key); count++; }
parentPort.postMessage(count / ((performance.now() - start) / 1000));
`;

export interface RsaBaseline {
  /** Signatures per second, all cores. */
  rate: number;
  perCore: number[];
  threads: number;
}

export async function rsaSigningRate(seconds: number): Promise<RsaBaseline> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ format: 'pem', type: 'pkcs8' });
  const threads = availableParallelism();
  const perCore = await Promise.all(
    Array.from(
      { length: threads },
      () =>
        new Promise<number>((resolve, reject) => {
          const worker = new Worker(WORKER, { eval: true, workerData: { pem, ms: seconds * 1000 } });
          worker.once('message', (rate: number) => {
            resolve(rate);
            void worker.terminate();
          });
          worker.once('error', reject);
        }),
    ),
  );
  return { rate: perCore.reduce((a, b) => a + b, 0), perCore, threads };
}
