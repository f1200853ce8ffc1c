/**
 * Registering machine clients (issue 37) as an operator does: `service-idp clients create
 * --machine` with its keys and `clients grant` (runCli, on a data folder; PostgreSQL through
 * --database), and the admin API's POST /clients and PUT /clients/{id}/permissions; the rules:
 * no origins or redirect URIs, public keys only, grants only on registered APIs and only for
 * machine clients, each refusal with no state change.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import { adminApi } from '../support/admin-api.js';
import { NOTES, startWithApis } from '../support/api-helpers.js';
import { openCliDatabase, runCli, type TestService } from '../support/helpers.js';

describe('machine clients: the CLI', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-machine-cli-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('clients create --machine --jwks FILE, then clients grant; the refusals exit 2 and make nothing', async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true });
    const jwksFile = join(data, 'jwks.json');
    writeFileSync(jwksFile, JSON.stringify({ keys: [await exportJWK(publicKey)] }));
    assert.equal((await cli('apis', 'create', '--identifier', NOTES, '--name', 'Notes', '--permissions', 'read:notes')).code, 0);
    const made = await cli('clients', 'create', '--name', 'Job', '--machine', '--jwks', jwksFile, '--json');
    assert.equal(made.code, 0, made.stderr);
    const { clientId } = JSON.parse(made.stdout) as { clientId: string };
    const granted = await cli('clients', 'grant', clientId, '--grant', `${NOTES}=read:notes`, '--json');
    assert.equal(granted.code, 0, granted.stderr);
    assert.deepEqual(JSON.parse(granted.stdout), { clientId, permissions: [{ api: NOTES, permission: 'read:notes' }] });

    const privateJwks = join(data, 'private.json');
    writeFileSync(privateJwks, JSON.stringify({ keys: [await exportJWK(privateKey)] }));
    const before = (await cli('clients', 'list', '--json')).stdout;
    for (const [args, why] of [
      [['--machine', '--jwks', privateJwks], 'a private key in the JWKS'],
      [['--machine', '--origin', 'https://app.example'], 'a machine client with an origin'],
      [['--machine', '--jwks-uri', 'http://keys.example.com/jwks'], 'a JWKS URI over http'],
      [['--origin', 'https://app.example', '--jwks-uri', 'https://keys.example.com/jwks'], 'keys for a web app'],
    ] as const) {
      const refused = await cli('clients', 'create', '--name', 'Bad', ...args);
      assert.equal(refused.code, 2, `${why}: ${refused.stderr}`);
    }
    assert.equal((await cli('clients', 'list', '--json')).stdout, before, 'nothing was made');
    assert.equal((await cli('clients', 'grant', clientId, '--grant', `${NOTES}=write:notes`)).code, 2, 'not a permission of Notes');
  });
});

describe('machine clients: the admin API', () => {
  let service: TestService;
  let api: ReturnType<typeof adminApi>;
  before(async () => {
    ({ service } = await startWithApis(Date.now));
    api = adminApi(service.url, (await service.ctx.adminKeys.create('ops', 'cli')).key);
  });
  after(() => service.close());

  it('POST /clients makes a machine client; PUT and GET /clients/{id}/permissions grant and read; a web app is 404', async () => {
    const made = await api('POST', '/clients', { name: 'Job', origins: [], machine: true, jwksUri: 'https://keys.example.com/jwks.json' });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const shown = await api('GET', `/clients/${made.body.clientId}`);
    assert.deepEqual([shown.body.type, shown.body.keys], ['machine', { jwks: null, jwksUri: 'https://keys.example.com/jwks.json' }]);
    const put = await api('PUT', `/clients/${made.body.clientId}/permissions`, { permissions: [{ api: NOTES, permission: 'read:notes' }] });
    assert.equal(put.status, 200, JSON.stringify(put.body));
    assert.deepEqual((await api('GET', `/clients/${made.body.clientId}/permissions`)).body.permissions, [
      { api: NOTES, permission: 'read:notes' },
    ]);
    const [event] = (await service.ctx.events.list({ type: 'client.permissions_granted', limit: 5 })).events;
    assert.equal(event?.clientId, made.body.clientId);

    const refused = await api('PUT', `/clients/${made.body.clientId}/permissions`, {
      permissions: [{ api: NOTES, permission: 'delete:all' }],
    });
    assert.equal(refused.status, 400);
    assert.equal((await api('GET', `/clients/${made.body.clientId}/permissions`)).body.permissions.length, 1, 'no state change');

    const web = await api('POST', '/clients', { name: 'Web', origins: ['https://app.example'] });
    assert.equal((await api('PUT', `/clients/${web.body.clientId}/permissions`, { permissions: [] })).status, 404);
  });
});
