/**
 * Application names that skip the display-name rules (issue 34): `POST /admin/v1/clients`
 * took a name with CR/LF, a bidirectional override (U+202E) or a zero-width space (U+200B),
 * and the name is the default display name every hosted page and mail shows. The name now
 * follows the display name's rules (branding/validate.ts checkName), at the admin API, the
 * console and the CLI: a clear 400 (exit 2) and no client created. On SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { consoleCall, operatorSession } from '../support/console-helpers.js';
import { openCliDatabase, runCli, startTestService, type TestService } from '../support/helpers.js';

/** Names that would read as something else in a page or a mail's subject. */
const SPOOFED = ['Acme\r\nBcc: thief@example.com', 'Acme\nBank', 'Bank\u202Egnp.exe', 'Pay\u200BPal', 'Acme\u2028Bank', 'Acme\u0000'];

describe('application names follow the display-name rules', () => {
  let service: TestService;
  let adminKey: string;
  before(async () => {
    service = await startTestService({ testMode: true });
    adminKey = (await service.ctx.adminKeys.create('ops', 'cli')).key;
  });
  after(() => service.close());

  const clientNames = async () => (await service.ctx.clients.list()).map((c) => c.name);

  it('refuses a spoofing application name at POST /admin/v1/clients with a clear 400, and creates nothing', async () => {
    const before = await clientNames();
    for (const name of SPOOFED) {
      const { status, body } = await adminApi(service.url, adminKey)('POST', '/clients', { name, origins: ['https://spoof.example'] });
      assert.equal(status, 400, JSON.stringify(name));
      assert.deepEqual(body, {
        code: 'ERR_REQUEST_INVALID',
        message: 'the application name must hold no control or invisible formatting characters.',
      });
    }
    assert.deepEqual(await clientNames(), before);
    const made = await adminApi(service.url, adminKey)('POST', '/clients', { name: '  Acme Café  ', origins: ['https://spoof.example'] });
    assert.equal(made.status, 201, 'a plain name (trimmed) is taken');
    assert.ok((await clientNames()).includes('Acme Café'));
  });

  it("refuses a spoofing application name from the console's form with a 400, and creates nothing", async () => {
    const admin = await operatorSession(service, 'admin');
    const before = await clientNames();
    for (const name of SPOOFED) {
      const answer = await consoleCall(service, admin, 'POST', '/clients', {}, { name, origins: ['https://spoof.example'] });
      assert.equal(answer.status, 400, JSON.stringify(name));
      assert.equal(answer.body.code, 'ERR_REQUEST_INVALID');
    }
    assert.deepEqual(await clientNames(), before);
  });
});

describe('application names follow the display-name rules at the CLI', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-app-name-'));
    database = await openCliDatabase();
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('refuses a spoofing name on clients create with exit 2 naming the rule, and creates nothing', async () => {
    // A command line cannot carry a NUL.
    for (const name of SPOOFED.filter((n) => !n.includes('\u0000'))) {
      const refused = await cli('clients', 'create', '--name', name, '--origin', 'https://spoof.example');
      assert.equal(refused.code, 2, `${JSON.stringify(name)}: ${refused.stderr}`);
      assert.match(refused.stderr, /the application name must hold no control or invisible formatting characters/);
    }
    assert.deepEqual(JSON.parse((await cli('clients', 'list', '--json')).stdout).clients, []);
  });
});
