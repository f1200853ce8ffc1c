/**
 * Built-in clients changed by an operator (issue 34): `PATCH /admin/v1/clients/cli_account_center`
 * with `idTokenSignedResponseAlg` answered 204 and changed the account center's client, and the
 * account center's branding and delegation keys could be set, though the docs say the service's
 * own clients answer 404 everywhere. Every path that changes (or shows) a client, at the admin
 * API, the console and the CLI, answers for them as for an unknown client, and they stay as
 * they were. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { adminApi } from '../support/admin-api.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { openCliDatabase, runCli, startTestService, type TestService } from '../support/helpers.js';
import { testSigningKeys } from '../support/signing-keys.js';

const BUILT_IN = [ACCOUNT_CLIENT_ID, CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID];

/** Every change of a client the admin API (and so the console) offers, one request each. */
const CHANGES: Array<[method: string, path: (id: string) => string, body?: unknown]> = [
  ['PATCH', (id) => `/clients/${id}`, { idTokenSignedResponseAlg: 'ES256' }],
  ['PATCH', (id) => `/clients/${id}`, { mfaPolicy: 'optional' }],
  ['PATCH', (id) => `/clients/${id}`, { passkeySatisfiesMfa: false }],
  ['PATCH', (id) => `/clients/${id}`, { dpopBoundAccessTokens: true }],
  ['PATCH', (id) => `/clients/${id}`, { origins: ['https://evil.example'] }],
  ['PATCH', (id) => `/clients/${id}`, { redirectUris: ['https://evil.example/callback'] }],
  ['PATCH', (id) => `/clients/${id}`, { postLogoutRedirectUris: ['https://evil.example/'] }],
  ['PATCH', (id) => `/clients/${id}/branding`, { displayName: 'Evil', accent: '#0a64d8' }],
  ['POST', (id) => `/clients/${id}/secret`],
  ['DELETE', (id) => `/clients/${id}`],
  ['GET', (id) => `/clients/${id}`],
  ['GET', (id) => `/clients/${id}/branding`],
];

describe('built-in clients cannot be changed by an operator', () => {
  let service: TestService;
  let adminKey: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    adminKey = (await service.ctx.adminKeys.create('ops', 'cli')).key;
  });
  after(() => service.close());

  const snapshot = async () =>
    Promise.all(
      BUILT_IN.map(async (id) => ({
        client: await service.ctx.clients.findById(id),
        brand: await service.ctx.branding.brandOf({ id, name: '' }),
      })),
    );
  const changeEvents = async () =>
    (await service.ctx.events.list({ limit: 1000 })).events.filter((e) => e.clientId !== undefined && BUILT_IN.includes(e.clientId));

  it('answers 404 at the admin API to every change of a built-in client, and changes nothing', async () => {
    const before = await snapshot();
    for (const id of BUILT_IN)
      for (const [method, path, body] of CHANGES) {
        const answer = await adminApi(service.url, adminKey)(method, path(id), body);
        assert.equal(answer.status, 404, `${method} ${path(id)} ${JSON.stringify(body ?? '')}: ${JSON.stringify(answer.body)}`);
      }
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual(await changeEvents(), []);
  });

  it("answers 404 at the console's API to an admin operator's change of a built-in client, and changes nothing", async () => {
    const admin = await operatorSession(service, 'admin');
    const before = await snapshot();
    for (const id of BUILT_IN)
      for (const [method, path, body] of CHANGES) {
        const answer = await consoleCall(service, admin, method, path(id), {}, body);
        assert.equal(answer.status, 404, `${method} ${path(id)} ${JSON.stringify(body ?? '')}: ${JSON.stringify(answer.body)}`);
      }
    assert.deepEqual(await snapshot(), before);
    assert.deepEqual(await changeEvents(), []);
  });
});

describe('built-in clients cannot be changed with the CLI', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  let service: RunningService;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-built-in-'));
    database = await openCliDatabase();
    // The service makes its built-in clients at start, on the database the CLI then opens.
    service = await startService(loadConfig({ port: '0', data }, {}), {
      ...(database.db ? { db: database.db } : {}),
      generateSigningKey: testSigningKeys(),
    });
  });
  after(async () => {
    await service.close();
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('refuses every client command on a built-in client as for an unknown one, and changes nothing', async () => {
    const before = await Promise.all(BUILT_IN.map((id) => service.ctx.clients.findById(id)));
    for (const id of BUILT_IN)
      for (const args of [
        ['clients', 'update', id, '--id-token-alg', 'ES256'],
        ['clients', 'update', id, '--mfa-policy', 'optional'],
        ['clients', 'update', id, '--passkey-mfa', 'no'],
        ['clients', 'update', id, '--dpop', 'required'],
        ['clients', 'update', id, '--post-logout-redirect-uri', 'https://evil.example/'],
        ['clients', 'update', id, '--display-name', 'Evil'],
        ['clients', 'branding', id],
        ['clients', 'delegation-keys', id, '--issuer', 'https://id.example'],
        ['clients', 'rotate-secret', id],
        ['clients', 'delete', id],
      ]) {
        const refused = await cli(...args);
        assert.equal(refused.code, 1, `${args.join(' ')}: ${refused.stdout}${refused.stderr}`);
        assert.equal(refused.stderr, `service-idp: no client ${id}\n`, args.join(' '));
      }
    assert.deepEqual(await Promise.all(BUILT_IN.map((id) => service.ctx.clients.findById(id))), before);
    const events = (await service.ctx.events.list({ limit: 1000 })).events;
    assert.deepEqual(
      events.filter((e) => e.clientId !== undefined && BUILT_IN.includes(e.clientId)),
      [],
    );
  });
});
