/**
 * Database round trips per request (docs/performance.md, "Issue 12: round trips"). On
 * PostgreSQL every statement is a network round trip, so the login and token paths fold theirs:
 * a trusted-device authenticate makes at most two, a token request one. Counted at the driver
 * (pg's `Client#query`, better-sqlite3's statement runs) while real HTTP requests go through
 * the test service, one at a time; SQLite's counts are asserted too, so a change shows up in
 * review. On SQLite a transaction's BEGIN and COMMIT are counted apart from the statements (in
 * process, they cost no round trip; what matters is that a login's writes are one transaction).
 * Deterministic: no timing is measured.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import {
  deviceProof,
  loginWithDevice,
  registerRawDevice,
  sendClock,
  startTestService,
  TEST_DATABASE_URL,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

let statements = 0;
/** SQLite: transactions begun (BEGIN), counted apart from `statements`; their COMMIT or ROLLBACK is not counted. */
let transactions = 0;
/** A savepoint is the login's own part of a group commit (storage/group-commit.ts): control, not a statement. */
const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback|savepoint|release)\b/i;
/** Counts every statement the service's database driver sends or runs. */
function countStatements(): void {
  if (TEST_DATABASE_URL) {
    const query = pg.Client.prototype.query;
    pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
      statements += 1;
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query;
    return;
  }
  const probe = new SQLite(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...args: unknown[]) => unknown>;
  probe.close();
  for (const name of ['run', 'get', 'all', 'iterate']) {
    const original = statement[name] as (...args: unknown[]) => unknown;
    statement[name] = function (this: { source: string }, ...args: unknown[]) {
      const control = TRANSACTION_CONTROL.exec(this.source)?.[1]?.toLowerCase();
      if (control === 'begin') transactions += 1;
      else if (!control) statements += 1;
      return original.apply(this, args);
    };
  }
}

/** The statements one request makes: `run` awaits the response, so nothing of it is still in flight. */
async function counted<T>(run: () => Promise<T>): Promise<{ result: T; statements: number; transactions: number }> {
  const [start, startTransactions] = [statements, transactions];
  const result = await run();
  return { result, statements: statements - start, transactions: transactions - startTransactions };
}

const LIMITS = TEST_DATABASE_URL
  ? { authenticate: 2, token: 1, challenge: 0, authenticateTransactions: 0 } // PostgreSQL: the targets (a BEGIN would be a statement)
  : // SQLite: in process, one statement per write (no data-modifying CTE), the login's writes in one transaction
    { authenticate: 4, token: 2, challenge: 0, authenticateTransactions: 1 };

describe(`database round trips per request (${TEST_DATABASE_URL ? 'PostgreSQL' : 'SQLite'})`, () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    countStatements();
    // The webhook delivery loop polls its outbox every second; a poll inside a measured request
    // would be counted as the request's (seen under load on PostgreSQL). Nothing is delivered here.
    service = await startTestService({ testMode: true, now: clock.now, webhookTimings: { pollIntervalMs: 3_600_000 } });
  });
  after(() => service.close());

  const token = (code: string) =>
    fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: service.clientId, client_secret: service.secretKey }),
    });

  it('a trusted-device authenticate and its token request', async () => {
    const email = uniqueEmail();
    const device = await registerRawDevice(service, email);
    // Warm up: the pool's connections, the CORS origin set, the first last-used write, the
    // client cache of the challenge request (BROWSER_CLIENT_CACHE_MS; the clock does not move here).
    for (let i = 0; i < 3; i += 1) assert.equal((await token((await loginWithDevice(service, device, email)).code)).status, 200);

    const challenge = await counted(() => service.post('/v1/device-challenges', {}));
    const proof = await deviceProof(service, device, email);
    const login = await counted(() => service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof }));
    assert.equal(login.result.body.status, 'SUCCESS');
    const exchange = await counted(() => token(login.result.body.code));
    assert.equal(exchange.result.status, 200);
    console.log(
      `statements: challenge ${challenge.statements}, authenticate ${login.statements} (transactions ${login.transactions}), token ${exchange.statements}`,
    );
    assert.ok(challenge.statements <= LIMITS.challenge, `challenge: ${challenge.statements}`);
    assert.ok(login.statements <= LIMITS.authenticate, `authenticate: ${login.statements}`);
    assert.equal(login.transactions, LIMITS.authenticateTransactions, 'the login writes in one transaction (SQLite), none on PostgreSQL');
    assert.ok(exchange.statements <= LIMITS.token, `token: ${exchange.statements}`);
  });

  it('the folded write stays conditional: a replayed proof issues no code, records no success, moves nothing', async () => {
    const email = uniqueEmail();
    const device = await registerRawDevice(service, email);
    const successes = async () =>
      (
        await service.ctx.events.list({
          userId: (await service.ctx.enabledUsers.findByEmail(email))?.id as string,
          type: 'sign_in.succeeded',
          limit: 100,
        })
      ).events.length;
    const codes = async () =>
      Number(
        (
          await service.ctx.db
            .selectFrom('auth_codes')
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const proof = await deviceProof(service, device, email);
    const first = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof });
    assert.equal(first.body.status, 'SUCCESS');
    const lastUsed = (await service.ctx.devices.find(device.deviceId))?.lastUsedAt;
    assert.ok(lastUsed, 'the first login stamps the device used');
    const [codesBefore, successesBefore] = [await codes(), await successes()];

    clock.tick(); // past the send spacing: the refused proof starts an email-OTP registration
    const replay = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof });
    assert.equal(replay.body.status, 'OTP_NEEDED');
    assert.equal(replay.body.deviceRefused, true);
    assert.equal(await codes(), codesBefore, 'no code for a spent challenge');
    assert.equal(await successes(), successesBefore, 'no sign_in.succeeded for a spent challenge');
  });

  it('of 10 parallel authenticates with one proof, exactly one gets a code (the spend decides inside the folded write)', async () => {
    const email = uniqueEmail();
    const device = await registerRawDevice(service, email);
    const userId = (await service.ctx.enabledUsers.findByEmail(email))?.id as string;
    const successes = async () => (await service.ctx.events.list({ userId, type: 'sign_in.succeeded', limit: 100 })).events.length;
    const before = await successes();
    const proof = await deviceProof(service, device, email);
    clock.tick();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', deviceProof: proof })),
    );
    assert.equal(answers.filter((a) => a.body?.status === 'SUCCESS').length, 1);
    assert.equal(await successes(), before + 1);
    const codes = await service.ctx.db.selectFrom('auth_codes').select('user_id').where('user_id', '=', userId).execute();
    // One code from the device's registration, one from the winning login.
    assert.equal(codes.length, 2);
  });
});
