/**
 * Operators managing users (users/): disable and enable, delete with every row about the
 * person, export, devices, listing with filters and cursors. On SQLite, and on PostgreSQL
 * when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ErrorStatus } from 'service-protocol';
import { PAGE_SIZE_MAX } from '../../src/defaults.js';
import type { ServiceError } from '../../src/errors.js';
import { isPostgres } from '../../src/storage/database.js';
import { loginWithDevice, registerRawDevice, sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { signInWithPasskey, userWithPasskey } from '../support/webauthn-helpers.js';

describe('users', () => {
  let service: TestService;
  const clock = sendClock();
  const { tick } = clock;
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
  });
  after(() => service.close());

  const exchange = async (code: string) => {
    const response = await fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: service.clientId, client_secret: service.secretKey }),
    });
    return { status: response.status, body: await response.json() };
  };
  const mailCount = async (email: string) => (await service.ctx.mailbox.list(1000, email)).length;
  /** A user with a remembered device, signed in to the test client once (code exchanged). */
  async function signedInUser(label: string) {
    tick();
    const email = uniqueEmail(label);
    const device = await registerRawDevice(service, email);
    const { status } = await exchange((device as unknown as { code: string }).code);
    assert.equal(status, 200);
    const user = await service.ctx.users.find(email);
    return { email, device, userId: user.id };
  }
  const rejects = async (promise: Promise<unknown>, code: string) =>
    assert.rejects(
      promise,
      (error: ServiceError) => error.code === code && ErrorStatus[error.code as keyof typeof ErrorStatus] !== undefined,
    );

  describe('a disabled user cannot sign in anywhere', () => {
    it('gets no code and no mail, in an answer shaped like any other address', async () => {
      const { email } = await signedInUser('disabled');
      await service.ctx.users.disable(email, 'cli');
      const mailsBefore = await mailCount(email);
      tick();

      const disabled = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
      const stranger = await service.post('/v1/authenticate', { userid: uniqueEmail('stranger'), cryptoVersion: 'v1' });
      assert.equal(disabled.status, stranger.status);
      assert.deepEqual(Object.keys(disabled.body).sort(), Object.keys(stranger.body).sort());
      assert.equal(disabled.body.status, 'OTP_NEEDED');
      assert.equal(await mailCount(email), mailsBefore, 'no mail to a disabled user');

      // Even the code test mode shows opens nothing: the registration holds no code anyone knows.
      const verify = await service.post('/v1/email-otp/verify', {
        userid: email,
        deviceToken: disabled.body.deviceToken,
        otp: disabled.body.code,
      });
      assert.equal(verify.status, 400);
      assert.equal(verify.body.code, 'ERR_OTP_INVALID');
    });

    it('waits out the time a delivery takes, so the missing mail does not make its answer the fast one', async () => {
      // The oracle: with SMTP, a delivered code costs a round trip to the mail server, and a
      // disabled account's answer (nothing sent) came back that much sooner than anyone else's.
      const SMTP_MS = 300;
      const sent: string[] = [];
      const slowMailer = {
        send: async (mail: { to: string }) => {
          await new Promise((resolve) => setTimeout(resolve, SMTP_MS));
          sent.push(mail.to);
        },
        describe: () => 'a slow SMTP server',
        close: () => {},
      };
      const slowClock = sendClock();
      const slow = await startTestService({ testMode: true, mailer: slowMailer, now: slowClock.now });
      try {
        const email = uniqueEmail('slow-disabled');
        await registerRawDevice(slow, email);
        await slow.ctx.users.disable(email, 'cli');
        const mailsBefore = sent.length;
        slowClock.tick();
        const started = performance.now();
        const answer = await slow.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
        const took = performance.now() - started;
        assert.equal(answer.body.status, 'OTP_NEEDED');
        assert.equal(sent.length, mailsBefore, 'no mail to a disabled user');
        // A lower bound only (a sleep never ends early): the silent answer waited for a delivery's time.
        assert.ok(took >= SMTP_MS * 0.9, `answered after ${took} ms`);
      } finally {
        await slow.close();
      }
    });

    it('cannot use a remembered device, nor a code issued before it was disabled; enabling restores both paths', async () => {
      const { email, device } = await signedInUser('remembered');
      const early = await loginWithDevice(service, device, email);
      assert.equal(early.status, 'SUCCESS');
      await service.ctx.users.disable(email, 'cli');

      tick();
      const refused = await loginWithDevice(service, device, email);
      assert.equal(refused.status, 'OTP_NEEDED', 'the device proof is refused like any unknown device');
      const token = await exchange(early.code);
      assert.equal(token.status, 400);
      assert.equal(token.body.error, 'invalid_grant');

      await service.ctx.users.enable(email, 'cli');
      const again = await loginWithDevice(service, device, email);
      assert.equal(again.status, 'SUCCESS');
      assert.equal((await exchange(again.code)).status, 200);
    });

    it('is refused between the verified code and the device registration', async () => {
      const email = uniqueEmail('midway');
      await registerRawDevice(service, email);
      tick();
      const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: false });
      const v = await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
      assert.equal(v.status, 200);
      await service.ctx.users.disable(email, 'cli');
      const d = await service.post('/v1/devices', { userid: email, deviceToken: a.body.deviceToken });
      assert.equal(d.status, 400);
      assert.equal(d.body.code, 'ERR_SESSION_INVALID');
    });

    it('records who disabled and enabled the user', async () => {
      const { email, userId } = await signedInUser('audited');
      await service.ctx.users.disable(email, 'cli');
      tick();
      await service.ctx.users.enable(userId, 'cli');
      const { events } = await service.ctx.events.list({ userId, limit: 10 });
      assert.deepEqual(
        events.slice(0, 2).map((e) => [e.type, e.actor]),
        [
          ['user.enabled', 'cli'],
          ['user.disabled', 'cli'],
        ],
      );
    });
  });

  describe('delete', () => {
    /** This database's tables: on PostgreSQL, this file's schema only (another file's may be dropped meanwhile). */
    async function tableNames(): Promise<string[]> {
      const { db } = service.ctx;
      if (!isPostgres(db)) return (await db.introspection.getTables()).map((t) => t.name);
      const { rows } = await sql<{
        name: string;
      }>`select table_name as name from information_schema.tables where table_schema = current_schema()`.execute(db);
      return rows.map((row) => row.name);
    }

    /** Every row of every table, as text: what the database still holds. */
    async function everything(): Promise<string> {
      const names = await tableNames();
      assert.ok(names.includes('users') && names.includes('auth_codes'), `the tables are found: ${names.join(' ')}`);
      const tables = names.map((name) => ({ name }));
      const dumps = await Promise.all(
        tables
          .filter((t) => !t.name.startsWith('kysely_'))
          .map(async (t) =>
            JSON.stringify(
              await service.ctx.db
                .selectFrom(t.name as 'users')
                .selectAll()
                .execute(),
            ),
          ),
      );
      return dumps.join('\n');
    }

    it('removes every row about the user in every table and keeps one event that names no one', async () => {
      const { email, device, userId } = await signedInUser('deleted');
      const keep = await signedInUser('kept');
      // Rows in every other table keyed by the user or the address: an unspent code, a pending
      // registration, an MFA method with a sealed secret, an MFA step, a remembered device, a failure count.
      await loginWithDevice(service, device, email);
      const pending = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });
      const wrong = pending.body.code === '000000' ? '000001' : '000000';
      await service.post('/v1/email-otp/verify', { userid: email, deviceToken: pending.body.deviceToken, otp: wrong });
      const db = service.ctx.db;
      await db
        .insertInto('mfa_methods')
        .values({
          user_id: userId,
          method: 'totp',
          phone: null,
          totp_secret_sealed: 'sealed',
          last_totp_step: null,
          version: 'v',
          confirmed_at: 1,
        })
        .execute();
      await db
        .insertInto('mfa_remembered')
        .values({ device_id: device.deviceId, user_id: userId, method_version: 'v', expires_at: Date.now() + 60_000 })
        .execute();
      await db
        .insertInto('mfa_sessions')
        .values({
          id: 'mfs_x',
          purpose: 'login',
          client_id: service.clientId,
          user_id: userId,
          method: 'totp',
          phone: null,
          totp_secret_sealed: null,
          device_id: device.deviceId,
          pending_device: null,
          code_challenge: null,
          amr: '[]',
          auth_time: 1,
          otp_hash: null,
          otp_expires_at: null,
          attempts: 0,
          created_at: 1,
          initiated_at: null,
          verified_at: null,
          expires_at: Date.now() + 60_000,
        })
        .execute();
      // The service session of a hosted sign-in, and a hosted sign-in held while its page shows recovery codes.
      await db
        .insertInto('sign_in_sessions')
        .values({
          id: 'sis_x',
          user_id: userId,
          device_id: device.deviceId,
          amr: '["swk"]',
          auth_time: 1,
          last_used_at: 1,
          expires_at: Date.now() + 60_000,
          ended_at: null,
        })
        .execute();
      await db
        .insertInto('authorization_requests')
        .values({
          id: 'req_x',
          browser_binding_hash: 'b',
          client_id: service.clientId,
          redirect_uri: 'https://rp.example/callback',
          state: null,
          nonce: null,
          code_challenge: null,
          prompt: null,
          max_age_seconds: null,
          login_hint: null,
          scope: 'openid email',
          created_at: 1,
          expires_at: Date.now() + 60_000,
          consumed_at: null,
          held_user_id: userId,
          held_device_id: device.deviceId,
          held_amr: '["otp"]',
          held_auth_time: 1,
        })
        .execute();
      const held = await everything();
      assert.ok(held.includes(email) && held.includes(userId) && held.includes(device.deviceId), 'the test seeded rows about the user');

      await service.ctx.users.delete(email, 'cli');

      const left = await everything();
      assert.ok(!left.includes(email), 'no row holds the address');
      assert.ok(!left.includes(userId), 'no row holds the user id');
      assert.ok(!left.includes(device.deviceId), 'no row holds the device id');
      assert.ok(left.includes(keep.email) && left.includes(keep.userId), "another user's rows stay");
      const { events } = await service.ctx.events.list({ type: 'user.deleted', limit: 1 });
      assert.equal(events[0]?.actor, 'cli');
      assert.equal(events[0]?.userId, null);
      await rejects(service.ctx.users.find(email), 'ERR_NOT_FOUND');
      // The address may sign up again, as a new user.
      tick();
      await registerRawDevice(service, email);
      assert.notEqual((await service.ctx.users.find(email)).id, userId);
    });

    it('refuses an unknown user and changes nothing', async () => {
      const { events: before } = await service.ctx.events.list({ limit: 1 });
      await rejects(service.ctx.users.delete('usr_unknown', 'cli'), 'ERR_NOT_FOUND');
      await rejects(service.ctx.users.delete(uniqueEmail('nobody'), 'cli'), 'ERR_NOT_FOUND');
      assert.deepEqual((await service.ctx.events.list({ limit: 1 })).events, before);
    });
  });

  describe('export and devices', () => {
    it('exports the account, devices, MFA method without its secret, client sign-ins and events', async () => {
      const { email, device, userId } = await signedInUser('exported');
      await service.ctx.db
        .insertInto('mfa_methods')
        .values({
          user_id: userId,
          method: 'sms',
          phone: '+14155550100',
          totp_secret_sealed: 'SEALED-MARKER',
          last_totp_step: null,
          version: 'VERSION-MARKER',
          confirmed_at: 5,
        })
        .execute();
      await service.ctx.users.disable(userId, 'cli');
      const exported = await service.ctx.users.export(email);
      assert.equal(exported.account.id, userId);
      assert.equal(exported.account.email, email);
      assert.deepEqual(
        exported.devices.map((d) => d.id),
        [device.deviceId],
      );
      assert.deepEqual(exported.mfa, { method: 'sms', phone: '+14155550100', confirmedAt: 5 });
      assert.deepEqual(
        exported.clientSignIns.map((c) => [c.clientId, c.clientName]),
        [[service.clientId, 'Test App']],
      );
      assert.ok(exported.events.some((e) => e.type === 'user.disabled'));
      const text = JSON.stringify(exported);
      assert.ok(!text.includes('SEALED-MARKER') && !text.includes('VERSION-MARKER'), 'no secret or binding in the export');
      assert.ok(!/publicJwk|public_jwk|hash/i.test(text));
    });

    it('lists every device of the user and revokes one by id: its key stops working at once', async () => {
      const { email, device, userId } = await signedInUser('devices');
      const listed = await service.ctx.users.devices(userId);
      assert.deepEqual(
        listed.map((d) => [d.id, d.clientId, d.removedAt]),
        [[device.deviceId, service.clientId, null]],
      );
      await service.ctx.users.revokeDevice(device.deviceId, 'cli');
      tick();
      assert.equal((await loginWithDevice(service, device, email)).status, 'OTP_NEEDED');
      assert.notEqual((await service.ctx.users.devices(email))[0]?.removedAt, null);
      await rejects(service.ctx.users.revokeDevice(device.deviceId, 'cli'), 'ERR_DEVICE_NOT_FOUND');
      await rejects(service.ctx.users.revokeDevice('dev_unknown', 'cli'), 'ERR_DEVICE_NOT_FOUND');
      const { events } = await service.ctx.events.list({ userId, type: 'device.revoked', limit: 5 });
      assert.deepEqual(
        events.map((e) => [e.deviceId, e.actor]),
        [[device.deviceId, 'cli']],
      );
    });

    it('lists passkeys with the devices (kind, name, synced), exports them, and revokes one by id: it stops signing in', async () => {
      tick();
      const { email, device, credential, passkeyId } = await userWithPasskey(service, { synced: true, name: 'Work phone' });
      const user = await service.ctx.users.find(email);
      // Both made at the same (frozen) millisecond: the listing orders them by id then, so compare by kind.
      const byKind = <T extends { kind: string }>(list: T[]) => [...list].sort((a, b) => a.kind.localeCompare(b.kind));
      const listed = byKind(await service.ctx.users.devices(user.id));
      assert.deepEqual(
        listed.map((d) => [d.id, d.kind, d.name, d.synced, d.removedAt]),
        [
          [device.deviceId, 'browser', null, null, null],
          [passkeyId, 'passkey', 'Work phone', true, null],
        ],
      );
      assert.equal((await signInWithPasskey(service, credential)).status, 200);
      const used = (await service.ctx.users.devices(email)).find((d) => d.id === passkeyId);
      assert.equal(typeof used?.lastUsedAt, 'number', 'the last use shows');
      assert.deepEqual(
        byKind((await service.ctx.users.export(email)).devices).map((d) => [d.id, d.kind]),
        [
          [device.deviceId, 'browser'],
          [passkeyId, 'passkey'],
        ],
      );
      assert.deepEqual((await service.ctx.users.show(email)).devices, await service.ctx.users.devices(email));

      await service.ctx.users.revokeDevice(passkeyId, 'cli');
      tick();
      assert.equal((await signInWithPasskey(service, credential)).status, 401, 'a revoked passkey no longer signs in');
      assert.notEqual((await service.ctx.users.devices(email)).find((d) => d.id === passkeyId)?.removedAt, null);
      assert.equal((await service.ctx.users.devices(email)).find((d) => d.id === device.deviceId)?.removedAt, null, 'the browser stays');
      await rejects(service.ctx.users.revokeDevice(passkeyId, 'cli'), 'ERR_DEVICE_NOT_FOUND');
      const { events } = await service.ctx.events.list({ userId: user.id, type: 'passkey.revoked', limit: 5 });
      assert.deepEqual(
        events.map((e) => [e.deviceId, e.clientId, e.actor]),
        [[passkeyId, service.clientId, 'cli']],
      );
    });
  });

  describe('list', () => {
    it('pages through every user with cursors, oldest first, and filters by part of the address in any case', async () => {
      const tag = `pages${Date.now()}`;
      const made: string[] = [];
      for (let i = 0; i < 5; i++)
        made.push((await service.ctx.enabledUsers.findOrCreate(`${tag}.${i}@example.com`, 1000 + i))?.id as string);
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await service.ctx.users.list({ email: tag.toUpperCase(), limit: 2, ...(cursor ? { cursor } : {}) });
        assert.ok(page.users.length <= 2);
        seen.push(...page.users.map((u) => u.id));
        cursor = page.nextCursor ?? undefined;
      } while (cursor);
      assert.deepEqual(seen, made);
      // % and _ are letters in a filter, not wildcards.
      const underscore = await service.ctx.enabledUsers.findOrCreate(`${tag}_x@example.com`, 2000);
      assert.deepEqual((await service.ctx.users.list({ email: `${tag}%`, limit: 10 })).users, []);
      assert.deepEqual((await service.ctx.users.list({ email: `${tag}._`, limit: 10 })).users, []);
      assert.deepEqual(
        (await service.ctx.users.list({ email: `${tag}_`, limit: 10 })).users.map((u) => u.id),
        [underscore?.id],
      );
    });

    it('refuses a malformed cursor and a page size out of range', async () => {
      for (const cursor of ['nope', Buffer.from('[1]').toString('base64url'), Buffer.from('["1","x"]').toString('base64url')])
        await rejects(service.ctx.users.list({ cursor, limit: 10 }), 'ERR_REQUEST_INVALID');
      for (const limit of [0, -1, 1.5, PAGE_SIZE_MAX + 1]) await rejects(service.ctx.users.list({ limit }), 'ERR_REQUEST_INVALID');
      await rejects(service.ctx.events.list({ type: 'no.such', limit: 10 }), 'ERR_REQUEST_INVALID');
    });
  });
});
