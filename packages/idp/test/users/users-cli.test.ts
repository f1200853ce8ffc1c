/**
 * `service-idp users …`, `devices …` and `events` as an operator uses them: command lines
 * against the data folder of a running service, whose answers change at once. They run
 * in-process (runCli); one of each group, and an exit status 1, through the built binary.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { newRawDevice, runBuiltCli, runCli, SQLITE_SUITE_ONLY, sendClock } from '../support/helpers.js';

const run = runCli;

describe('service-idp users, devices and events', SQLITE_SUITE_ONLY, () => {
  let data: string;
  let service: RunningService;
  // Moved past the per-address send interval where a test asks for a second code.
  const clock = sendClock();
  let post: (path: string, body: unknown) => Promise<any>;
  const cli = (...args: string[]) => run([...args, '--data', data]);
  const bin = (...args: string[]) => runBuiltCli([...args, '--data', data]);
  const json = async (...args: string[]) => {
    const result = await cli(...args, '--json');
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout);
  };
  /** Registers a remembered device for a new address (test mode shows the code). */
  async function signUp(email: string) {
    const device = await newRawDevice();
    const a = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await post('/v1/email-otp/verify', { userid: email, deviceToken: a.deviceToken, otp: a.code });
    const d = await post('/v1/devices', { userid: email, deviceToken: a.deviceToken, devicePublicKey: device.publicJwk });
    assert.equal(typeof d.deviceId, 'string', JSON.stringify(d));
    return d.deviceId as string;
  }
  /** A passkey row as factors/passkey/ stores one (the ceremonies are covered by webauthn.test.ts and users.test.ts). */
  async function addPasskey(userId: string, input: { name: string; synced: boolean }) {
    const id = `dev_pk${Date.now()}`;
    const client = (await service.ctx.clients.list())[0];
    await service.ctx.db
      .insertInto('passkeys')
      .values({
        id,
        user_id: userId,
        client_id: client?.id as string,
        rp_id: 'shop.test',
        credential_id: `cred-${id}`,
        public_key: 'pk',
        user_handle: 'uh',
        sign_count: 0,
        transports: '[]',
        backup_eligible: input.synced ? 1 : 0,
        backed_up: input.synced ? 1 : 0,
        aaguid: '00000000-0000-0000-0000-000000000000',
        name: input.name,
        created_at: clock.now() + 1,
        last_used_at: null,
        removed_at: null,
      })
      .execute();
    return id;
  }

  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-users-'));
    service = await startService(loadConfig({ port: '0', data, 'test-mode': true }, {}), { now: clock.now });
    const keys = await service.ctx.clients.create({ name: 'Shop', origins: ['http://shop.test'] });
    post = async (path, body) =>
      (
        await fetch(service.url + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin: 'http://shop.test', 'x-service-key': keys.publishableKey },
          body: JSON.stringify(body),
        })
      ).json();
  });
  after(async () => {
    await service.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('lists, shows, disables, enables, exports and deletes a user while the service runs', async () => {
    const email = `ada.${Date.now()}@example.com`;
    const deviceId = await signUp(email);

    const listed = await json('users', 'list', '--email', 'ADA.');
    assert.equal(listed.users.length, 1);
    const userId = listed.users[0].id as string;
    assert.deepEqual(listed, await service.ctx.users.list({ email: 'ada.', limit: 50 }), 'the CLI prints what the service answers');
    const text = await bin('users', 'list');
    assert.match(text.stdout, /^USER ID +EMAIL +CREATED +STATUS\n/);
    assert.match(text.stdout, new RegExp(`${userId} +${email.replaceAll('.', '\\.')} .* active`));

    const shown = await cli('users', 'show', email);
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, new RegExp(`User ${userId}`));
    assert.match(shown.stdout, /devices: +1 active, 1 in all, of which 0 active passkeys/);

    const mails = (await service.ctx.mailbox.list(10, email)).length;
    assert.equal((await cli('users', 'disable', userId)).code, 0);
    clock.tick();
    const refused = await post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
    assert.equal(refused.status, 'OTP_NEEDED');
    assert.equal((await service.ctx.mailbox.list(10, email)).length, mails, 'no mail while disabled');
    assert.match((await cli('users', 'show', userId)).stdout, /status: +disabled since/);
    assert.equal((await cli('users', 'enable', email)).code, 0);
    assert.match((await cli('users', 'show', userId)).stdout, /status: +active/);

    const { devices } = await json('devices', 'list', '--user', email);
    assert.deepEqual(
      devices.map((d: { id: string }) => d.id),
      [deviceId],
    );
    assert.match(
      (await bin('devices', 'list', '--user', userId)).stdout,
      /^DEVICE ID +CLIENT ID +KIND +NAME +CREATED +LAST USED +STATUS\n/,
    );
    assert.equal((await cli('devices', 'revoke', deviceId)).code, 0);
    assert.notEqual((await json('devices', 'list', '--user', userId)).devices[0].removedAt, null);

    // A passkey is listed with the devices (kind, name, synced) and revoked by the same command.
    const passkeyId = await addPasskey(userId, { name: 'Work phone', synced: true });
    assert.match((await cli('users', 'show', userId)).stdout, /devices: +1 active, 2 in all, of which 1 active passkeys/);
    const withPasskey = (await json('devices', 'list', '--user', userId)).devices as Array<Record<string, unknown>>;
    assert.deepEqual(
      withPasskey.map((d) => [d.id, d.kind, d.name, d.synced]),
      [
        [deviceId, 'browser', null, null],
        [passkeyId, 'passkey', 'Work phone', true],
      ],
    );
    assert.match(
      (await cli('devices', 'list', '--user', userId)).stdout,
      new RegExp(`${passkeyId} +\\S+ +passkey \\(synced\\) +Work phone `),
    );
    assert.equal((await cli('devices', 'revoke', passkeyId)).code, 0);
    assert.notEqual((await json('devices', 'list', '--user', userId)).devices[1].removedAt, null);
    const again = await cli('devices', 'revoke', passkeyId);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /already revoked/);

    const exported = JSON.parse((await cli('users', 'export', email)).stdout);
    assert.equal(exported.account.id, userId);
    assert.deepEqual(
      exported.events.map((e: { type: string }) => e.type),
      ['passkey.revoked', 'device.revoked', 'user.enabled', 'user.disabled', 'sign_in.succeeded', 'device.registered', 'user.created'],
    );

    const events = await json('events', '--user', userId, '--type', 'user.disabled', '--since', '1h');
    assert.deepEqual(
      events.events.map((e: { type: string; actor: string }) => [e.type, e.actor]),
      [['user.disabled', 'cli']],
    );
    assert.match((await bin('events')).stdout, /^TIME +TYPE +USER +CLIENT +DEVICE +IP +BY +DETAIL\n/);

    const deleted = await cli('users', 'delete', email);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.deepEqual((await json('users', 'list', '--email', email)).users, []);
    const gone = await bin('users', 'show', userId);
    assert.equal(gone.code, 1);
    assert.equal(gone.stderr, `service-idp: No user ${userId}\n`);
    const trail = await json('events', '--type', 'user.deleted');
    assert.equal(trail.events.length, 1);
    assert.ok(!JSON.stringify(trail).includes(userId) && !JSON.stringify(trail).includes(email));
  });

  it("records the operator's changes to clients and keys, naming the CLI as the actor", async () => {
    const made = await json('clients', 'create', '--name', 'Audited', '--origin', 'https://audited.test');
    assert.equal((await cli('clients', 'update', made.clientId, '--mfa-policy', 'required')).code, 0);
    assert.equal((await cli('keys', 'rotate')).code, 0);
    assert.equal((await cli('clients', 'delete', made.clientId)).code, 0);
    const { events } = await json('events', '--since', '10m', '--limit', '4');
    assert.deepEqual(
      events.map((e: { type: string; clientId: string | null; actor: string }) => [e.type, e.clientId, e.actor]),
      [
        ['client.deleted', made.clientId, 'cli'],
        ['signing_key.rotated', null, 'cli'],
        ['client.updated', made.clientId, 'cli'],
        ['client.created', made.clientId, 'cli'],
      ],
    );
    assert.match(events[1].detail.kid, /^[\w-]{43}$/);
    assert.ok(!JSON.stringify(events).includes(made.secretKey) && !JSON.stringify(events).includes(made.publishableKey));
  });

  it('users update --external-id sets the id a provisioning system knows the user by; "" clears it', async () => {
    const email = `ext.${Date.now()}@example.com`;
    await signUp(email);
    const set = await json('users', 'update', email, '--external-id', 'scim-42');
    assert.equal(set.externalId, 'scim-42');
    assert.match((await cli('users', 'show', email)).stdout, /external: scim-42/);
    const cleared = await cli('users', 'update', email, '--external-id', '');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.match(cleared.stdout, /external id cleared/);
    assert.equal((await json('users', 'show', email)).externalId, null);
    assert.equal((await cli('users', 'update', email)).code, 2, 'no --external-id: a usage error');
  });

  it('pages with --limit and --cursor', async () => {
    for (let i = 0; i < 3; i++) await service.ctx.enabledUsers.findOrCreate(`page${i}.${Date.now()}@paged.test`, Date.now() + i);
    const first = await json('users', 'list', '--email', '@paged.test', '--limit', '2');
    assert.equal(first.users.length, 2);
    assert.match((await cli('users', 'list', '--email', '@paged.test', '--limit', '2')).stdout, /More: --cursor \S+\n$/);
    const second = await json('users', 'list', '--email', '@paged.test', '--limit', '2', '--cursor', first.nextCursor);
    assert.equal(second.users.length, 1);
    assert.equal(second.nextCursor, null);
  });

  it('refuses bad input with one line, exit status 2 for a bad command line and 1 for an unknown user, and changes nothing', async () => {
    const before = await json('events');
    for (const [args, message] of [
      [['users', 'show'], 'usage: service-idp users show ID|EMAIL'],
      [['users', 'frobnicate'], 'unknown command "users frobnicate"'],
      [['devices', 'list'], 'usage: service-idp devices list --user ID|EMAIL'],
      [['devices', 'revoke'], 'usage: service-idp devices revoke DEVICE_ID'],
      [['users', 'list', '--limit', '0'], '--limit must be a whole number from 1 to 1000, not "0"'],
      [['users', 'list', '--limit', '1001'], '--limit must be a whole number from 1 to 1000, not "1001"'],
      [['users', 'list', '--cursor', 'garbage'], 'The cursor is not one this service returned'],
      [['events', '--type', 'user.exploded'], 'Unknown event type "user.exploded"'],
      [
        ['events', '--since', 'yesterday'],
        '--since must be a date (2026-01-31, 2026-01-31T12:00:00Z) or a duration (90m, 24h, 7d), not "yesterday"',
      ],
    ] as const) {
      const result = await cli(...args);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.equal(result.stderr, `service-idp: ${message}. See service-idp --help.\n`);
    }
    for (const args of [
      ['users', 'disable', 'usr_nobody'],
      ['users', 'delete', 'nobody@example.com'],
      ['devices', 'revoke', 'dev_nothing'],
    ]) {
      const result = await cli(...args);
      assert.equal(result.code, 1, args.join(' '));
      assert.equal(result.stderr.split('\n').length, 2, 'one line');
    }
    assert.deepEqual(await json('events'), before, 'nothing was recorded');
  });
});
