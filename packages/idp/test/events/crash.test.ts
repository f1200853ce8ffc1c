/**
 * An acknowledged sign-in keeps its event when the service dies mid-load (issue 40): the
 * sign-in's `sign_in.succeeded` row is written before the answer, so making the login cheaper
 * (batching or deferring the event) must not open a window where a client holds a code whose
 * event a `kill -9` erased. The built service runs in a child process (dist/cli.js start) on a
 * SQLite file, or on a PostgreSQL schema of its own; logins run concurrently until it is killed.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CompactSign, exportJWK, generateKeyPair, type CryptoKey as JoseKey } from 'jose';
import { type Db, openSqlite } from '../../src/storage/database.js';
import { APP_ORIGIN, freePort, openCliDatabase, runBuiltCli, uniqueEmail, WITHOUT_SEND_CHALLENGE } from '../support/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const USERS = 6;
const LOGINS_BEFORE_KILL = 30;
/** Upper bounds, not waits: a machine busy with another test file is slow. */
const READY_TIMEOUT_MS = 60_000;
const LOAD_TIMEOUT_MS = 60_000;

interface User {
  email: string;
  deviceId: string;
  privateKey: JoseKey;
  ip: string;
  acknowledged: number;
}

describe('events under a crash', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  let service: ChildProcess;
  let url: string;
  let publishableKey: string;
  const stderr: string[] = [];

  const post = async (path: string, body: unknown, ip: string) => {
    const response = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: APP_ORIGIN, 'x-service-key': publishableKey, 'x-forwarded-for': ip },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  const proof = async (user: Pick<User, 'email' | 'deviceId' | 'privateKey' | 'ip'>) => {
    const { body } = await post('/v1/device-challenges', {}, user.ip);
    const payload = new TextEncoder().encode(
      JSON.stringify({ sub: user.email, nonce: body.challenge, iat: Math.floor(Date.now() / 1000) }),
    );
    return new CompactSign(payload)
      .setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid: user.deviceId, cv: 'v1' })
      .sign(user.privateKey);
  };

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-crash-'));
    database = await openCliDatabase();
    const created = await runBuiltCli([
      'clients',
      'create',
      '--data',
      data,
      ...database.args,
      '--name',
      'Crash',
      '--origin',
      APP_ORIGIN,
      '--json',
    ]);
    assert.equal(created.code, 0, created.stderr);
    publishableKey = JSON.parse(created.stdout).publishableKey;
    const port = await freePort();
    url = `http://127.0.0.1:${port}`;
    service = spawn(
      process.execPath,
      [CLI, 'start', '--data', data, ...database.args, '--port', String(port), '--issuer', url, '--test-mode'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          SERVICE_IDP_LOG_LEVEL: 'error',
          SERVICE_IDP_TRUST_PROXY: '127.0.0.1',
          ...WITHOUT_SEND_CHALLENGE,
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    service.stderr?.setEncoding('utf8').on('data', (chunk: string) => stderr.push(chunk));
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (service.exitCode !== null) throw new Error(`the service exited: ${stderr.join('')}`);
      const ready = await fetch(`${url}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      );
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`the service was not ready: ${stderr.join('')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  after(async () => {
    if (service.exitCode === null && service.signalCode === null) service.kill('SIGKILL');
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('keeps the event of every acknowledged sign-in when the service is killed (kill -9) under load', async () => {
    const users: User[] = [];
    for (let i = 0; i < USERS; i++) {
      const email = uniqueEmail('crash');
      const ip = `10.77.${process.pid & 255}.${i + 1}`;
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const { kty, crv, x, y } = await exportJWK(publicKey);
      const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true }, ip);
      assert.equal(a.body.status, 'OTP_NEEDED', JSON.stringify(a.body));
      const v = await post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code }, ip);
      assert.equal(v.status, 200, JSON.stringify(v.body));
      const d = await post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: { kty, crv, x, y } }, ip);
      assert.equal(d.status, 200, JSON.stringify(d.body));
      users.push({ email, deviceId: d.body.deviceId, privateKey, ip, acknowledged: 0 });
    }

    let total = 0;
    let killed = false;
    const loop = async (user: User) => {
      while (!killed) {
        try {
          const answer = await post(
            '/v1/authenticate',
            { userid: user.email, cryptoVersion: 'v1', deviceProof: await proof(user) },
            user.ip,
          );
          if (answer.status === 200 && answer.body.status === 'SUCCESS' && typeof answer.body.code === 'string') {
            user.acknowledged += 1;
            total += 1;
          }
        } catch {
          return; // the service is gone: this request was never acknowledged
        }
      }
    };
    const loops = users.map(loop);
    const deadline = Date.now() + LOAD_TIMEOUT_MS;
    while (total < LOGINS_BEFORE_KILL && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    assert.ok(total >= LOGINS_BEFORE_KILL, `only ${total} sign-ins were acknowledged before the kill`);
    const exited = new Promise((resolve) => service.once('exit', resolve));
    service.kill('SIGKILL');
    await exited;
    killed = true;
    await Promise.all(loops);

    const db: Db = database.db ?? openSqlite(join(data, 'service.db'), { checkpointWorker: false });
    try {
      for (const user of users) {
        const row = await db
          .selectFrom('events')
          .innerJoin('users', 'users.id', 'events.user_id')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('users.email', '=', user.email)
          .where('events.type', '=', 'sign_in.succeeded')
          .executeTakeFirstOrThrow();
        // One for the registration, one per acknowledged sign-in; a sign-in in flight at the kill may add one.
        assert.ok(
          Number(row.n) >= user.acknowledged + 1,
          `${user.email}: ${user.acknowledged} sign-ins acknowledged, ${Number(row.n) - 1} of their events survived`,
        );
      }
    } finally {
      if (!database.db) await db.destroy();
    }
  });
});
