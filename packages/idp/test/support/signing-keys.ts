/**
 * Signing keys for test services. Every service start makes an RSA-2048, a P-256 and an Ed25519
 * key (keys/keyring.ts `ensure`), and the RSA one is 70 to 300 ms of CPU: more than the rest of
 * many a test's start. startTestService hands each service's keyring these instead, for its first
 * key of each algorithm: one pair per algorithm, made once per test run (the `node --test`
 * process, this file's parent) and kept as private JWKs in the temporary folder, so the files
 * of a run share them. Each service has a database of its own, so a kid never repeats within
 * one (two keyrings on one database must not both take these); any later key (a rotation) is
 * generated fresh. Tests only: the service itself, and every
 * `service-idp start` the tests run, generate each key.
 */
import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';
import { readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGNING_ALGS, type SigningAlg } from '../../src/keys/algs.js';
import { generateSigningKeyPair, type SigningKeyGenerator } from '../../src/keys/keyring.js';

type KeyPair = { publicKey: KeyObject; privateKey: KeyObject };

const PREFIX = 'service-idp-test-signing-keys-';
const FILE = join(tmpdir(), `${PREFIX}${process.ppid}.json`);
const RUN_FILE = new RegExp(`^${PREFIX}(\\d+)\\.json$`);
let shared: Map<SigningAlg, KeyPair> | undefined;

function pairOf(jwk: JsonWebKey): KeyPair {
  const privateKey = createPrivateKey({ key: jwk, format: 'jwk' });
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** The run's pairs: read from FILE, or made and written there (whole, by rename: files running beside this one read all of it or none). */
function sharedPairs(): Map<SigningAlg, KeyPair> {
  if (shared) return shared;
  try {
    const jwks = JSON.parse(readFileSync(FILE, 'utf8')) as Record<SigningAlg, JsonWebKey>;
    shared = new Map(SIGNING_ALGS.map((alg) => [alg, pairOf(jwks[alg])]));
  } catch {
    shared = new Map(SIGNING_ALGS.map((alg) => [alg, generateSigningKeyPair(alg)]));
    const jwks = Object.fromEntries([...shared].map(([alg, pair]) => [alg, pair.privateKey.export({ format: 'jwk' })]));
    const partial = `${FILE}.${process.pid}`;
    writeFileSync(partial, JSON.stringify(jwks), { mode: 0o600 });
    renameSync(partial, FILE);
    removeEndedRuns();
  }
  return shared;
}

/** Deletes the files of earlier runs whose `node --test` process has ended. */
function removeEndedRuns(): void {
  for (const name of readdirSync(tmpdir())) {
    const pid = Number(RUN_FILE.exec(name)?.[1]);
    if (!pid || pid === process.ppid) continue;
    try {
      process.kill(pid, 0);
    } catch (error) {
      // ESRCH: no such process (EPERM: alive, someone else's).
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') rmSync(join(tmpdir(), name), { force: true });
    }
  }
}

/** For one service: the run's pair for the first key of each algorithm, a fresh one after. */
export function testSigningKeys(): SigningKeyGenerator {
  const handedOut = new Set<SigningAlg>();
  return (alg) => {
    if (handedOut.has(alg)) return generateSigningKeyPair(alg);
    handedOut.add(alg);
    return sharedPairs().get(alg) as KeyPair;
  };
}
