/**
 * Discovery says only what is true (issue 36): docs/protocol.md's discovery table names every
 * field the service publishes, what it says and the test that proves it; this file holds that
 * table to the served document (a field added without its row, or a row citing a test that is
 * gone, fails here) and proves the claims no other file does (`subject_types_supported`).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { idTokenClaims } from '../support/oidc-helpers.js';
import { relyingParty, signIn } from '../support/oidc-token-helpers.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');

/** The discovery table of docs/protocol.md: each row's field names and its "proved by" cell. */
function discoveryTable(): Array<{ fields: string[]; provedBy: string }> {
  const text = readFileSync(join(ROOT, 'docs/protocol.md'), 'utf8');
  const section = text.slice(text.indexOf('### GET /.well-known/openid-configuration'));
  const table = section.slice(section.indexOf('| field'), section.indexOf('\n\n', section.indexOf('| field')));
  return table
    .split('\n')
    .slice(2)
    .map((row) => row.split('|').map((cell) => cell.trim()))
    .map(([, fields = '', , provedBy = '']) => ({ fields: [...fields.matchAll(/`(\w+)`/g)].map((m) => m[1] ?? ''), provedBy }));
}

describe("discovery: docs/protocol.md's table and the served document agree", () => {
  let service: TestService;
  let metadata: Record<string, unknown>;
  before(async () => {
    service = await startTestService();
    // The optional fields are published once the operator sets them.
    await service.ctx.branding.updateSettings({
      documentationUrl: 'https://acme.example/dev',
      policyUrl: 'https://acme.example/privacy',
      termsUrl: 'https://acme.example/terms',
    });
    metadata = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
  });
  after(() => service.close());

  it('every published field has its row, and every row a published field', () => {
    const rows = discoveryTable();
    const documented = rows.flatMap((row) => row.fields);
    assert.deepEqual(
      Object.keys(metadata).filter((field) => !documented.includes(field)),
      [],
      'published without a row in docs/protocol.md',
    );
    assert.deepEqual(
      documented.filter((field) => !(field in metadata)),
      [],
      'a row for a field the service does not publish',
    );
  });

  it('every row names the tests that prove it, and each exists', () => {
    for (const { fields, provedBy } of discoveryTable()) {
      const files = [...provedBy.matchAll(/`([\w/.-]+\.test\.ts)`/g)].map((m) => m[1] ?? '');
      assert.ok(files.length > 0, `${fields.join(', ')}: no test named`);
      for (const file of files) {
        const found = [join(ROOT, 'packages/idp/test', file), join(ROOT, 'examples/demo/test', file)].some((path) => existsSync(path));
        assert.ok(found, `${fields.join(', ')}: ${file} does not exist`);
      }
    }
  });

  it('subject_types_supported ["public"]: one user has the same sub at every application', async () => {
    assert.deepEqual(metadata.subject_types_supported, ['public']);
    const first = await relyingParty(service, { name: 'First App', redirectUri: 'https://first.example/cb' });
    const second = await relyingParty(service, { name: 'Second App', redirectUri: 'https://second.example/cb' });
    const email = uniqueEmail('subject');
    const one = await signIn(service, first, email);
    const two = await signIn(service, second, email, { browser: one.browser });
    assert.equal(idTokenClaims(one.tokens.id_token ?? '').sub, idTokenClaims(two.tokens.id_token ?? '').sub);
  });
});
