/**
 * verifyJwt (service-oauth-client) against jose's jwtVerify with an imported key, in this
 * process, for every key form verifyJwt accepts. Target: at most 10% slower than jose.
 *
 * jose is asynchronous (WebCrypto, whose RSA work runs in the libuv pool), so it is measured
 * twice: one verification at a time, and 32 in flight. verifyJwt is synchronous, so
 * concurrency does not change its rate; its rate is compared with the better of the two.
 * The machine may be shared, so the runs are interleaved: ROUNDS rounds of (jose ×2, every key
 * form), each run BENCH_VERIFY_MS (default 300 ms) after a short warm-up, and each figure is
 * the median over the rounds of its ratio to jose's best in the same round.
 */
import { generateKeyPairSync, webcrypto } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importSPKI, jwtVerify, SignJWT } from 'jose';
import { verifyJwt } from 'service-oauth-client';

const RUN_MS = Number(process.env.BENCH_VERIFY_MS ?? 300);
const ROUNDS = 3;

export interface VerifyJwtResult {
  /** jose jwtVerify with an imported CryptoKey: verifications/s at concurrency 1 and 32 (medians). */
  jose: { c1: number; c32: number };
  /** verifyJwt verifications/s per key form (medians). */
  forms: Record<string, number>;
  /** Per key form: median over the rounds of verifyJwt's rate ÷ jose's best rate in the same round. */
  ratios: Record<string, number>;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

async function rate(run: () => unknown, inFlight: number): Promise<number> {
  const warmEnd = performance.now() + 100;
  while (performance.now() < warmEnd) await run();
  let count = 0;
  const start = performance.now();
  const end = start + RUN_MS;
  while (performance.now() < end) {
    if (inFlight === 1) {
      await run();
      count++;
    } else {
      await Promise.all(Array.from({ length: inFlight }, run));
      count += inFlight;
    }
  }
  return count / ((performance.now() - start) / 1000);
}

function syncRate(run: () => unknown): number {
  const warmEnd = performance.now() + 100;
  while (performance.now() < warmEnd) run();
  let count = 0;
  const start = performance.now();
  const end = start + RUN_MS;
  while (performance.now() < end) {
    run();
    count++;
  }
  return count / ((performance.now() - start) / 1000);
}

export async function verifyJwtRates(): Promise<VerifyJwtResult> {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
  const now = Math.floor(Date.now() / 1000);
  const token = await new SignJWT({ sub: 'usr_bench', email: 'bench@example.com', email_verified: true })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer('https://idp.bench.test')
    .setAudience('client-bench')
    .setIssuedAt(now)
    .setExpirationTime(now + 600)
    .sign(privateKey);
  const checks = { audience: 'client-bench', issuer: 'https://idp.bench.test' };

  const joseKey = await importSPKI(pem, 'RS256');

  const dir = mkdtempSync(join(tmpdir(), 'bench-verify-'));
  try {
    const path = join(dir, 'key.pem');
    writeFileSync(path, pem);
    const der = publicKey.export({ type: 'spki', format: 'der' });
    const cryptoKey = await webcrypto.subtle.importKey('spki', der, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']);
    const inputs: Record<string, Parameters<typeof verifyJwt>[1]> = {
      'PEM string': pem,
      'PEM Buffer': Buffer.from(pem),
      'DER Buffer': der,
      'file path': path,
      KeyObject: publicKey,
      CryptoKey: cryptoKey,
    };
    const rounds: { c1: number; c32: number; forms: Record<string, number> }[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const c1 = await rate(() => jwtVerify(token, joseKey, checks), 1);
      const c32 = await rate(() => jwtVerify(token, joseKey, checks), 32);
      const forms: Record<string, number> = {};
      for (const [form, input] of Object.entries(inputs)) {
        if (verifyJwt(token, input, checks).sub !== 'usr_bench') throw new Error(`verifyJwt with a ${form} gave the wrong claims`);
        forms[form] = syncRate(() => verifyJwt(token, input, checks));
      }
      rounds.push({ c1, c32, forms });
    }
    const names = Object.keys(inputs);
    return {
      jose: { c1: median(rounds.map((r) => r.c1)), c32: median(rounds.map((r) => r.c32)) },
      forms: Object.fromEntries(names.map((n) => [n, median(rounds.map((r) => r.forms[n] as number))])),
      ratios: Object.fromEntries(names.map((n) => [n, median(rounds.map((r) => (r.forms[n] as number) / Math.max(r.c1, r.c32)))])),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
