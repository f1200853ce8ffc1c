/**
 * The CLI as an operator uses it: command lines against a data folder, including while a
 * service runs on the same folder; `start` and a few others through the built `service-idp`.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { ID_TOKEN_TTL_SECONDS, KEY_CACHE_SECONDS } from '../../src/defaults.js';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { runBuiltCli, runCli, SQLITE_SUITE_ONLY, testModeIdToken } from '../support/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const OPERATIONS = readFileSync(new URL('../../../../docs/operations.md', import.meta.url), 'utf8');

// Most cases run the command line in-process (runCli); the ones through runBuiltCli and the
// `start` children run the shipped bin: its help, exit status, environment and signals.
const run = runCli;

describe('service-idp CLI', SQLITE_SUITE_ONLY, () => {
  let data: string;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('documents every command in --help', async () => {
    const { code, stdout } = await runBuiltCli(['--help']);
    assert.equal(code, 0);
    for (const command of [
      'start',
      'clients create',
      'clients update',
      'clients list',
      'keys rotate',
      'users list',
      'users export',
      'devices revoke',
      'events',
      'admin-keys create',
      'admin-keys revoke',
      'mail',
      'sms',
      'SERVICE_IDP_DATA',
      'SERVICE_IDP_EVENT_RETENTION_DAYS',
      'SMTP_URL',
      'SMS_TRANSPORT',
    ])
      assert.match(stdout, new RegExp(command));
  });

  it('aligns every environment variable of --help with its description', async () => {
    const { stdout } = await run(['--help']);
    const environment = stdout.slice(stdout.indexOf('Environment:')).split('\n').slice(1);
    const lines = environment.filter((line) => /^ {2}[A-Z_]+ +\S/.test(line));
    assert.ok(lines.length >= 15, 'the environment table is listed');
    const columns = new Set(lines.map((line) => /^ {2}[A-Z_]+ +/.exec(line)?.[0].length));
    assert.equal(columns.size, 1, `descriptions start in one column: ${[...columns].join(', ')}`);
  });

  it('refuses a bad command line with one line naming the problem, a pointer to --help and exit status 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['clients', 'list', '--frobnicate'], /unknown option --frobnicate/],
      [['mail', '--limit'], /--limit needs a value/],
      [['mail', '--json=yes'], /--json takes no value/],
      [['mail', '--limit', 'abc'], /--limit must be a whole number from 1 to 1000, not "abc"/],
      [['mail', '--limit', '0'], /--limit must be a whole number from 1 to 1000, not "0"/],
      [['mail', '--limit', '-3'], /--limit must be a whole number from 1 to 1000, not "-3"/],
      [['mail', '--limit', '1.5'], /--limit must be a whole number from 1 to 1000, not "1.5"/],
      [['start', '--port', '70000'], /invalid port 70000/],
      [['start', '--port', '0', '--issuer', 'ftp://id.example'], /issuer must be an http\(s\) URL/],
      [['frobnicate'], /unknown command "frobnicate"/],
      [['clients', 'frobnicate'], /unknown command "clients frobnicate"/],
    ];
    for (const [args, expected] of cases) {
      const { code, stdout, stderr } = await run([...args, '--data', data]);
      assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
      assert.equal(stdout, '', args.join(' '));
      assert.match(stderr, expected);
      assert.match(stderr, /^service-idp: .*See service-idp --help\.\n$/, `one line: ${stderr}`);
      assert.doesNotMatch(stderr, /\bat \S+:\d+|ERR_PARSE_ARGS|node:internal/);
    }
    // The bin's own exit status and stderr, for one of them.
    const bin = await runBuiltCli(['clients', 'list', '--frobnicate', '--data', data]);
    assert.equal(bin.code, 2, bin.stderr);
    assert.equal(bin.stdout, '');
    assert.equal(bin.stderr, 'service-idp: unknown option --frobnicate. See service-idp --help.\n');
  });

  it('says that a port is in use instead of printing a stack', async () => {
    const blocker = createServer().listen(0, '127.0.0.1');
    await once(blocker, 'listening');
    const port = (blocker.address() as { port: number }).port;
    try {
      const { code, stderr } = await run(['start', '--data', data, '--port', String(port)]);
      assert.equal(code, 2);
      assert.match(stderr, new RegExp(`^service-idp: port ${port} on 127\\.0\\.0\\.1 is in use.*--help\\.\\n$`));
    } finally {
      blocker.close();
    }
  });

  it('prints one line per request, readable when asked; with SERVICE_IDP_LOG_FORMAT=json every stdout line is JSON, the banner too', async () => {
    for (const format of ['pretty', 'json']) {
      const child = spawn(process.execPath, [CLI, 'start', '--data', data, '--port', '0'], {
        env: { PATH: process.env.PATH ?? '', SERVICE_IDP_LOG_FORMAT: format },
      });
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
      });
      const issuer = /issuer"?: *"?([^\s"]+)/;
      while (!issuer.test(stdout)) await once(child.stdout, 'data');
      const url = issuer.exec(stdout)?.[1];
      assert.equal((await fetch(`${url}/healthz?probe=1`)).status, 200);
      while (!/healthz/.test(stdout)) await once(child.stdout, 'data');
      child.kill('SIGTERM');
      await once(child, 'exit');
      const requestLines = stdout.split('\n').filter((l) => l.includes('healthz'));
      assert.equal(requestLines.length, 1, `one line per request:\n${stdout}`);
      const logs = OPERATIONS.slice(OPERATIONS.indexOf('\n## Logs\n'), OPERATIONS.indexOf('\n## Housekeeping\n'));
      assert.match(logs, /^One line per request at `info`/m, 'docs/operations.md says so too');
      const [line = ''] = requestLines;
      if (format === 'pretty') {
        assert.match(line, /^\[\d\d:\d\d:\d\d\] INFO: GET \/healthz 200 [\d.]+ ms$/);
        assert.match(stdout, /service-idp stopped \(SIGTERM\)\./);
        assert.match(stdout, /SMS goes to: +development SMS outbox \(service-idp sms\)\n/, 'no /dev/sms unless served');
        assert.doesNotMatch(stdout, /dev inbox|\/dev\/mail/, 'the dev mailbox is not shown when not served');
      } else {
        const lines = stdout.trimEnd().split('\n');
        const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.deepEqual((({ method, path, statusCode }) => ({ method, path, statusCode }))(JSON.parse(line)), {
          method: 'GET',
          path: '/healthz',
          statusCode: 200,
        });
        const banner = parsed.find((l) => l.msg === 'service-idp listening');
        assert.deepEqual(Object.keys(banner ?? {}).sort(), [
          'data',
          'database',
          'discovery',
          'issuer',
          'level',
          'mail',
          'msg',
          'sms',
          'time',
        ]);
        assert.equal(parsed.at(-1)?.msg, 'service-idp stopped (SIGTERM).');
      }
      assert.doesNotMatch(line, /probe/, 'the query string is not logged');
    }
  });

  it('with SERVICE_IDP_LOG_FORMAT=json the test-mode warning (and every other warning) is a JSON line too', async () => {
    const child = spawn(process.execPath, [CLI, 'start', '--data', data, '--port', '0', '--test-mode', '--host', '0.0.0.0'], {
      env: { PATH: process.env.PATH ?? '', SERVICE_IDP_LOG_FORMAT: 'json' },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    while (!/service-idp listening/.test(stdout)) await once(child.stdout, 'data');
    child.kill('SIGTERM');
    await once(child, 'exit');
    const lines = stderr.split('\n').filter((line) => line !== '');
    const parsed = lines.map((line) => JSON.parse(line) as { level: number; time: number; msg: string });
    assert.ok(
      parsed.some((l) => l.level === 40 && /^TEST MODE: one-time codes are returned in API responses/.test(l.msg)),
      stderr,
    );
    assert.ok(
      parsed.some((l) => l.level === 40 && /^warning: .*0\.0\.0\.0/.test(l.msg)),
      `the issuer warning too: ${stderr}`,
    );
    for (const line of parsed) assert.equal(typeof line.time, 'number');
  });

  it('names /dev/mail and /dev/sms in the banner when the dev inbox serves them', async () => {
    const child = spawn(process.execPath, [CLI, 'start', '--data', data, '--port', '0', '--dev-inbox'], {
      env: { PATH: process.env.PATH ?? '', SERVICE_IDP_LOG_FORMAT: 'json' },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    while (!/service-idp listening/.test(stdout)) await once(child.stdout, 'data');
    child.kill('SIGTERM');
    await once(child, 'exit');
    const banner = JSON.parse(stdout.split('\n').find((l) => l.includes('service-idp listening')) ?? '{}');
    assert.equal(banner.devInbox, `${banner.issuer}/dev/mail`);
    assert.equal(banner.mail, `development mailbox (service-idp mail, ${banner.issuer}/dev/mail)`);
    assert.equal(banner.sms, `development SMS outbox (service-idp sms, ${banner.issuer}/dev/sms)`);
  });

  it('creates a client and prints exactly one JSON object with its three keys', async () => {
    const { code, stdout } = await runBuiltCli([
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
    const list = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients;
    assert.equal(list.length, 1);
    assert.deepEqual(list[0].origins, ['https://shop.example', 'http://localhost:3000']);
    assert.doesNotMatch(JSON.stringify(list), /sk_|pk_/, 'keys are never shown again');
    assert.equal(statSync(join(data, 'server-secret')).mode & 0o777, 0o600);
  });

  it("sets a client's MFA policy, and refuses an unknown policy or client", async () => {
    const [client] = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients;
    assert.equal(client.mfaPolicy, 'optional');
    assert.equal((await run(['clients', 'update', client.id, '--mfa-policy', 'required', '--data', data])).code, 0);
    assert.equal(JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients[0].mfaPolicy, 'required');
    assert.match((await run(['clients', 'update', client.id, '--mfa-policy', 'sometimes', '--data', data])).stderr, /optional or required/);
    assert.match((await run(['clients', 'update', 'cli_nope', '--mfa-policy', 'optional', '--data', data])).stderr, /no client/);
    assert.equal((await run(['clients', 'update', client.id, '--mfa-policy', 'optional', '--data', data])).code, 0);
  });

  it("sets a client's SMS countries and mail domains (`--sms-countries`, `--mail-domains`), refusing a bad value with no change", async () => {
    const [client] = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients;
    assert.deepEqual(client.sendRules, { smsCountries: null, mailDomains: null });
    const set = await run(['clients', 'update', client.id, '--sms-countries', 'us,gb', '--mail-domains', 'Example.com', '--data', data]);
    assert.equal(set.code, 0, set.stderr);
    const rules = async () => JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients[0].sendRules;
    assert.deepEqual(await rules(), { smsCountries: ['GB', 'US'], mailDomains: ['example.com'] });
    const bad = await run(['clients', 'update', client.id, '--sms-countries', 'US,XX', '--data', data]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /XX is not an ISO 3166 country code/);
    assert.deepEqual(await rules(), { smsCountries: ['GB', 'US'], mailDomains: ['example.com'] }, 'a refused value changes nothing');
    assert.equal((await run(['clients', 'update', client.id, '--sms-countries', 'none', '--data', data])).code, 0);
    assert.deepEqual((await rules()).smsCountries, []);
    assert.equal(
      (await run(['clients', 'update', client.id, '--sms-countries', 'default', '--mail-domains', 'any', '--data', data])).code,
      0,
    );
    assert.deepEqual(await rules(), { smsCountries: null, mailDomains: null });
  });

  it("requires DPoP of a client's token requests (`--dpop required`), and refuses another value", async () => {
    const [client] = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients;
    assert.equal(client.dpopBoundAccessTokens, false);
    const set = await run(['clients', 'update', client.id, '--dpop', 'required', '--data', data]);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /DPoP required/);
    assert.equal(JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients[0].dpopBoundAccessTokens, true);
    assert.match((await run(['clients', 'update', client.id, '--dpop', 'sometimes', '--data', data])).stderr, /required or optional/);
    assert.equal((await run(['clients', 'update', client.id, '--dpop', 'optional', '--data', data])).code, 0);
  });

  it('lists the development SMS outbox', async () => {
    const { code, stdout } = await run(['sms', '--data', data, '--json']);
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), []);
  });

  it('reads the data folder from SERVICE_IDP_DATA too', async () => {
    const list = JSON.parse((await runBuiltCli(['clients', 'list', '--json'], { SERVICE_IDP_DATA: data })).stdout).clients;
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
    // Set when the service starts, not when the file loads: the CLI's rotation stamps real
    // time, and the earlier tests of this file can take longer than the 30 s margin under load.
    let clock = 0;
    before(async () => {
      clock = Date.now();
      service = await startService(loadConfig({ port: '0', data, 'test-mode': true, 'dev-inbox': true }, {}), { now: () => clock });
    });
    after(() => service.close());

    // One current key per algorithm (RS256, ES256, EdDSA); these clients use RS256.
    const jwks = async () =>
      (await fetch(`${service.url}/.well-known/jwks.json`)).json() as Promise<{ keys: Array<{ kid: string; alg: string }> }>;
    const rs256 = (set: { keys: Array<{ kid: string; alg: string }> }) => set.keys.filter((k) => k.alg === 'RS256');
    const mintIdToken = async () => {
      const keys = await service.ctx.clients.create({ name: 'Rotate', origins: ['http://rotate.test'] });
      return testModeIdToken(service.url, keys, 'http://rotate.test', `rotate.${clock}@example.com`);
    };
    const kidOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0] as string, 'base64url').toString()).kid as string;

    it('publishes old and new keys, signs with the new one within the cache bound, and drops the old one after its tokens expire', async () => {
      const before = await jwks();
      assert.equal(before.keys.length, 3);
      assert.equal(rs256(before).length, 1);
      const oldToken = await mintIdToken();
      assert.equal(kidOf(oldToken), rs256(before)[0]?.kid);

      const rotated = await run(['keys', 'rotate', '--data', data]);
      assert.equal(rotated.code, 0, rotated.stderr);

      // The rotation is stamped with the CLI's real clock: catch up with it (the file's earlier
      // tests take real time), then move by the documented bound for a running node to notice.
      clock = Math.max(clock, Date.now()) + KEY_CACHE_SECONDS * 1000;
      const during = await jwks();
      assert.equal(during.keys.length, 6);
      assert.equal(rs256(during).length, 2);
      const newToken = await mintIdToken();
      assert.notEqual(kidOf(newToken), kidOf(oldToken));
      const keySet = createLocalJWKSet(during as never);
      for (const token of [oldToken, newToken]) await jwtVerify(token, keySet, { currentDate: new Date(clock) });

      clock += (ID_TOKEN_TTL_SECONDS + KEY_CACHE_SECONDS) * 1000;
      const afterwards = await jwks();
      assert.equal(afterwards.keys.length, 3);
      assert.deepEqual(
        rs256(afterwards).map((k) => k.kid),
        [kidOf(newToken)],
      );
    });

    it('prints as SERVICE_BASE_URL the URL the running service serves, and asks for --issuer when it cannot know', async () => {
      const keys = await service.ctx.clients.create({ name: 'Delegating', origins: ['http://delegating.test'] });
      const printed = await run(['clients', 'delegation-keys', keys.clientId, '--data', data, '--json']);
      assert.equal(printed.code, 0, printed.stderr);
      assert.equal(JSON.parse(printed.stdout).SERVICE_BASE_URL, service.url);
      assert.notEqual(service.url, 'http://127.0.0.1:8080', 'not the default port');
      const explicit = await run([
        'clients',
        'delegation-keys',
        keys.clientId,
        '--data',
        data,
        '--json',
        '--issuer',
        'https://id.example/',
      ]);
      assert.equal(JSON.parse(explicit.stdout).SERVICE_BASE_URL, 'https://id.example');

      const fresh = mkdtempSync(join(tmpdir(), 'service-idp-cli-fresh-'));
      try {
        const unknown = await run(['clients', 'delegation-keys', keys.clientId, '--data', fresh, '--json']);
        assert.equal(unknown.code, 2);
        assert.match(unknown.stderr, /cannot tell which URL the service serves.*--issuer/);
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    });

    it('deletes a client: its keys stop working at once, the list shows it gone, an unknown id is refused', async () => {
      const created = JSON.parse(
        (await run(['clients', 'create', '--data', data, '--name', 'Short-lived', '--origin', 'http://short.test', '--json'])).stdout,
      );
      const headers = { 'content-type': 'application/json', origin: 'http://short.test', 'x-service-key': created.publishableKey };
      const signIn = () =>
        fetch(`${service.url}/v1/authenticate`, {
          method: 'POST',
          headers,
          body: JSON.stringify({ userid: 'short@example.com', cryptoVersion: 'v1' }),
        });
      assert.equal((await signIn()).status, 200);
      const table = (await run(['clients', 'list', '--data', data])).stdout.split('\n');
      assert.match(table[0] ?? '', /^CLIENT ID +NAME +TYPE +MFA +ORIGINS +REDIRECT URIS +POST-LOGOUT URIS$/);
      assert.ok(table.some((line) => line.startsWith(created.clientId) && line.includes('Short-lived')));

      const deleted = await run(['clients', 'delete', created.clientId, '--data', data]);
      assert.equal(deleted.code, 0, deleted.stderr);
      assert.equal((await signIn()).status, 401);
      const listed = JSON.parse((await run(['clients', 'list', '--data', data, '--json'])).stdout).clients as Array<{ id: string }>;
      assert.ok(!listed.some((c) => c.id === created.clientId));
      const again = await run(['clients', 'delete', created.clientId, '--data', data]);
      assert.equal(again.code, 1);
      assert.equal(again.stderr, `service-idp: no client ${created.clientId}\n`);
    });

    it('answers the same mail with the same shape from `mail --json` and /dev/mail', async () => {
      const cli = JSON.parse((await run(['mail', '--data', data, '--json', '--limit', '50'])).stdout);
      const http = await (await fetch(`${service.url}/dev/mail`, { headers: { accept: 'application/json' } })).json();
      assert.ok(cli.length > 0);
      assert.deepEqual(http, cli);
      const sms = await (await fetch(`${service.url}/dev/sms`)).json();
      assert.deepEqual(sms, JSON.parse((await run(['sms', '--data', data, '--json', '--limit', '50'])).stdout));
    });

    it('lists the development mailbox newest first', async () => {
      const { stdout } = await run(['mail', '--data', data, '--json']);
      const messages = JSON.parse(stdout) as Array<{ to: string; createdAt: number; subject: string }>;
      assert.ok(messages.length >= 2);
      assert.ok(messages[0]!.createdAt >= messages[1]!.createdAt);
      assert.match(messages[0]!.subject, /sign-in code/);
    });

    /** A new user of a new client `label`, enrolled in email MFA over the wire (test mode): the /v1/devices answer. */
    async function enrolledByEmail(label: string): Promise<{ email: string; enrolled: { status: string; recoveryCodes: string[] } }> {
      const keys = await service.ctx.clients.create({ name: label, origins: [`http://${label}.test`] });
      const headers = { 'content-type': 'application/json', origin: `http://${label}.test`, 'x-service-key': keys.publishableKey };
      const post = async (path: string, body: unknown) =>
        (await fetch(service.url + path, { method: 'POST', headers, body: JSON.stringify(body) })).json();
      const email = `${label}.${clock}@example.com`;
      const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
      await post('/v1/email-otp/verify', { userid: email, deviceToken: a.deviceToken, otp: a.code });
      return { email, enrolled: await post('/v1/devices', { userid: email, deviceToken: a.deviceToken, mfaMethod: 'email' }) };
    }

    it('users reset-mfa: the operator recovery removes a lost factor, tells the user by mail, and nothing else can', async () => {
      const { email, enrolled } = await enrolledByEmail('reset');
      assert.equal(enrolled.status, 'SUCCESS');
      const user = await service.ctx.enabledUsers.findByEmail(email);
      assert.equal((await service.ctx.mfa.methodOf(user?.id as string))?.method, 'email');

      const reset = await run(['users', 'reset-mfa', email.toUpperCase(), '--data', data]);
      assert.equal(reset.code, 0, reset.stderr);
      assert.match(reset.stdout, new RegExp(`MFA \\(email\\) removed for ${email.replace(/\./g, '\\.')}; the user was told by mail`));
      assert.equal(await service.ctx.mfa.methodOf(user?.id as string), undefined);
      const notices = (await service.ctx.mailbox.list(10, email)).filter((m) => /Two-step verification was turned off/.test(m.subject));
      assert.equal(notices.length, 1, 'the user was told');
      const [recorded] = (await service.ctx.events.list({ userId: user?.id as string, type: 'mfa.reset', limit: 5 })).events;
      assert.deepEqual([recorded?.actor, recorded?.detail], ['cli', { method: 'email' }]);
      assert.match((await run(['users', 'reset-mfa', email, '--data', data])).stdout, /has no MFA method: nothing changed/);
      const bad = await run(['users', 'reset-mfa', 'a@b.com,c@d.com', '--data', data]);
      assert.equal(bad.code, 2);
      assert.match(bad.stderr, /usage: service-idp users reset-mfa EMAIL/);
    });

    it('users recovery-codes: prints a new set once for a user with MFA, and refuses a user without', async () => {
      const { email, enrolled } = await enrolledByEmail('codes');
      assert.equal(enrolled.recoveryCodes.length, 10);

      const issued = await run(['users', 'recovery-codes', email, '--data', data]);
      assert.equal(issued.code, 0, issued.stderr);
      const printed = issued.stdout.match(/^[0-9A-HJKMNP-TV-Z]{5}-[0-9A-HJKMNP-TV-Z]{5}$/gm) ?? [];
      assert.equal(printed.length, 10);
      assert.ok(printed.every((code) => !enrolled.recoveryCodes.includes(code)));
      const shown = await run(['users', 'show', email, '--data', data]);
      assert.match(shown.stdout, /recovery: 10 of 10 codes unused/);

      await run(['users', 'reset-mfa', email, '--data', data]);
      const refused = await run(['users', 'recovery-codes', email, '--data', data]);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /no second factor/);
    });
  });
});
