/**
 * The CLI as an operator uses it: the built `service-idp` binary against a data folder,
 * including while a service runs on the same folder.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { ID_TOKEN_TTL_SECONDS, KEY_CACHE_SECONDS } from '../src/defaults.js';
import { loadConfig, type RunningService, startService } from '../src/index.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));

function run(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env } }, (error, stdout, stderr) => {
      resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr });
    });
  });
}

describe('service-idp CLI', () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('documents every command in --help', async () => {
    const { code, stdout } = await run(['--help']);
    assert.equal(code, 0);
    for (const command of [
      'start',
      'clients create',
      'clients update',
      'clients list',
      'keys rotate',
      'mail',
      'sms',
      'SERVICE_IDP_DATA',
      'SMTP_URL',
      'SMS_TRANSPORT',
    ])
      assert.match(stdout, new RegExp(command));
  });

  it('creates a client and prints exactly one JSON object with its three keys', async () => {
    const { code, stdout } = await run([
      'clients',
      'create',
      '--data',
      data,
      '--name',
      'Shop',
      '--origin',
      'https://shop.example',
      '--origin',
      'http://localhost:3000',
      '--json',
    ]);
    assert.equal(code, 0);
    const keys = JSON.parse(stdout);
    assert.deepEqual(Object.keys(keys).sort(), ['clientId', 'publishableKey', 'secretKey']);
    assert.match(keys.publishableKey, /^pk_/);
    assert.match(keys.secretKey, /^sk_/);
    const list = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout);
    assert.equal(list.length, 1);
    assert.deepEqual(list[0].origins, ['https://shop.example', 'http://localhost:3000']);
    assert.doesNotMatch(JSON.stringify(list), /sk_|pk_/, 'keys are never shown again');
    assert.equal(statSync(join(data, 'server-secret')).mode & 0o777, 0o600);
  });

  it("sets a client's MFA policy, and refuses an unknown policy or client", async () => {
    const [client] = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout);
    assert.equal(client.mfaPolicy, 'optional');
    assert.equal((await run(['clients', 'update', client.id, '--mfa-policy', 'required', '--data', data])).code, 0);
    assert.equal(JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout)[0].mfaPolicy, 'required');
    assert.match((await run(['clients', 'update', client.id, '--mfa-policy', 'sometimes', '--data', data])).stderr, /optional or required/);
    assert.match((await run(['clients', 'update', 'cli_nope', '--mfa-policy', 'optional', '--data', data])).stderr, /no client/);
    assert.equal((await run(['clients', 'update', client.id, '--mfa-policy', 'optional', '--data', data])).code, 0);
  });

  it('lists the development SMS outbox', async () => {
    const { code, stdout } = await run(['sms', '--data', data, '--json']);
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), []);
  });

  it('reads the data folder from SERVICE_IDP_DATA too', async () => {
    const list = JSON.parse((await run(['clients', 'list', '--json'], { SERVICE_IDP_DATA: data })).stdout);
    assert.equal(list.length, 1);
  });

  it('refuses bad input with a clear message and a non-zero exit', async () => {
    const noOrigin = await run(['clients', 'create', '--data', data, '--name', 'X']);
    assert.notEqual(noOrigin.code, 0);
    assert.match(noOrigin.stderr, /origin/);
    const badOrigin = await run(['clients', 'create', '--data', data, '--name', 'X', '--origin', 'https://x.example/path']);
    assert.match(badOrigin.stderr, /no path/);
    assert.notEqual((await run(['frobnicate', '--data', data])).code, 0);
  });

  it('refuses test mode and the development mailbox in production', async () => {
    const testMode = await run(['start', '--data', data, '--port', '0', '--test-mode'], {
      NODE_ENV: 'production',
      SMTP_URL: 'smtp://127.0.0.1:1',
    });
    assert.notEqual(testMode.code, 0);
    assert.match(testMode.stderr, /test-mode is refused/);
    const noSmtp = await run(['start', '--data', data, '--port', '0', '--issuer', 'https://id.example'], { NODE_ENV: 'production' });
    assert.notEqual(noSmtp.code, 0);
    assert.match(noSmtp.stderr, /SMTP_URL is required/);
  });

  describe('keys rotate while the service runs', () => {
    let service: RunningService;
    let clock = Date.now();
    before(async () => {
      service = await startService(loadConfig({ port: '0', data, 'test-mode': true }, {}), { now: () => clock });
    });
    after(() => service.close());

    const jwks = async () => (await fetch(`${service.url}/.well-known/jwks.json`)).json() as Promise<{ keys: Array<{ kid: string }> }>;
    const mintIdToken = async () => {
      const keys = await service.ctx.clients.create({ name: 'Rotate', origins: ['http://rotate.test'] });
      const headers = { 'content-type': 'application/json', origin: 'http://rotate.test', 'x-service-key': keys.publishableKey };
      const email = `rotate.${clock}@example.com`;
      const post = async (path: string, body: unknown) =>
        (await fetch(service.url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json();
      const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
      await post('/v1/email-otp/verify', { userid: email, deviceToken: a.deviceToken, otp: a.code });
      const d = await post('/v1/devices', { userid: email, deviceToken: a.deviceToken });
      const t = await fetch(`${service.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          code: d.code,
          client_id: keys.clientId,
          client_secret: keys.secretKey,
        }),
      });
      return (await t.json()).id_token as string;
    };
    const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString()).kid as string;

    it('publishes old and new keys, signs with the new one within the cache bound, and drops the old one after its tokens expire', async () => {
      const before = await jwks();
      assert.equal(before.keys.length, 1);
      const oldToken = await mintIdToken();
      assert.equal(kidOf(oldToken), before.keys[0]?.kid);

      const rotated = await run(['keys', 'rotate', '--data', data]);
      assert.equal(rotated.code, 0, rotated.stderr);

      clock += KEY_CACHE_SECONDS * 1000; // the documented bound for a running node to notice
      const during = await jwks();
      assert.equal(during.keys.length, 2);
      const newToken = await mintIdToken();
      assert.notEqual(kidOf(newToken), kidOf(oldToken));
      const keySet = createLocalJWKSet(during as never);
      for (const token of [oldToken, newToken]) await jwtVerify(token, keySet, { currentDate: new Date(clock) });

      clock += (ID_TOKEN_TTL_SECONDS + KEY_CACHE_SECONDS) * 1000;
      const afterwards = await jwks();
      assert.deepEqual(
        afterwards.keys.map((k) => k.kid),
        [kidOf(newToken)],
      );
    });

    it('lists the development mailbox newest first', async () => {
      const { stdout } = await run(['mail', '--data', data, '--json']);
      const messages = JSON.parse(stdout) as Array<{ to: string; createdAt: number; subject: string }>;
      assert.ok(messages.length >= 2);
      assert.ok(messages[0]!.createdAt >= messages[1]!.createdAt);
      assert.match(messages[0]!.subject, /sign-in code/);
    });
  });
});
