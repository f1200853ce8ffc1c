/**
 * A client generated from the served OpenAPI document, as an integrator would make one:
 * openapi-typescript writes the types, openapi-fetch calls the API with them. The client
 * file type-checks (a mistyped query is a type error), and it lists users through the admin API.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';
import { OPENAPI_PATH } from '../../src/http/openapi.js';
import { startTestService, type TestService } from '../support/helpers.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** Uses the generated `paths`: a typo in a path, a query or a field is a compile error. */
const CLIENT = `import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function listUserEmails(baseUrl: string, key: string): Promise<string[]> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } });
  const { data, error } = await client.GET('/admin/v1/users', { params: { query: { limit: 10 } } });
  if (error) throw new Error(\`\${error.code}: \${error.message}\`);
  const next: string | null = data.nextCursor;
  void next;
  return data.users.map((user) => user.email);
}

export async function refusedPageSize(baseUrl: string, key: string): Promise<string | undefined> {
  const client = createClient<paths>({ baseUrl, headers: { authorization: \`Bearer \${key}\` } });
  // @ts-expect-error: the document types limit as an integer
  const { error } = await client.GET('/admin/v1/users', { params: { query: { limit: 'ten' } } });
  return error?.code;
}
`;

describe('a client generated from the OpenAPI document', () => {
  let service: TestService;
  // Inside the repository, so the client's imports resolve from its node_modules.
  const dir = join(root, 'node_modules', '.cache', `openapi-client-${process.pid}`);
  before(async () => {
    service = await startTestService();
    mkdirSync(dir, { recursive: true });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await service.close();
  });

  it('type-checks, and lists users through the admin API', async () => {
    const document = await (await fetch(service.url + OPENAPI_PATH)).json();
    writeFileSync(join(dir, 'schema.d.ts'), astToString(await openapiTS(document)));
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    const compilerOptions = { noEmit: true, strict: true, skipLibCheck: true, target: 'es2022', module: 'nodenext', types: ['node'] };
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['client.ts'] }));
    await run(join(root, 'node_modules', '.bin', 'tsc'), ['-p', dir]).catch((error: { stdout?: string }) => {
      assert.fail(`the generated client does not type-check:\n${error.stdout}`);
    });

    const { key } = await service.ctx.adminKeys.create('generated client', 'cli');
    const email = `generated.${process.pid}@example.com`;
    await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    const client = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
      listUserEmails(baseUrl: string, key: string): Promise<string[]>;
      refusedPageSize(baseUrl: string, key: string): Promise<string | undefined>;
    };
    const emails = await client.listUserEmails(service.url, key);
    assert.ok(emails.includes(email), 'the new user is listed');
    assert.equal(await client.refusedPageSize(service.url, key), 'ERR_REQUEST_INVALID');
  });
});
