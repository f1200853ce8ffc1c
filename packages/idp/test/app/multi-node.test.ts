/**
 * Scale-out (issue 6): three `service-idp start` processes (the built CLI) on different
 * loopback ports share one PostgreSQL database and one server secret, as nodes behind a load
 * balancer do, with one public issuer. OTPs, codes, attempt counters, send throttles and
 * signing keys live in the database, so every node sees the same state. PostgreSQL only:
 * skipped without SERVICE_TEST_DATABASE_URL.
 *
 * The nodes trust X-Forwarded-For from 127.0.0.1 (SERVICE_IDP_TRUST_PROXY), so each sign-in
 * here can present its own client address and the per-IP send limit (SEND_PER_IP) never
 * couples the cases. When nginx is installed, one case renders docs/nginx.example.conf in
 * front of the three nodes: a full sign-in through it, and the per-IP limit keyed on the
 * client's address.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  CompactSign,
  createLocalJWKSet,
  decodeProtectedHeader,
  exportJWK,
  generateKeyPair,
  type CryptoKey as JoseKey,
  jwtVerify,
} from 'jose';
import pg from 'pg';
import { KEY_CACHE_SECONDS, OTP_MAX_ATTEMPTS, SEND_PER_IP } from '../../src/defaults.js';
import { CONTRACT_CHECK_ENV, CONTRACT_VIOLATION } from '../../src/http/contract-check.js';
import { APP_ORIGIN, adminQuery, freePort, TEST_DATABASE_URL, uniqueEmail, WITHOUT_SEND_CHALLENGE } from '../support/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
/**
 * The nodes' signing-key cache (SERVICE_IDP_KEY_CACHE_SECONDS), short so that the rotation case
 * drives the re-read instead of waiting out the default KEY_CACHE_SECONDS; the bound it checks is this one.
 */
const NODE_KEY_CACHE_SECONDS = 2;
/** An upper bound, not a wait: generous, for a machine busy with another test file (--test-concurrency=2). */
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 5_000;
const EXAMPLE_CONF = fileURLToPath(new URL('../../../../docs/nginx.example.conf', import.meta.url));
const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx'].find((path) => existsSync(path));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '' }, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

let nextAddress = 0;
/** A client address of its own (TEST-NET-2/3 style ranges), for X-Forwarded-For. */
function clientAddress(): string {
  nextAddress += 1;
  return `10.${(process.pid >> 8) & 255}.${(nextAddress >> 8) & 255}.${nextAddress & 255}`;
}

interface Node {
  name: string;
  url: string;
  process: ChildProcess;
  stderr: string[];
}

interface Keys {
  clientId: string;
  publishableKey: string;
  secretKey: string;
}

type Reply = { status: number; body: any };

async function waitReady(node: Node): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    if (node.process.exitCode !== null || node.process.signalCode !== null) {
      throw new Error(`${node.name} exited (${node.process.exitCode ?? node.process.signalCode}): ${node.stderr.join('')}`);
    }
    try {
      const response = await fetch(`${node.url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (response.status === 200) return;
      last = `HTTP ${response.status}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${node.name} not ready within ${READY_TIMEOUT_MS} ms (${last}): ${node.stderr.join('')}`);
}

/** A browser POST from a given loopback source address (fetch cannot choose it). */
function postFrom(
  base: string,
  path: string,
  body: unknown,
  publishableKey: string,
  localAddress: string,
  forwardedFor?: string,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(payload)),
      origin: APP_ORIGIN,
      'x-service-key': publishableKey,
    };
    if (forwardedFor) headers['x-forwarded-for'] = forwardedFor;
    const req = request(base + path, { method: 'POST', headers, localAddress, timeout: 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('timeout', () => req.destroy(new Error(`POST ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** SIGTERM, then SIGKILL if the process is still there after STOP_TIMEOUT_MS. */
async function stop(node: Node): Promise<void> {
  const child = node.process;
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  await exited;
  clearTimeout(timer);
}

describe('three nodes on one PostgreSQL database', { skip: !TEST_DATABASE_URL && 'needs SERVICE_TEST_DATABASE_URL' }, () => {
  const dbName = `multi_${randomBytes(6).toString('hex')}`;
  let databaseUrl: string;
  let data: string;
  let issuer: string;
  let keys: Keys;
  const nodes: Node[] = [];

  async function startNode(name: string, port: number): Promise<Node> {
    const child = spawn(
      process.execPath,
      [CLI, 'start', '--data', data, '--database', databaseUrl, '--port', String(port), '--issuer', issuer, '--test-mode'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          SERVICE_IDP_LOG_LEVEL: 'error',
          SERVICE_IDP_TRUST_PROXY: '127.0.0.1',
          SERVICE_IDP_KEY_CACHE_SECONDS: String(NODE_KEY_CACHE_SECONDS),
          // The per-IP test below sends past the send challenge's threshold to reach the hard limit.
          ...WITHOUT_SEND_CHALLENGE,
          // Every answer these nodes send is checked against the OpenAPI document too (after()).
          [CONTRACT_CHECK_ENV]: '1',
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const node: Node = { name, url: `http://127.0.0.1:${port}`, process: child, stderr: [] };
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => node.stderr.push(chunk));
    return node;
  }

  before(async () => {
    const url = new URL(TEST_DATABASE_URL as string);
    await adminQuery(`create database ${dbName}`);
    url.pathname = `/${dbName}`;
    databaseUrl = url.toString();
    data = mkdtempSync(join(tmpdir(), 'service-idp-multi-'));
    const ports = [await freePort(), await freePort(), await freePort()];
    issuer = `http://127.0.0.1:${ports[0]}`;
    // One data folder, so one server secret, shared by every node and command.
    const created = await run([
      'clients',
      'create',
      '--data',
      data,
      '--database',
      databaseUrl,
      '--name',
      'Multi',
      '--origin',
      APP_ORIGIN,
      '--json',
    ]);
    assert.equal(created.code, 0, `clients create: ${created.stderr}`);
    keys = JSON.parse(created.stdout);
    for (const [i, name] of ['A', 'B', 'C'].entries()) nodes.push(await startNode(name, ports[i] as number));
    await Promise.all(nodes.map(waitReady));
  });

  after(async () => {
    await Promise.all(nodes.map(stop));
    const violations = nodes.flatMap((node) => node.stderr.join('').split('\n')).filter((line) => line.startsWith(CONTRACT_VIOLATION));
    assert.deepEqual(violations, [], 'every answer of the nodes matches the OpenAPI document');
    rmSync(data, { recursive: true, force: true });
    if (databaseUrl) await adminQuery(`drop database if exists ${dbName} with (force)`);
  });

  const [A, B, C] = [0, 1, 2].map((i) => () => nodes[i] as Node);

  async function post(node: Node, path: string, body: unknown, ip?: string): Promise<Reply> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      origin: APP_ORIGIN,
      'x-service-key': keys.publishableKey,
    };
    if (ip) headers['x-forwarded-for'] = ip;
    const response = await fetch(node.url + path, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  }

  async function authenticate(node: Node, email: string, ip = clientAddress()) {
    const a = await post(node, '/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, ip);
    assert.equal(a.body?.status, 'OTP_NEEDED', `authenticate on ${node.name}: ${JSON.stringify(a.body)}`);
    assert.match(a.body.code, /^\d{6}$/, 'test mode returns the OTP in `code`');
    return { deviceToken: a.body.deviceToken as string, otp: a.body.code as string };
  }

  async function redeem(node: Node, code: string): Promise<Reply> {
    const response = await fetch(`${node.url}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: keys.clientId, client_secret: keys.secretKey }),
      signal: AbortSignal.timeout(15_000),
    });
    return { status: response.status, body: await response.json() };
  }

  /** authenticate on `at[0]`, verify on `at[1]`, register the device on `at[2]`: the authorization code. */
  async function newCode(at: Node[], email = uniqueEmail('multi')): Promise<string> {
    const [first, second, third] = at as [Node, Node, Node];
    const { deviceToken, otp } = await authenticate(first, email);
    const v = await post(second, '/v1/email-otp/verify', { userid: email, deviceToken, otp });
    assert.equal(v.status, 200, `verify on ${second.name}: ${JSON.stringify(v.body)}`);
    const d = await post(third, '/v1/devices', { userid: email, deviceToken });
    assert.equal(d.status, 200, `device on ${third.name}: ${JSON.stringify(d.body)}`);
    assert.equal(typeof d.body.code, 'string', `device on ${third.name} returns a code: ${JSON.stringify(d.body)}`);
    return d.body.code;
  }

  async function jwks(node: Node): Promise<{ keys: { kid: string }[] }> {
    const response = await fetch(`${node.url}/.well-known/jwks.json`, { signal: AbortSignal.timeout(5_000) });
    assert.equal(response.status, 200, `JWKS of ${node.name}`);
    return response.json();
  }

  async function verifyAt(node: Node, idToken: string) {
    return jwtVerify(idToken, createLocalJWKSet(await jwks(node)), { issuer, audience: keys.clientId });
  }

  it('accepts an OTP sent through A on B, registers on C, exchanges on A, verifies against B', async () => {
    const email = uniqueEmail('multi');
    const code = await newCode([A(), B(), C()], email);
    const token = await redeem(A(), code);
    assert.equal(token.status, 200, `token on A: ${JSON.stringify(token.body)}`);
    const { payload } = await verifyAt(B(), token.body.id_token);
    assert.equal(payload.email, email);
  });

  it(`evaluates exactly ${OTP_MAX_ATTEMPTS} of 50 parallel wrong guesses spread over the three nodes`, async () => {
    const email = uniqueEmail('guess');
    const { deviceToken, otp } = await authenticate(A(), email);
    const wrong = String((Number(otp) + 1) % 1_000_000).padStart(6, '0');
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post(nodes[i % 3] as Node, '/v1/email-otp/verify', { userid: email, deviceToken, otp: wrong })),
    );
    const codes = results.map((r) => r.body?.code);
    assert.equal(codes.filter((c) => c === 'ERR_OTP_INVALID').length, OTP_MAX_ATTEMPTS, `evaluated: ${codes.join(',')}`);
    assert.equal(codes.filter((c) => c === 'ERR_OTP_EXPIRED').length, 50 - OTP_MAX_ATTEMPTS, `refused: ${codes.join(',')}`);
    const right = await post(C(), '/v1/email-otp/verify', { userid: email, deviceToken, otp });
    assert.equal(right.body?.code, 'ERR_OTP_EXPIRED', 'the right code is refused once the attempts are spent');
  });

  it('lets exactly one of 9 parallel exchanges of one code, 3 per node, succeed', async () => {
    const code = await newCode([B(), C(), A()]);
    const results = await Promise.all(Array.from({ length: 9 }, (_, i) => redeem(nodes[i % 3] as Node, code)));
    assert.equal(results.filter((r) => r.status === 200).length, 1, `statuses: ${results.map((r) => r.status).join(',')}`);
    for (const r of results.filter((r) => r.status !== 200)) assert.equal(r.body.error, 'invalid_grant');
  });

  it('holds the per-address send limit across nodes', async () => {
    const email = uniqueEmail('throttle');
    await authenticate(A(), email);
    const again = await post(B(), '/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, clientAddress());
    assert.equal(again.status, 429, `second send on B: ${JSON.stringify(again.body)}`);
    assert.equal(again.body.code, 'ERR_RATE_LIMITED');
    const third = await post(C(), '/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, clientAddress());
    assert.equal(third.status, 429, `third send on C: ${JSON.stringify(third.body)}`);
  });

  it(`serves and signs with a rotated key on every node within the key cache lifetime (${NODE_KEY_CACHE_SECONDS} s here; default KEY_CACHE_SECONDS, ${KEY_CACHE_SECONDS} s)`, async () => {
    const signedBefore = await redeem(A(), await newCode([A(), A(), A()]));
    assert.equal(signedBefore.status, 200, JSON.stringify(signedBefore.body));
    const oldKid = decodeProtectedHeader(signedBefore.body.id_token).kid;

    const rotated = await run(['keys', 'rotate', '--data', data, '--database', databaseUrl]);
    assert.equal(rotated.code, 0, `keys rotate: ${rotated.stderr}`);
    const newKid = rotated.stdout.match(/New signing key (\S+)\./)?.[1];
    assert.ok(newKid && newKid !== oldKid, `keys rotate names a new kid: ${rotated.stdout}`);
    // Poll five times a second, up to the configured bound plus 5 s (a busy machine's slack).
    const start = Date.now();
    const deadline = start + (NODE_KEY_CACHE_SECONDS + 5) * 1000;
    const seen: Record<string, boolean> = {};
    while (Date.now() < deadline) {
      const sets = await Promise.all(nodes.map(async (n) => (await jwks(n)).keys.map((k) => k.kid)));
      for (const [i, set] of sets.entries()) seen[(nodes[i] as Node).name] = set.includes(newKid);
      if (Object.values(seen).every(Boolean)) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const elapsed = Math.round((Date.now() - start) / 1000);
    assert.deepEqual(seen, { A: true, B: true, C: true }, `every JWKS lists ${newKid} after ${elapsed} s`);

    for (const node of nodes) {
      const fresh = await redeem(node, await newCode([node, node, node]));
      assert.equal(fresh.status, 200, JSON.stringify(fresh.body));
      assert.equal(decodeProtectedHeader(fresh.body.id_token).kid, newKid, `${node.name} signs with the new key`);
      await verifyAt(node, fresh.body.id_token);
      const old = await verifyAt(node, signedBefore.body.id_token);
      assert.equal(old.protectedHeader.kid, oldKid, `${node.name} still verifies a token signed before the rotation`);
    }
  });

  it('refuses on B, at once, a device revoked through A (no node keeps trusting it)', async () => {
    const email = uniqueEmail('revoke');
    /** Registers a device whose key the test holds, through `node`. */
    const register = async (node: Node) => {
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const { kty, crv, x, y } = await exportJWK(publicKey);
      const a = await post(node, '/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true }, clientAddress());
      assert.equal(a.body?.status, 'OTP_NEEDED', JSON.stringify(a.body));
      await post(node, '/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
      const d = await post(node, '/v1/devices', { userid: email, deviceToken: a.body.deviceToken, devicePublicKey: { kty, crv, x, y } });
      assert.equal(typeof d.body?.deviceId, 'string', JSON.stringify(d.body));
      return { deviceId: d.body.deviceId as string, privateKey };
    };
    const proof = async (node: Node, device: { deviceId: string; privateKey: JoseKey }, op?: string) => {
      const { challenge } = (await post(node, '/v1/device-challenges', {})).body;
      const payload = new TextEncoder().encode(JSON.stringify({ sub: email, nonce: challenge, iat: Math.floor(Date.now() / 1000), op }));
      return new CompactSign(payload)
        .setProtectedHeader({ alg: 'ES256', typ: 'device-proof+jwt', kid: device.deviceId, cv: 'v1' })
        .sign(device.privateKey);
    };
    const login = async (node: Node, device: { deviceId: string; privateKey: JoseKey }) =>
      (
        await post(
          node,
          '/v1/authenticate',
          { userid: email, cryptoVersion: 'v1', deviceProof: await proof(node, device) },
          clientAddress(),
        )
      ).body;

    /** Every refused login sends an OTP; the per-address window (30 s) would answer 429: clear it. */
    const clearSendWindow = async () => {
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      await db.query("delete from rate_counters where key like 'send:to:%'").finally(() => db.end());
    };
    const keeper = await register(A());
    await clearSendWindow();
    const lost = await register(B());
    // B has verified and cached the lost device's key by signing in with it.
    assert.equal((await login(B(), lost)).status, 'SUCCESS');
    const revoked = await post(A(), '/v1/devices/revoke', {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await proof(A(), keeper, 'devices.revoke'),
      deviceId: lost.deviceId,
    });
    assert.equal(revoked.status, 200, JSON.stringify(revoked.body));
    // The very next login on B and on C is refused; no wait at all.
    for (const node of [B(), C()]) {
      await clearSendWindow();
      const next = await login(node, lost);
      assert.equal(next.status, 'OTP_NEEDED', `${node.name} refuses the revoked device: ${JSON.stringify(next)}`);
      assert.equal(next.deviceRefused, true);
    }
  });

  it('signs in through nginx (docs/nginx.example.conf) and throttles per client address', {
    skip: !NGINX && 'nginx not installed',
  }, async () => {
    const prefix = mkdtempSync(join(tmpdir(), 'service-idp-nginx-'));
    const port = await freePort();
    const ports = nodes.map((n) => new URL(n.url).port);
    let upstream = 0;
    const conf = readFileSync(EXAMPLE_CONF, 'utf8')
      .replace(/server 127\.0\.0\.1:808[1-9]/g, () => `server 127.0.0.1:${ports[upstream++]}`)
      .replace('listen 127.0.0.1:8080;', `listen 127.0.0.1:${port};`)
      .replace(
        'http {',
        `http {\n  access_log off;\n${['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((t) => `  ${t}_temp_path ${prefix}/${t};`).join('\n')}`,
      );
    assert.equal(upstream, 3, 'the example lists three upstream servers');
    writeFileSync(join(prefix, 'nginx.conf'), conf);
    const child = spawn(
      NGINX as string,
      ['-p', prefix, '-c', join(prefix, 'nginx.conf'), '-g', `daemon off; pid ${prefix}/nginx.pid; error_log ${prefix}/error.log;`],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const proxy: Node = { name: 'nginx', url: `http://127.0.0.1:${port}`, process: child, stderr: [] };
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => proxy.stderr.push(chunk));
    try {
      await waitReady(proxy);
      // A full sign-in, every step through nginx.
      const email = uniqueEmail('nginx');
      const token = await redeem(proxy, await newCode([proxy, proxy, proxy], email));
      assert.equal(token.status, 200, `token through nginx: ${JSON.stringify(token.body)}`);
      assert.equal((await verifyAt(proxy, token.body.id_token)).payload.email, email);

      // The per-IP send limit sees the client's address (nginx's $remote_addr, passed in
      // X-Forwarded-For), not nginx's own 127.0.0.1 and not a client-supplied header.
      const client = `127.${(process.pid >> 8) & 255}.${process.pid & 255}.${2 + (Date.now() % 200)}`;
      const other = client.replace(/\d+$/, (n) => String(Number(n) + 1));
      const send = (from: string, spoof?: string) =>
        postFrom(proxy.url, '/v1/authenticate', { userid: uniqueEmail('nginx-ip'), cryptoVersion: 'v1' }, keys.publishableKey, from, spoof);
      for (let i = 0; i < SEND_PER_IP[0].max; i++) {
        const r = await send(client);
        assert.equal(r.status, 200, `send ${i + 1} from ${client}: ${JSON.stringify(r.body)}`);
      }
      const over = await send(client, '203.0.113.9');
      assert.equal(
        over.status,
        429,
        `send ${SEND_PER_IP[0].max + 1} from ${client} (spoofed X-Forwarded-For ignored): ${JSON.stringify(over.body)}`,
      );
      const fromOther = await send(other);
      assert.equal(fromOther.status, 200, `first send from ${other}: ${JSON.stringify(fromOther.body)}`);
    } finally {
      await stop(proxy);
      rmSync(prefix, { recursive: true, force: true });
    }
  });

  it('loses no registration whose response was sent when a node is killed under load', async () => {
    const victim = A();
    const survivor = B();
    const received: string[] = [];
    let stopped = false;
    const worker = async () => {
      while (!stopped) {
        try {
          const email = uniqueEmail('kill');
          const a = await post(victim, '/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, clientAddress());
          if (a.status !== 200) continue;
          const v = await post(victim, '/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
          if (v.status !== 200) continue;
          const d = await post(victim, '/v1/devices', { userid: email, deviceToken: a.body.deviceToken });
          if (d.status === 200 && typeof d.body?.code === 'string') received.push(d.body.code);
        } catch {
          if (victim.process.exitCode !== null || victim.process.signalCode !== null) return; // connection refused: node gone
        }
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    const deadline = Date.now() + 20_000;
    while (received.length < 10 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(received.length >= 10, `only ${received.length} registrations completed before the kill`);
    const exited = new Promise((resolve) => victim.process.once('exit', resolve));
    victim.process.kill('SIGKILL');
    await exited;
    stopped = true;
    await Promise.all(workers);
    const results = await Promise.all(received.map((code) => redeem(survivor, code)));
    const failed = results.filter((r) => r.status !== 200);
    assert.equal(
      failed.length,
      0,
      `${failed.length} of ${received.length} codes sent before the kill were refused on B: ${JSON.stringify(failed[0]?.body)}`,
    );
  });
});
