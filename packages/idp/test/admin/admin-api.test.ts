/**
 * The admin API against a running service, with a key made by `service-idp admin-keys create`:
 * the same operations as the CLI, whose results match the API's, with cursors and filters.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { runBuiltCli, runCli, SQLITE_SUITE_ONLY } from '../support/helpers.js';

const run = runCli;

describe('admin API', SQLITE_SUITE_ONLY, () => {
  let data: string;
  let service: RunningService;
  let key: string;
  let keyId: string;
  const cli = async (...args: string[]) => {
    // `users export` prints JSON always, and takes no --json (a flag a command does not read is refused).
    const json = args[0] === 'users' && args[1] === 'export' ? [] : ['--json'];
    const result = await run([...args, '--data', data, ...json]);
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };
  const api = async (method: string, path: string, body?: unknown, bearer = key) => {
    const response = await fetch(`${service.url}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${bearer}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-admin-'));
    service = await startService(loadConfig({ port: '0', data }, {}));
    // The key through the built binary; the other commands of this file run in-process (runCli).
    const created = await runBuiltCli(['admin-keys', 'create', '--name', 'ops laptop', '--data', data, '--json']);
    assert.equal(created.code, 0, created.stderr);
    const made = JSON.parse(created.stdout);
    key = made.key;
    keyId = made.id;
    assert.match(key, /^admin_[\w-]{43}$/);
  });
  after(async () => {
    await service.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('lists, pages and filters users as the CLI does', async () => {
    const tag = `adm${Date.now()}`;
    for (let i = 0; i < 5; i++) await service.ctx.enabledUsers.findOrCreate(`${tag}.${i}@example.com`, 1000 + i);
    const first = await api('GET', `/users?email=${tag}&limit=2`);
    assert.equal(first.status, 200);
    assert.deepEqual(first.body, await cli('users', 'list', '--email', tag, '--limit', '2'));
    const second = await api('GET', `/users?email=${tag}&limit=2&cursor=${first.body.nextCursor}`);
    assert.deepEqual(second.body, await cli('users', 'list', '--email', tag, '--limit', '2', '--cursor', first.body.nextCursor));
    const third = await api('GET', `/users?email=${tag}&limit=2&cursor=${second.body.nextCursor}`);
    assert.equal(third.body.nextCursor, null);
    assert.deepEqual(
      [...first.body.users, ...second.body.users, ...third.body.users].map((u: { email: string }) => u.email),
      [0, 1, 2, 3, 4].map((i) => `${tag}.${i}@example.com`),
    );
  });

  it('disables, enables, shows, exports and deletes a user; events name the admin key', async () => {
    const email = `ada.${Date.now()}@example.com`;
    const user = await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    const id = user?.id as string;
    const disabled = await api('POST', `/users/${id}/disable`);
    assert.equal(disabled.status, 200);
    assert.notEqual(disabled.body.disabledAt, null);
    assert.deepEqual((await api('GET', `/users/${id}`)).body, await cli('users', 'show', id));
    assert.equal((await api('POST', `/users/${id}/enable`)).body.disabledAt, null);
    const exported = await api('GET', `/users/${id}/export`);
    assert.deepEqual(exported.body, JSON.parse((await run(['users', 'export', id, '--data', data])).stdout));
    assert.deepEqual(
      exported.body.events.slice(0, 2).map((e: { type: string; actor: string }) => [e.type, e.actor]),
      [
        ['user.enabled', keyId],
        ['user.disabled', keyId],
      ],
    );
    assert.deepEqual((await api('GET', `/users/${id}/devices`)).body, { devices: [] });
    // A passkey shows with the devices (kind, name, synced), as the CLI shows it, and is revoked the same way.
    const passkeyId = `dev_pk${Date.now()}`;
    const clientId = (await service.ctx.clients.create({ name: 'Keys', origins: ['https://keys.test'] })).clientId;
    await service.ctx.db
      .insertInto('passkeys')
      .values({
        id: passkeyId,
        user_id: id,
        client_id: clientId,
        rp_id: 'keys.test',
        credential_id: `cred-${passkeyId}`,
        public_key: 'pk',
        user_handle: 'uh',
        sign_count: 0,
        transports: '[]',
        backup_eligible: 1,
        backed_up: 1,
        aaguid: '00000000-0000-0000-0000-000000000000',
        name: 'Work phone',
        created_at: 1000,
        last_used_at: 2000,
        removed_at: null,
      })
      .execute();
    const devices = await api('GET', `/users/${id}/devices`);
    assert.deepEqual(devices.body, {
      devices: [
        {
          id: passkeyId,
          clientId,
          kind: 'passkey',
          name: 'Work phone',
          browser: null,
          os: null,
          createdAt: 1000,
          lastUsedAt: 2000,
          removedAt: null,
          synced: true,
        },
      ],
    });
    assert.deepEqual(devices.body, await cli('devices', 'list', '--user', id));
    assert.deepEqual((await api('GET', `/users/${id}`)).body.devices, devices.body.devices);
    assert.deepEqual((await api('GET', `/users/${id}/export`)).body.devices, devices.body.devices);
    assert.equal((await api('POST', `/devices/${passkeyId}/revoke`)).status, 204);
    assert.equal(typeof (await api('GET', `/users/${id}/devices`)).body.devices[0].removedAt, 'number');
    assert.equal((await api('POST', `/devices/${passkeyId}/revoke`)).status, 404);
    const revoked = (await api('GET', `/events?user=${id}&type=passkey.revoked`)).body.events;
    assert.deepEqual(
      revoked.map((e: { deviceId: string; actor: string }) => [e.deviceId, e.actor]),
      [[passkeyId, keyId]],
    );
    const events = await api('GET', `/events?user=${id}&type=user.disabled`);
    assert.deepEqual(events.body, await cli('events', '--user', id, '--type', 'user.disabled'));
    assert.equal((await api('DELETE', `/users/${id}`)).status, 204);
    assert.equal((await api('GET', `/users/${id}`)).status, 404);
    const deletion = (await api('GET', '/events?type=user.deleted&limit=1')).body.events[0];
    assert.equal(deletion.actor, keyId);
    assert.equal(deletion.userId, null);
  });

  it('manages clients and rotates the signing key, as the CLI does', async () => {
    const created = await api('POST', '/clients', { name: 'Shop', origins: ['https://shop.test'] });
    assert.equal(created.status, 201);
    assert.match(created.body.secretKey, /^sk_/);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { mfaPolicy: 'required' })).status, 204);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { idTokenSignedResponseAlg: 'ES256' })).status, 204);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, {})).status, 400);
    const bye = ['https://shop.test/bye'];
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { postLogoutRedirectUris: bye })).status, 204);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { postLogoutRedirectUris: ['data:,x'] })).status, 400);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { passkeySatisfiesMfa: false })).status, 204);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { passkeySatisfiesMfa: 'no' })).status, 400);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { dpopBoundAccessTokens: true })).status, 204);
    assert.equal((await api('PATCH', `/clients/${created.body.clientId}`, { dpopBoundAccessTokens: 'yes' })).status, 400);
    const listed = await api('GET', '/clients');
    assert.deepEqual(listed.body, await cli('clients', 'list'));
    const client = listed.body.clients.find((c: { id: string }) => c.id === created.body.clientId);
    assert.deepEqual(
      [
        client.mfaPolicy,
        client.idTokenSignedResponseAlg,
        client.postLogoutRedirectUris,
        client.passkeySatisfiesMfa,
        client.dpopBoundAccessTokens,
      ],
      ['required', 'ES256', bye, false, true],
    );
    // A new secret key, by the CLI then the API (the same shape); each stops the one before at once.
    const id = created.body.clientId;
    const cliSecret = await cli('clients', 'rotate-secret', id);
    const apiSecret = await api('POST', `/clients/${id}/secret`);
    assert.equal(apiSecret.status, 200);
    assert.deepEqual(Object.keys(cliSecret).sort(), Object.keys(apiSecret.body).sort());
    assert.equal(cliSecret.clientId, id);
    for (const old of [created.body.secretKey, cliSecret.secretKey])
      assert.equal(await service.ctx.clients.authenticateBackend(id, old), undefined);
    assert.equal((await service.ctx.clients.authenticateBackend(id, apiSecret.body.secretKey))?.id, id);
    assert.equal((await api('DELETE', `/clients/${id}`)).status, 204);
    const rotated = await api('POST', '/signing-keys/rotate');
    assert.equal(rotated.status, 200);
    const types = (await api('GET', '/events?limit=4')).body.events.map((e: { type: string; actor: string }) => [e.type, e.actor]);
    assert.deepEqual(types, [
      ['signing_key.rotated', keyId],
      ['client.deleted', keyId],
      ['client.updated', keyId],
      ['client.updated', 'cli'],
    ]);
  });

  it("answers every --json command in its admin API twin's shape (docs/cli.md)", async () => {
    // A command that makes something: the same fields as the API's answer (the values differ: two were made).
    const cliClient = await cli('clients', 'create', '--name', 'Twin', '--origin', 'https://twin.test');
    const apiClient = await api('POST', '/clients', { name: 'Twin too', origins: ['https://twin-too.test'] });
    assert.deepEqual(Object.keys(cliClient).sort(), Object.keys(apiClient.body).sort());
    // An event this file records no more after this point: no delivery changes the endpoints while they are compared.
    const cliHook = await cli('webhooks', 'create', '--url', 'http://127.0.0.1:9/twin', '--events', 'user.deleted');
    const apiHook = await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/twin-too', events: ['user.deleted'] });
    assert.deepEqual(Object.keys(cliHook).sort(), Object.keys(apiHook.body).sort());
    const cliKey = await cli('admin-keys', 'create', '--name', 'twin');
    const apiKey = await api('POST', '/admin-keys', { name: 'twin too' });
    assert.equal(apiKey.status, 201);
    assert.deepEqual(Object.keys(cliKey).sort(), Object.keys(apiKey.body).sort());
    const cliOperator = await cli('operators', 'add', `twin.op.${Date.now()}@example.com`);
    const apiOperator = await api('POST', '/operators', { email: `twin.op2.${Date.now()}@example.com` });
    assert.equal(apiOperator.status, 201);
    assert.deepEqual(Object.keys(cliOperator).sort(), Object.keys(apiOperator.body).sort());
    // A command that reads: the same answer, object for object (lists in their named wrapper, as the API's).
    const email = `twin.${Date.now()}@example.com`;
    const id = (await service.ctx.enabledUsers.findOrCreate(email, Date.now()))?.id as string;
    const twins: Array<[string[], string]> = [
      [['clients', 'list'], '/clients'],
      [['webhooks', 'list'], '/webhooks'],
      [['clients', 'list', '--limit', '1'], '/clients?limit=1'],
      [['webhooks', 'list', '--limit', '1'], '/webhooks?limit=1'],
      [['operators', 'list', '--limit', '1'], '/operators?limit=1'],
      [['operators', 'list'], '/operators'],
      [['users', 'list', '--email', email], `/users?email=${encodeURIComponent(email)}`],
      [
        ['users', 'list', '--email', email, '--created-since', '2020-01-01', '--created-before', '2999-01-01'],
        `/users?email=${encodeURIComponent(email)}&createdSince=${Date.parse('2020-01-01')}&createdBefore=${Date.parse('2999-01-01')}`,
      ],
      [['users', 'show', id], `/users/${id}`],
      [['users', 'export', id], `/users/${id}/export`],
      [['devices', 'list', '--user', id], `/users/${id}/devices`],
      [['events', '--type', 'client.created', '--limit', '5'], '/events?type=client.created&limit=5'],
    ];
    for (const [args, path] of twins) {
      const answer = await api('GET', path);
      assert.equal(answer.status, 200, path);
      assert.deepEqual(await cli(...args), answer.body, `${args.join(' ')} --json is GET ${path}`);
    }
    // Where the key was last used changes with each API call: compare the list without it.
    const withoutUse = (list: { adminKeys: Array<Record<string, unknown>> }) => list.adminKeys.map(({ lastUsedAt, ...rest }) => rest);
    assert.deepEqual(withoutUse(await cli('admin-keys', 'list')), withoutUse((await api('GET', '/admin-keys')).body));
  });

  it('shows key names and last use, never keys; a key revoked by the CLI stops working at once', async () => {
    const listed = await api('GET', '/admin-keys');
    assert.deepEqual(listed.body, await cli('admin-keys', 'list'));
    const mine = listed.body.adminKeys.find((k: { id: string }) => k.id === keyId);
    assert.equal(mine.name, 'ops laptop');
    assert.notEqual(mine.lastUsedAt, null);
    const other = await cli('admin-keys', 'create', '--name', 'temporary');
    assert.equal((await api('GET', '/users?limit=1', undefined, other.key)).status, 200);
    assert.equal((await run(['admin-keys', 'revoke', other.id, '--data', data])).code, 0);
    assert.equal((await api('GET', '/users?limit=1', undefined, other.key)).status, 401);
    const again = await run(['admin-keys', 'revoke', other.id, '--data', data]);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `service-idp: No live admin key ${other.id}\n`);
    const text = await run(['admin-keys', 'list', '--data', data]);
    assert.match(text.stdout, /^KEY ID +NAME +CREATED +LAST USED +STATUS\n/);
    assert.ok(!text.stdout.includes(key) && !text.stdout.includes(other.key));
  });
});
