/**
 * Threat: a redirect URI that reads as one place and sends the browser to another. Redirect
 * URIs are kept verbatim and matched character for character, but URL parsers (WHATWG, ours at
 * /authorize and the browser's) drop tabs and line breaks and percent-encode spaces and other
 * characters that are not valid in a URI. An operator (or a script, or an attacker holding an
 * admin key who wants the change to look harmless) registers
 * `https://app.example.com<TAB>.evil.example/cb`: `clients list` shows app.example.com, the
 * parsed URI is app.example.com.evil.example, where codes would go. A line break would also
 * reach logs and headers. Registration, by the CLI and the admin API alike, refuses anything
 * but the characters of RFC 3986 (2: a space or other character percent-encoded) and a
 * fragment (RFC 6749 3.1.2), for redirect and post-logout redirect URIs, with a 400 (CLI:
 * status 2), a message that does not repeat the input, and nothing stored. Runs on SQLite and
 * PostgreSQL (helpers.ts); the CLI on its SQLite data folder.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { adminApi } from '../support/admin-api.js';
import { runCli, SQLITE_SUITE_ONLY, startTestService, type TestService } from '../support/helpers.js';
import { authorize } from '../support/oidc-helpers.js';

/** Each one parses as a URL (so only the new check refuses it), and none may be registered. */
const SMUGGLED: Array<[string, string]> = [
  ['https://app.example.com\t.evil.example/cb', 'a tab the parser drops: the host becomes app.example.com.evil.example'],
  ['https://app.example.com/cb\r\nSet-Cookie: x=1', 'a line break'],
  ['https://app.example.com/call back', 'a space'],
  [' https://app.example.com/cb', 'a leading space the parser trims'],
  ['https://app.example.com/cb?next=<script>', 'angle brackets'],
  ['https://app.example.com/a"b', 'a double quote'],
  ['https://app.example.com/caf\u00e9', 'a non-ASCII letter (an IRI, not a URI)'],
  ['https://app.example.com/c%zz', 'a % without two hex digits'],
  ['https://app.example.com/cb#', 'an empty fragment (RFC 6749 3.1.2)'],
];
/** Percent-encoded in the path and the query (the redirect keeps both: a query of encoded UTF-8 re-encodes the same). */
const GOOD = 'https://app.example.com/call%20back?x=%C3%A9';

describe('redirect URI smuggling: only URI characters are registered', () => {
  let service: TestService;
  let adminKey: string;
  let admin: ReturnType<typeof adminApi>;
  before(async () => {
    service = await startTestService();
    adminKey = (await service.ctx.adminKeys.create('ops', 'cli')).key;
    admin = adminApi(service.url, adminKey);
  });
  after(() => service.close());

  const clientIds = async () => (await service.ctx.clients.list()).map((c) => c.id).sort();
  const createdEvents = async () => (await service.ctx.events.list({ type: 'client.created', limit: 100 })).events.length;

  it('the parser would send the browser elsewhere than the registered string reads', () => {
    // What the check stands against: the URL the service would build from the first case.
    assert.equal(new URL(SMUGGLED[0]?.[0] as string).host, 'app.example.com.evil.example');
  });

  for (const [uri, why] of SMUGGLED) {
    it(`the admin API answers 400 and stores nothing for ${why}`, async () => {
      const [ids, events] = [await clientIds(), await createdEvents()];
      for (const body of [
        { name: 'X', origins: [], redirectUris: [uri] },
        { name: 'X', origins: [], redirectUris: ['https://app.example.com/ok'], postLogoutRedirectUris: [uri] },
      ]) {
        const response = await admin('POST', '/clients', body);
        assert.equal(response.status, 400, JSON.stringify(response.body));
        assert.equal(response.body.code, 'ERR_REQUEST_INVALID');
        assert.match(response.body.message, /(redirect URI must hold only URI characters|fragment)/);
        assert.ok(!response.body.message.includes(uri.slice(8)), `the refusal does not repeat the input: ${response.body.message}`);
      }
      assert.deepEqual(await clientIds(), ids, 'no client was created');
      assert.equal(await createdEvents(), events, 'no client.created event');
    });
  }

  it('the admin API refuses the same in a PATCH of post-logout redirect URIs and keeps the list', async () => {
    const created = await admin('POST', '/clients', {
      name: 'Portal',
      origins: [],
      redirectUris: ['https://portal.example/cb'],
      postLogoutRedirectUris: ['https://portal.example/bye'],
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    for (const [uri] of SMUGGLED) {
      const response = await admin('PATCH', `/clients/${created.body.clientId}`, { postLogoutRedirectUris: [uri] });
      assert.equal(response.status, 400, `${JSON.stringify(uri)}: ${JSON.stringify(response.body)}`);
      assert.match(response.body.message, /post-logout redirect URI/);
    }
    assert.deepEqual((await service.ctx.clients.findById(created.body.clientId))?.postLogoutRedirectUris, ['https://portal.example/bye']);
    const updates = await service.ctx.events.list({ type: 'client.updated', limit: 100 });
    assert.equal(updates.events.filter((e) => e.clientId === created.body.clientId).length, 0, 'no client.updated event');
  });

  it('keeps a percent-encoded URI verbatim, and /authorize redirects to exactly it', async () => {
    const created = await admin('POST', '/clients', { name: 'Encoded', origins: [], redirectUris: [GOOD], public: true });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    assert.deepEqual((await service.ctx.clients.findById(created.body.clientId))?.redirectUris, [GOOD]);
    // An unsupported response_type is an error the service sends back to the (registered) redirect URI.
    const answer = await authorize(service, { client_id: created.body.clientId, redirect_uri: GOOD, response_type: 'token', state: 's' });
    assert.equal(answer.status, 303);
    assert.ok(answer.location?.startsWith(`${GOOD}&error=`), String(answer.location));
  });
});

describe('redirect URI smuggling: the CLI refuses with status 2 and stores nothing', SQLITE_SUITE_ONLY, () => {
  let data: string;
  const cli = (...args: string[]) => runCli([...args, '--data', data]);
  const listed = async () =>
    JSON.parse((await cli('clients', 'list', '--json')).stdout).clients as Array<{ id: string; postLogoutRedirectUris: string[] }>;
  before(() => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-cli-'));
  });
  after(() => rmSync(data, { recursive: true, force: true }));

  it('clients create --redirect-uri and --post-logout-redirect-uri', async () => {
    // The same check as the admin API's (clients/service.ts): one case each way, each CLI run is a process.
    const [tab, , space] = SMUGGLED.map(([uri]) => uri) as [string, string, string];
    for (const args of [
      ['--redirect-uri', tab],
      ['--redirect-uri', 'https://app.example.com/ok', '--post-logout-redirect-uri', space],
    ]) {
      const run = await cli('clients', 'create', '--name', 'X', ...args);
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, /redirect URI must hold only URI characters/);
    }
    assert.deepEqual(await listed(), [], 'no client was created');
  });

  it('clients update --post-logout-redirect-uri, leaving the list as it was', async () => {
    const created = await cli(
      'clients',
      'create',
      '--name',
      'Portal',
      '--redirect-uri',
      'https://portal.example/cb',
      '--post-logout-redirect-uri',
      'https://portal.example/bye',
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const { clientId } = JSON.parse(created.stdout);
    const run = await cli('clients', 'update', clientId, '--post-logout-redirect-uri', SMUGGLED[0]?.[0] as string);
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /post-logout redirect URI must hold only URI characters/);
    assert.deepEqual((await listed()).find((c) => c.id === clientId)?.postLogoutRedirectUris, ['https://portal.example/bye']);
  });
});
