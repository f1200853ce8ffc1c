/**
 * `service-idp connections` as an operator uses it, command lines (runCli) against a data folder:
 * create (the secret sealed at rest, never printed), list, update (the applications that show
 * it, keep-tokens), delete; the same refusals as the admin API; identities and unlink of a
 * user's linked identity (recorded as identity.unlinked).
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, SQLITE_SUITE_ONLY } from '../support/helpers.js';

describe('service-idp connections', SQLITE_SUITE_ONLY, () => {
  let data: string;
  const cli = (...args: string[]) => runCli([...args, '--data', data]);
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-connections-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('creates, lists, updates and deletes a connection; the secret is sealed and never shown', async () => {
    const made = await cli(
      'connections',
      'create',
      '--preset',
      'oidc',
      '--upstream-issuer',
      'https://id.example.com',
      '--client-id',
      'rp-1',
      '--client-secret',
      'very-secret-value',
      '--clients',
      'app_a,app_b',
      '--json',
    );
    assert.equal(made.code, 0, made.stderr);
    const connection = JSON.parse(made.stdout);
    assert.equal(connection.preset, 'oidc');
    assert.equal(connection.hasSecret, true);
    assert.deepEqual(connection.clients, ['app_a', 'app_b']);
    assert.equal(made.stdout.includes('very-secret-value'), false);

    // Sealed at rest: the database holds no copy of the secret.
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(join(data, 'service.db'), { readonly: true });
    const row = db.prepare('select client_secret_sealed from connections where id = ?').get(connection.id) as {
      client_secret_sealed: string;
    };
    db.close();
    assert.ok(row.client_secret_sealed && !row.client_secret_sealed.includes('very-secret-value'));

    const listed = await cli('connections', 'list');
    assert.match(listed.stdout, new RegExp(connection.id));
    assert.equal(listed.stdout.includes('very-secret-value'), false);

    const updated = await cli('connections', 'update', connection.id, '--clients', 'app_c', '--keep-tokens', 'on', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(JSON.parse(updated.stdout).clients, ['app_c']);
    assert.equal(JSON.parse(updated.stdout).keepTokens, true);

    assert.equal((await cli('connections', 'delete', connection.id)).code, 0);
    assert.doesNotMatch((await cli('connections', 'list')).stdout, new RegExp(connection.id));
    assert.equal((await cli('connections', 'delete', connection.id)).code, 1);
  });

  it('refuses what the admin API refuses, with the same message', async () => {
    const httpIssuer = await cli(
      'connections',
      'create',
      '--preset',
      'oidc',
      '--upstream-issuer',
      'http://id.example.com',
      '--client-id',
      'rp',
    );
    assert.equal(httpIssuer.code, 2);
    assert.match(httpIssuer.stderr, /must be https/);
    const noSecret = await cli('connections', 'create', '--preset', 'google', '--client-id', 'rp');
    assert.match(noSecret.stderr, /needs a client secret/);
    const noPreset = await cli('connections', 'create', '--client-id', 'rp');
    assert.equal(noPreset.code, 2);
  });

  it('Apple: the .p8 key from a file, with its team and key ids', async () => {
    const key = join(data, 'AuthKey.p8');
    writeFileSync(key, generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
    const made = await cli(
      'connections',
      'create',
      '--preset',
      'apple',
      '--client-id',
      'com.example.web',
      '--client-secret-file',
      key,
      '--apple-team-id',
      'TEAM123456',
      '--apple-key-id',
      'KEY1234567',
      '--json',
    );
    assert.equal(made.code, 0, made.stderr);
    assert.equal(JSON.parse(made.stdout).issuer, 'https://appleid.apple.com');
    const bad = await cli(
      'connections',
      'create',
      '--preset',
      'apple',
      '--client-id',
      'x',
      '--client-secret',
      'not-a-key',
      '--apple-team-id',
      'T',
      '--apple-key-id',
      'K',
    );
    assert.match(bad.stderr, /PEM private key/);
  });

  it('lists and unlinks a linked identity; identities of nobody are empty', async () => {
    const none = await cli('connections', 'identities', '--user', 'usr_nobody');
    assert.match(none.stdout, /No linked identities/);
    const noneJson = await cli('connections', 'identities', '--user', 'usr_nobody', '--json');
    assert.deepEqual(JSON.parse(noneJson.stdout), { identities: [] }, "GET /admin/v1/users/{id}/identities's shape");
    const missing = await cli('connections', 'unlink', '--user', 'usr_nobody', '--connection', 'con_x', '--subject', 's');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /No such linked identity/);
  });
});
