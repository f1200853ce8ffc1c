/**
 * `service-idp apis`, `roles` and `users roles` as an operator uses them (runCli, on a data
 * folder; on PostgreSQL its own schema through --database): the admin API's shapes with --json,
 * the --grant syntax, the same refusals as the admin API (exit 2 for input the rules refuse, 1
 * for an unknown object), and events with the actor `cli`.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ApiSchema, RoleSchema } from '../../src/apis/routes.js';
import { openCliDatabase, runCli } from '../support/helpers.js';

describe('service-idp apis, roles and users roles', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  const json = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-apis-cli-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('creates, lists, updates and deletes an API', async () => {
    const api = await json(
      'apis',
      'create',
      '--identifier',
      'https://api.example.com',
      '--name',
      'Notes',
      '--permissions',
      'read:notes,write:notes',
    );
    assert.deepEqual(Object.keys(api).sort(), Object.keys(ApiSchema.properties).sort(), 'the admin API shape');
    assert.deepEqual(api.permissions, ['read:notes', 'write:notes']);
    assert.match((await cli('apis', 'list')).stdout, /api_\S+\s+https:\/\/api\.example\.com\s+Notes\s+read:notes,write:notes/);
    assert.deepEqual((await json('apis', 'list')).apis, [api]);

    const renamed = await json('apis', 'update', 'https://api.example.com', '--name', 'Acme Notes');
    assert.equal(renamed.name, 'Acme Notes');
    const narrowed = await json('apis', 'update', api.id, '--permissions', 'read:notes');
    assert.deepEqual(narrowed.permissions, ['read:notes']);

    const events = await json('events', '--type', 'api.created');
    assert.equal(events.events[0].actor, 'cli');

    assert.equal((await cli('apis', 'delete', api.id)).code, 0);
    const again = await cli('apis', 'delete', api.id);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /No API/);
  });

  it('--introspection-client names the client the API’s resource server introspects as, and "" removes it', async () => {
    const server = await json('clients', 'create', '--name', 'Ledger API', '--redirect-uri', 'https://ledger.example.com/cb');
    const api = await json(
      'apis',
      'create',
      '--identifier',
      'urn:acme:ledger',
      '--name',
      'Ledger',
      '--introspection-client',
      server.clientId,
    );
    assert.equal(api.resourceServerClientId, server.clientId);
    assert.match((await cli('apis', 'update', api.id, '--name', 'Ledger')).stdout, new RegExp(`introspected by ${server.clientId}`));
    const unknown = await cli('apis', 'update', api.id, '--introspection-client', 'cli_nobody');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /No confidential or machine client cli_nobody/);
    assert.equal((await json('apis', 'update', api.id, '--introspection-client', '')).resourceServerClientId, null);
    assert.equal((await cli('apis', 'delete', api.id)).code, 0);
  });

  it('refuses what the rules refuse, naming it, and writes nothing', async () => {
    const http = await cli('apis', 'create', '--identifier', 'http://api.example.com', '--name', 'x');
    assert.equal(http.code, 2);
    assert.match(http.stderr, /https/);
    const spaced = await cli('apis', 'create', '--identifier', 'https://x.example.com', '--name', 'x', '--permissions', 'read notes');
    assert.equal(spaced.code, 2);
    assert.match(spaced.stderr, /scope token/);
    assert.equal((await cli('apis', 'create', '--name', 'x')).code, 2, 'no identifier');
    assert.equal((await cli('roles', 'create', 'r', '--grant', 'no-separator')).code, 2);
    assert.equal((await cli('roles', 'create', 'r', '--grant', 'https://x.example.com=read:x')).code, 2, 'no such API');
    assert.deepEqual((await json('apis', 'list')).apis, []);
    assert.deepEqual((await json('roles', 'list')).roles, []);
  });

  it('makes roles with --grant, gives them to users and takes them away', async () => {
    await json('apis', 'create', '--identifier', 'https://notes.example.com', '--name', 'Notes', '--permissions', 'read:notes,write:notes');
    await json('apis', 'create', '--identifier', 'urn:acme:billing', '--name', 'Billing', '--permissions', 'read:invoices');
    const role = await json(
      'roles',
      'create',
      'editor',
      '--grant',
      'https://notes.example.com=read:notes,write:notes',
      '--grant',
      'urn:acme:billing=read:invoices',
    );
    assert.deepEqual(Object.keys(role).sort(), Object.keys(RoleSchema.properties).sort(), 'the admin API shape');
    assert.deepEqual(role.permissions, [
      { api: 'https://notes.example.com', permission: 'read:notes' },
      { api: 'https://notes.example.com', permission: 'write:notes' },
      { api: 'urn:acme:billing', permission: 'read:invoices' },
    ]);
    assert.match(
      (await cli('roles', 'list')).stdout,
      /editor\s+https:\/\/notes\.example\.com=read:notes,write:notes urn:acme:billing=read:invoices/,
    );

    // A user to hold it: the service makes one as a sign-in would.
    const { withContext } = await import('../../src/cli/open.js');
    const { loadConfig } = await import('../../src/config.js');
    const config = loadConfig({ data, ...(database.args[1] ? { database: database.args[1] } : {}) }, {});
    const email = `ann.${Date.now()}@example.com`;
    await withContext(config, (ctx) => ctx.enabledUsers.findOrCreate(email, Date.now()));

    const added = await cli('users', 'roles', 'add', email, 'editor');
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stdout, /holds the role editor/);
    const held = await json('users', 'roles', 'list', email);
    assert.deepEqual(held, { roles: [role] });
    const unknownRole = await cli('users', 'roles', 'add', email, 'nobody');
    assert.equal(unknownRole.code, 1);
    assert.match(unknownRole.stderr, /No role nobody/);
    const unknownUser = await cli('users', 'roles', 'add', 'nobody@example.com', 'editor');
    assert.equal(unknownUser.code, 1);

    const renamed = await json('roles', 'update', 'editor', '--name', 'writer', '--grant', 'https://notes.example.com=write:notes');
    assert.deepEqual(renamed.permissions, [{ api: 'https://notes.example.com', permission: 'write:notes' }]);
    assert.equal((await cli('users', 'roles', 'remove', email, 'writer')).code, 0);
    assert.deepEqual(await json('users', 'roles', 'list', email), { roles: [] });
    assert.equal((await cli('roles', 'delete', 'writer')).code, 0);
    const assigned = await json('events', '--type', 'role.assigned');
    assert.equal(assigned.events[0].actor, 'cli');
    assert.deepEqual(assigned.events[0].detail, { roleId: role.id, role: 'editor' });
  });
});
