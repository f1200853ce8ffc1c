/**
 * Two nodes started together on one empty database each made a signing key set (issue 34: six
 * keys on one node, an empty JWKS on the other), so half the ID tokens could not be verified by
 * a client that fetched the keys from the other node. The first keys are now made once per
 * database, under the migration lock, by `service-idp migrate` (which compose.yaml runs first)
 * or the first `start`; a node never keeps a key set without a current key per algorithm. The
 * built CLI's `start`, several processes at once, on SQLite (one data folder) and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from 'jose';
import { SIGNING_ALGS } from '../../src/keys/algs.js';
import { KNOWN_MIGRATIONS } from '../../src/storage/migrations.js';
import { APP_ORIGIN, freePort, openCliDatabase, runCli, testModeIdToken, uniqueEmail } from '../support/helpers.js';

const CLI = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const NODES = 3;

interface Node {
  url: string;
  child: ChildProcess;
  stderr: string;
}

/** `service-idp start` on the data folder (and database), answering once /readyz says so. */
async function startNode(data: string, databaseArgs: string[]): Promise<Node> {
  const port = await freePort();
  const child = spawn(process.execPath, [CLI, 'start', '--data', data, ...databaseArgs, '--port', String(port), '--test-mode'], {
    env: { PATH: process.env.PATH ?? '', SERVICE_IDP_LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const node: Node = { url: `http://127.0.0.1:${port}`, child, stderr: '' };
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    node.stderr += chunk;
  });
  // The banner is printed once the node listens (after its migrations and keys).
  let stdout = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  while (!stdout.includes('service-idp listening')) {
    const [event] = await Promise.race([
      once(child.stdout as NodeJS.ReadableStream, 'data').then(() => ['data']),
      once(child, 'exit').then(() => ['exit']),
    ]);
    if (event === 'exit') throw new Error(`a node exited: ${node.stderr}`);
  }
  return node;
}

async function stopNode(node: Node): Promise<void> {
  if (node.child.exitCode !== null || node.child.signalCode !== null) return;
  node.child.kill('SIGTERM');
  await once(node.child, 'exit');
}

const jwksOf = async (node: Node) => (await (await fetch(`${node.url}/.well-known/jwks.json`)).json()) as JSONWebKeySet;

describe('signing keys are made once per database', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const nodes: Node[] = [];
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-first-keys-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await Promise.all(nodes.map(stopNode));
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('nodes started together on one empty database serve one same non-empty key set, and a token from one verifies at every other', async () => {
    // Every node at once on the empty database: their migrations and first keys race.
    nodes.push(...(await Promise.all(Array.from({ length: NODES }, () => startNode(data, database.args)))));
    const sets = await Promise.all(nodes.map(jwksOf));
    const kids = (set: JSONWebKeySet) => set.keys.map((k) => k.kid).sort();
    assert.equal(
      sets[0]?.keys.length,
      SIGNING_ALGS.length,
      `one key per algorithm, made once: ${JSON.stringify(kids(sets[0] as JSONWebKeySet))}`,
    );
    for (const set of sets) assert.deepEqual(kids(set), kids(sets[0] as JSONWebKeySet), 'every node serves the same keys');

    // An ID token signed by the first node verifies against every node's JWKS.
    const created = await runCli([
      'clients',
      'create',
      '--name',
      'Race',
      '--origin',
      APP_ORIGIN,
      '--json',
      '--data',
      data,
      ...database.args,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const keys = JSON.parse(created.stdout) as { clientId: string; publishableKey: string; secretKey: string };
    const [first] = nodes as [Node];
    const idToken = await testModeIdToken(first.url, keys, APP_ORIGIN, uniqueEmail('race'));
    assert.ok(idToken, 'an ID token');
    for (const node of nodes) await jwtVerify(idToken, createLocalJWKSet(await jwksOf(node)), { audience: keys.clientId });
  });
});

describe('migrate on an empty database', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-migrate-keys-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('names the migrations it applied and makes the first signing keys, once; start then adds none', async () => {
    const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
    const first = await cli('migrate');
    assert.equal(first.code, 0, first.stderr);
    assert.match(
      first.stdout,
      new RegExp(
        `^Applied ${KNOWN_MIGRATIONS.length} migrations to \\S+, in this order:\\n${KNOWN_MIGRATIONS.map((m) => `  ${m}\\n`).join('')}Made the first signing keys: ${SIGNING_ALGS.join(', ')}\\.\\nDatabase \\S+ is up to date\\.\\n$`,
      ),
    );
    const again = await cli('migrate');
    assert.match(again.stdout, /^Database \S+ is up to date\.\n$/, 'nothing applied, no keys made the second time');
    const node = await startNode(data, database.args);
    try {
      assert.equal((await jwksOf(node)).keys.length, SIGNING_ALGS.length, 'start found the keys migrate made');
    } finally {
      await stopNode(node);
    }
  });
});
