/**
 * `service-idp orgs roles create|update --manages-organization yes|no` (runCli, on a data folder;
 * on PostgreSQL its own schema through --database): the flag sets whether a role's holders are
 * their organization's admin in the account center, --json answers the admin API's shape, and a
 * value other than yes or no is refused (exit 2) with nothing changed.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openCliDatabase, runCli } from '../support/helpers.js';

describe('service-idp orgs roles --manages-organization', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  const json = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-org-roles-cli-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('creates a managing role, turns another into one and back, and lists which manage', async () => {
    assert.equal((await json('orgs', 'roles', 'create', 'admin', '--manages-organization', 'yes')).managesOrganization, true);
    assert.equal((await json('orgs', 'roles', 'create', 'member')).managesOrganization, false);
    assert.equal((await json('orgs', 'roles', 'update', 'member', '--manages-organization', 'yes')).managesOrganization, true);
    assert.equal((await json('orgs', 'roles', 'update', 'member', '--manages-organization', 'no')).managesOrganization, false);
    const refused = await cli('orgs', 'roles', 'update', 'member', '--manages-organization', 'true');
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /--manages-organization is yes or no/);
    const table = await cli('orgs', 'roles', 'list');
    assert.match(table.stdout, /MANAGES/);
    assert.match(table.stdout, /admin\s.*\byes\b/);
    assert.match(table.stdout, /member\s.*\bno\b/);
  });
});
