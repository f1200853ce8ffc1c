/**
 * The login floor (issue 40): the least a secure trusted-device login can do on our stack, so
 * the service's login is measured against it rather than against a route that does nothing.
 * A Fastify 5 server with the service's two login routes and their wire shapes (so the same
 * load generator drives both, bench/flows.ts's trustedLogin):
 *
 *   POST /v1/device-challenges  one nonce, HMAC-signed with its expiry (no storage)
 *   POST /v1/authenticate       parse the compact ES256 JWS, check the nonce's HMAC and expiry,
 *                               verify the signature with node:crypto (libuv's thread pool:
 *                               four threads, at least the machine's two cores) against the
 *                               device's key (read from SQLite once, then held in memory), then
 *                               one better-sqlite3 WAL transaction with two inserts: the spent
 *                               challenge (its primary key refuses a replay) and the code.
 *
 * SQLite as the service opens it (WAL, synchronous NORMAL) and checkpointed by a worker thread,
 * as the service's storage/database.ts does. What the service does beyond this (the event row,
 * the device's last use, MFA and revocation checks, hooks, logs, metrics) is its cost over the
 * floor.
 */
import { createHmac, createPublicKey, type JsonWebKey, type KeyObject, randomBytes, timingSafeEqual, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import SQLite from 'better-sqlite3';
import Fastify from 'fastify';
import { type DevicePublicJwk, Paths } from 'service-protocol';
import { serveRequests } from './child.js';

const CHALLENGE_TTL_MS = 60_000;
const CHECKPOINT_INTERVAL_MS = 1_000;
const dir = mkdtempSync(join(tmpdir(), 'login-floor-'));
const path = join(dir, 'floor.db');
const db = new SQLite(path);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
db.exec(`
  CREATE TABLE devices (id TEXT PRIMARY KEY, email TEXT NOT NULL, jwk TEXT NOT NULL);
  CREATE TABLE spent_challenges (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL);
  CREATE TABLE auth_codes (code TEXT PRIMARY KEY, device_id TEXT NOT NULL, expires_at INTEGER NOT NULL);
`);
const checkpointer = new Worker(
  `const { workerData } = require('node:worker_threads');
   const db = new (require(workerData.module))(workerData.path, { fileMustExist: true });
   setInterval(() => { try { db.pragma('wal_checkpoint(PASSIVE)'); } catch {} }, workerData.intervalMs);`,
  {
    eval: true,
    workerData: { module: createRequire(import.meta.url).resolve('better-sqlite3'), path, intervalMs: CHECKPOINT_INTERVAL_MS },
  },
);
checkpointer.unref();

const insertDevice = db.prepare('INSERT INTO devices (id, email, jwk) VALUES (?, ?, ?)');
const selectDevice = db.prepare<[string], { email: string; jwk: string }>('SELECT email, jwk FROM devices WHERE id = ?');
const spend = db.prepare('INSERT INTO spent_challenges (nonce, expires_at) VALUES (?, ?)');
const insertCode = db.prepare('INSERT INTO auth_codes (code, device_id, expires_at) VALUES (?, ?, ?)');
const finish = db.transaction((nonce: string, expiresAt: number, code: string, deviceId: string) => {
  spend.run(nonce, expiresAt);
  insertCode.run(code, deviceId, Date.now() + 60_000);
});

const secret = randomBytes(32);
const mac = (body: string) => createHmac('sha256', secret).update(body).digest('base64url');
const keys = new Map<string, { email: string; key: KeyObject }>();
function deviceKey(id: string) {
  let known = keys.get(id);
  if (!known) {
    const row = selectDevice.get(id);
    if (!row) return undefined;
    known = { email: row.email, key: createPublicKey({ key: JSON.parse(row.jwk) as JsonWebKey, format: 'jwk' }) };
    keys.set(id, known);
  }
  return known;
}

const app = Fastify({ logger: false });
app.post(Paths.deviceChallenge, async () => {
  const body = `${randomBytes(16).toString('base64url')}.${Date.now() + CHALLENGE_TTL_MS}`;
  return { challenge: `${body}.${mac(body)}` };
});
app.post<{ Body: { userid?: string; deviceProof?: string } }>(Paths.authenticate, async (request, reply) => {
  const refuse = () => reply.code(401).send({ status: 'FAILED' });
  const proof = request.body?.deviceProof;
  const [h, p, s] = typeof proof === 'string' ? proof.split('.') : [];
  if (!h || !p || !s) return refuse();
  const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg?: string; kid?: string };
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString()) as { sub?: string; nonce?: string };
  const [nonce, expiry, tag] = (payload.nonce ?? '').split('.');
  if (header.alg !== 'ES256' || !header.kid || !nonce || !expiry || !tag) return refuse();
  const expected = Buffer.from(mac(`${nonce}.${expiry}`));
  if (expected.length !== tag.length || !timingSafeEqual(expected, Buffer.from(tag)) || Number(expiry) < Date.now()) return refuse();
  const device = deviceKey(header.kid);
  if (!device || device.email !== payload.sub || device.email !== request.body.userid) return refuse();
  const valid = await new Promise<boolean>((resolve) =>
    verify('sha256', Buffer.from(`${h}.${p}`), { key: device.key, dsaEncoding: 'ieee-p1363' }, Buffer.from(s, 'base64url'), (error, ok) =>
      resolve(!error && ok),
    ),
  );
  if (!valid) return refuse();
  const code = `ac_${randomBytes(24).toString('base64url')}`;
  try {
    finish(nonce, Number(expiry), code, header.kid);
  } catch {
    return refuse(); // the challenge was spent already
  }
  return { status: 'SUCCESS', code };
});

await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (!address || typeof address !== 'object') throw new Error('no address');
serveRequests(
  {
    async register(message: { devices: { email: string; publicJwk: DevicePublicJwk }[] }) {
      return message.devices.map((device) => {
        const id = `dev_${randomBytes(12).toString('base64url')}`;
        insertDevice.run(id, device.email, JSON.stringify(device.publicJwk));
        return id;
      });
    },
  },
  async () => {
    await app.close();
    await checkpointer.terminate();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  },
);
process.send?.({ type: 'ready', result: { url: `http://127.0.0.1:${address.port}` } });
