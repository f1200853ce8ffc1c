/**
 * A backup every local user could read (issue 34): `service-idp backup` wrote its copy with the
 * process's default mode (0644 under the usual umask), and the copy holds every address and
 * keyed secret. It is written 0600 now, from its first byte, whatever the umask. SQLite only:
 * PostgreSQL is backed up with pg_dump (`backup` says so).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCli, SQLITE_SUITE_ONLY } from '../support/helpers.js';

describe('a backup readable by its owner only', SQLITE_SUITE_ONLY, () => {
  let dir: string;
  let data: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'service-idp-backup-mode-'));
    data = join(dir, 'data');
    mkdirSync(data);
    const created = await runCli(['clients', 'create', '--name', 'Shop', '--origin', 'https://shop.example', '--data', data]);
    assert.equal(created.code, 0, created.stderr);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the backup file 0600, a new one and one replaced with --force, under a permissive umask', async () => {
    const file = join(dir, 'copy.db');
    // A child inherits the umask: under 000 every file it creates with the default mode is world-readable.
    const backup = (...extra: string[]) => runCli(['backup', file, '--data', data, ...extra]);
    const umask = process.umask(0);
    try {
      const made = await backup();
      assert.equal(made.code, 0, made.stderr);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const replaced = await backup('--force');
      assert.equal(replaced.code, 0, replaced.stderr);
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      process.umask(umask);
    }
  });
});
