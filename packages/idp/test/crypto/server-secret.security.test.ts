/**
 * Two processes starting on a fresh data folder at once (two nodes, a CLI command beside the
 * service): the one that created the secret file could still be writing it when the other read
 * it ("holds fewer than 32 bytes"), or the second's exclusive create failed. Now each writes its
 * candidate whole and links it to the one name: every process ends with the same secret, the
 * file's, owner-readable only. (The old window was microseconds wide: this machine did not hit
 * it; the test holds the outcome, whatever the interleaving.)
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const MODULE = fileURLToPath(new URL('../../src/crypto/server-secret.ts', import.meta.url));

/** One process that loads the secret of `dir` at `at` (every process started by then, so they race) and prints it. */
const loadIn = (dir: string, at: number) =>
  new Promise<string>((resolve, reject) => {
    const script = `import(${JSON.stringify(MODULE)}).then((m) => { while (Date.now() < ${at}); process.stdout.write(m.loadServerSecret(${JSON.stringify(dir)}).toString('hex')); })`;
    execFile(process.execPath, ['--import', 'tsx', '-e', script], (error, stdout, stderr) =>
      error ? reject(new Error(stderr || error.message)) : resolve(stdout),
    );
  });

describe('the server secret on a fresh data folder', () => {
  it('processes that start at once all load the one secret, never a half-written file', async () => {
    {
      const dir = join(mkdtempSync(join(tmpdir(), 'service-idp-secret-')), 'data');
      try {
        // Every process busy-waits for the same instant: their loads overlap, as two nodes' first starts may.
        const at = Date.now() + 4000;
        const secrets = await Promise.all(Array.from({ length: 8 }, () => loadIn(dir, at)));
        const file = Buffer.from(readFileSync(join(dir, 'server-secret'), 'utf8').trim(), 'base64url').toString('hex');
        assert.equal(file.length, 64);
        assert.deepEqual(new Set(secrets), new Set([file]));
        assert.equal(statSync(join(dir, 'server-secret')).mode & 0o777, 0o600);
        assert.deepEqual(readdirSync(dir), ['server-secret'], 'no candidate is left behind');
      } finally {
        rmSync(join(dir, '..'), { recursive: true, force: true });
      }
    }
  });
});
