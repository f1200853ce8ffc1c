/**
 * Settings never dropped in silence (issue 34): the command line once took every command's flags
 * on every command, so `clients create --mfa-policy required` made an optional client with exit 0.
 * A flag a command does not read is refused now, and `clients create` takes every setting
 * `clients update` takes, applied at creation. The CLI (runCli), on SQLite and on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { openCliDatabase, runCli } from '../support/helpers.js';

const LOGO = fileURLToPath(new URL('../support/fixtures/logo-square.png', import.meta.url));

describe('settings never dropped in silence (the CLI)', () => {
  let data: string;
  let database: Awaited<ReturnType<typeof openCliDatabase>>;
  const cli = (...args: string[]) => runCli([...args, '--data', data, ...database.args]);
  const listed = async () =>
    JSON.parse((await cli('clients', 'list', '--json')).stdout).clients as Array<Record<string, unknown> & { id: string; name: string }>;

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-cli-settings-'));
    database = await openCliDatabase();
    const migrated = await cli('migrate');
    assert.equal(migrated.code, 0, migrated.stderr);
  });
  after(async () => {
    await database.drop();
    rmSync(data, { recursive: true, force: true });
  });

  it('clients create --mfa-policy required makes a strict client, with every other setting applied at creation', async () => {
    const created = await cli(
      'clients',
      'create',
      '--name',
      'Strict',
      '--redirect-uri',
      'https://strict.example/callback',
      '--mfa-policy',
      'required',
      '--passkey-mfa',
      'no',
      '--dpop',
      'required',
      '--par',
      'required',
      '--id-token-alg',
      'ES256',
      '--post-logout-redirect-uri',
      'https://strict.example/',
      '--display-name',
      'Strict Portal',
      '--accent',
      '#0a64d8',
      '--terms-url',
      'https://strict.example/terms',
      '--privacy-url',
      'https://strict.example/privacy',
      '--mail-sender-name',
      'Strict Portal',
      '--logo',
      LOGO,
      '--json',
    );
    assert.equal(created.code, 0, created.stderr);
    const { clientId } = JSON.parse(created.stdout);
    const client = (await listed()).find((c) => c.id === clientId);
    assert.deepEqual(
      {
        mfaPolicy: client?.mfaPolicy,
        passkeySatisfiesMfa: client?.passkeySatisfiesMfa,
        dpopBoundAccessTokens: client?.dpopBoundAccessTokens,
        requirePushedAuthorizationRequests: client?.requirePushedAuthorizationRequests,
        idTokenSignedResponseAlg: client?.idTokenSignedResponseAlg,
        postLogoutRedirectUris: client?.postLogoutRedirectUris,
      },
      {
        mfaPolicy: 'required',
        passkeySatisfiesMfa: false,
        dpopBoundAccessTokens: true,
        requirePushedAuthorizationRequests: true,
        idTokenSignedResponseAlg: 'ES256',
        postLogoutRedirectUris: ['https://strict.example/'],
      },
    );
    const brand = JSON.parse((await cli('clients', 'branding', clientId, '--json')).stdout);
    assert.equal(brand.displayName, 'Strict Portal');
    assert.equal(brand.accent, '#0a64d8');
    assert.equal(brand.termsUrl, 'https://strict.example/terms');
    assert.equal(brand.privacyUrl, 'https://strict.example/privacy');
    assert.equal(brand.mailSenderName, 'Strict Portal');
    assert.match(brand.logoUrl, /\/[0-9a-f]{64}\.png$/);
    // One creation with the settings in it: the client never existed in a weaker state first.
    const events = JSON.parse((await cli('events', '--json')).stdout).events.filter(
      (e: { clientId?: string }) => e.clientId === clientId,
    ) as Array<{ type: string; detail: Record<string, string> }>;
    assert.deepEqual(
      events.map((e) => e.type),
      ['client.created'],
    );
    assert.deepEqual(events[0]?.detail, {
      mfaPolicy: 'required',
      passkeyMfa: 'no',
      dpop: 'required',
      par: 'required',
      idTokenAlg: 'ES256',
      branding: 'displayName accent termsUrl privacyUrl mailSenderName logo',
    });
  });

  it('refuses a flag the command does not read, naming it, with exit 2, and creates nothing', async () => {
    const before = await listed();
    for (const [args, flag] of [
      [['clients', 'create', '--name', 'Lax', '--origin', 'https://lax.example', '--status'], '--status'],
      [['clients', 'create', '--name', 'Lax', '--origin', 'https://lax.example', '--role', 'admin'], '--role'],
      [['clients', 'create', '--name', 'Lax', '--origin', 'https://lax.example', '--port', '9'], '--port'],
      [['clients', 'list', '--mfa-policy', 'required'], '--mfa-policy'],
      [['migrate', '--name', 'x'], '--name'],
    ] as const) {
      const refused = await cli(...args);
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`);
      assert.equal(refused.stdout, '');
      assert.match(
        refused.stderr,
        new RegExp(`^service-idp: ${args[0]}( ${args[1]})? does not take ${flag}\\b.*See service-idp --help\\.\\n$`),
      );
    }
    assert.deepEqual(await listed(), before, 'no client was created');
  });

  it('refuses a bad setting on clients create with exit 2 and creates nothing', async () => {
    const before = await listed();
    for (const [flag, value, message] of [
      ['--mfa-policy', 'sometimes', /optional or required/],
      ['--passkey-mfa', 'maybe', /--passkey-mfa is yes or no/],
      ['--dpop', 'sometimes', /--dpop is required or optional/],
      ['--par', 'sometimes', /--par is required or optional/],
      ['--accent', '#ffff00', /contrast|WCAG/],
      ['--display-name', 'Bank\u202Eevil', /no control or invisible formatting characters/],
      ['--logo', join(data, 'no-such-logo.png'), /--logo: cannot read/],
    ] as const) {
      const refused = await cli('clients', 'create', '--name', 'Refused', '--origin', 'https://refused.example', flag, value);
      assert.equal(refused.code, 2, `${flag} ${value}: ${refused.stderr}`);
      assert.match(refused.stderr, message);
    }
    assert.deepEqual(await listed(), before, 'no client was created');
  });
});
