/**
 * Property-based tests of the operators' filters and cursors (users and events, shared by the
 * CLI and the admin API): any filter text finds exactly the addresses containing it, in any
 * case, with % _ and \ taken literally; any page size pages through everything once, in
 * order; any other cursor or event type is refused with ERR_REQUEST_INVALID, never a crash.
 * Through the admin API, any text in any query parameter (control characters and any Unicode
 * included) either is refused with a 400 `{ code, message }` or finds a subset of what a plain
 * substring search over every user (or a plain filter over every event) finds.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PAGE_SIZE_MAX } from '../../src/defaults.js';
import { ServiceError } from '../../src/errors.js';
import { EVENT_TYPES } from '../../src/events/types.js';
import { CONTROL_CHARACTERS, encodeCursor } from '../../src/storage/pagination.js';
import { startTestService, type TestService } from '../support/helpers.js';

const RUNS = 40;

describe('operator filters (property-based)', () => {
  let service: TestService;
  const tag = `pbt${process.pid}x${Date.now()}`;
  // Local parts with the characters LIKE treats specially, and mixed case in the filter only.
  const locals = ['ann', 'a_n', 'a%n', 'a\\n', 'bob.smith', 'b_b%', 'ann_%', "o'neil", 'zed'];
  const seeded: string[] = [];
  let adminKey: string;
  before(async () => {
    service = await startTestService();
    adminKey = (await service.ctx.adminKeys.create('pbt', 'cli')).key;
    for (const [i, local] of locals.entries()) {
      const email = `${local}.${tag}@example.com`;
      await service.ctx.enabledUsers.findOrCreate(email, 1_000_000 + i);
      seeded.push(email);
    }
  });
  after(() => service.close());

  const ours = (emails: string[]) => emails.filter((e) => e.includes(tag));
  const refused = (error: unknown) => error instanceof ServiceError && error.code === 'ERR_REQUEST_INVALID';

  it('finds exactly the addresses that contain the filter text, in any case, wildcards taken literally', async () => {
    const pieces = fc.constantFrom('a', 'n', '_', '%', '\\', '.', "'", 'b', 'A', 'N', 's', tag.slice(0, 4));
    await fc.assert(
      fc.asyncProperty(
        fc.array(pieces, { minLength: 1, maxLength: 4 }).map((p) => p.join('')),
        async (filter) => {
          const { users } = await service.ctx.users.list({ email: filter, limit: PAGE_SIZE_MAX });
          const expected = seeded.filter((email) => email.includes(filter.toLowerCase()));
          assert.deepEqual(ours(users.map((u) => u.email)), expected, `filter ${JSON.stringify(filter)}`);
          for (const user of users) assert.ok(user.email.includes(filter.toLowerCase()));
        },
      ),
      { numRuns: RUNS },
    );
  });

  it('pages through every match once, oldest first, for any page size', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: locals.length + 1 }), async (limit) => {
        const seen: string[] = [];
        let cursor: string | undefined;
        do {
          const page = await service.ctx.users.list({ email: tag, limit, ...(cursor ? { cursor } : {}) });
          assert.ok(page.users.length <= limit);
          seen.push(...page.users.map((u) => u.email));
          cursor = page.nextCursor ?? undefined;
        } while (cursor);
        assert.deepEqual(seen, seeded);
      }),
      { numRuns: 10 },
    );
  });

  it('refuses any cursor it did not make, any page size out of range and any unknown event type, and never crashes', async () => {
    const cursors = fc.oneof(
      fc.string({ maxLength: 60 }),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value)).toString('base64url')),
      fc.tuple(fc.double(), fc.string()).map((key) => Buffer.from(JSON.stringify(key)).toString('base64url')),
    );
    await fc.assert(
      fc.asyncProperty(cursors, async (cursor) => {
        for (const list of [() => service.ctx.users.list({ cursor, limit: 5 }), () => service.ctx.events.list({ cursor, limit: 5 })]) {
          try {
            const page = await list();
            assert.ok(Array.isArray('users' in page ? page.users : page.events), 'a cursor of the right shape reads a page');
          } catch (error) {
            assert.ok(refused(error), `cursor ${JSON.stringify(cursor)}: ${String(error)}`);
          }
        }
      }),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ max: 0 }), fc.integer({ min: PAGE_SIZE_MAX + 1 }), fc.double({ noInteger: true })),
        async (limit) => {
          await assert.rejects(service.ctx.users.list({ limit }), refused);
          await assert.rejects(service.ctx.events.list({ limit }), refused);
        },
      ),
      { numRuns: RUNS },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.string({ maxLength: 40 }).filter((type) => !(EVENT_TYPES as readonly string[]).includes(type)),
        async (type) => {
          await assert.rejects(service.ctx.events.list({ type, limit: 5 }), refused);
        },
      ),
      { numRuns: RUNS },
    );
  });

  /** Any text: any code point, the control characters and separators, pieces of the seeded addresses. */
  const anyText = () => {
    const special = fc.constantFrom('\u0000', '\u0001', '\t', '\n', '\u001f', '\u007f', '\u0085', '\u009f', '\u2028', '\u2029');
    const piece = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 6 }),
      special,
      fc.constantFrom('a', 'n', '_', '%', '\\', '.', '@', 'example.com', tag, `ann.${tag}`, '😀', 'é', 'İ'),
    );
    return fc.array(piece, { minLength: 1, maxLength: 5 }).map((pieces) => pieces.join(''));
  };
  const admin = async (path: string, query: Record<string, string>) => {
    const response = await fetch(`${service.url}/admin/v1${path}?${new URLSearchParams(query)}`, {
      headers: { authorization: `Bearer ${adminKey}` },
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const assertRefusal = (answer: { status: number; body: any }, what: string) => {
    assert.equal(answer.status, 400, what);
    assert.equal(answer.body.code, 'ERR_REQUEST_INVALID', what);
    assert.equal(typeof answer.body.message, 'string', what);
  };

  it('through the admin API, any email filter finds at most what a plain substring search finds, or is refused', async () => {
    const everyone = (await service.ctx.db.selectFrom('users').select(['id', 'email']).execute()).map((u) => u.email);
    await fc.assert(
      fc.asyncProperty(anyText(), fc.option(fc.integer({ min: 1, max: PAGE_SIZE_MAX }), { nil: undefined }), async (email, limit) => {
        const answer = await admin('/users', { email, ...(limit === undefined ? {} : { limit: String(limit) }) });
        const what = `email ${JSON.stringify(email)}`;
        if (answer.status !== 200) return assertRefusal(answer, what);
        // The URL carried the text as UTF-8 (a lone surrogate became U+FFFD); compare with what arrived.
        const sent = new URLSearchParams(new URLSearchParams({ email }).toString()).get('email') ?? '';
        const plain = new Set(everyone.filter((address) => address.includes(sent.toLowerCase())));
        for (const user of answer.body.users) assert.ok(plain.has(user.email), `${what} found ${user.email}`);
        if (CONTROL_CHARACTERS.test(sent)) assert.fail(`${what} was searched, not refused`);
      }),
      { numRuns: RUNS * 3 },
    );
  });

  it('through the admin API, any user, type, since, cursor and limit lists only matching events, or is refused', async () => {
    const everything = await service.ctx.events.list({ limit: PAGE_SIZE_MAX });
    const known = new Set(everything.events.map((event) => event.id));
    const param = (values: fc.Arbitrary<string>) => fc.option(values, { nil: undefined });
    const eventType = fc.oneof(anyText(), fc.constantFrom(...EVENT_TYPES));
    const digits = fc.oneof(anyText(), fc.nat().map(String), fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String));
    const cursor = fc.oneof(
      anyText(),
      fc.tuple(fc.nat(), anyText()).map(([at, id]) => encodeCursor(at, id)),
      fc.constantFrom(...everything.events.map((event) => encodeCursor(event.at, event.id))),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.record({ user: param(anyText()), type: param(eventType), since: param(digits), cursor: param(cursor), limit: param(digits) }),
        async (filters) => {
          const query = Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)) as Record<string, string>;
          const answer = await admin('/events', query);
          const what = JSON.stringify(query);
          if (answer.status !== 200) return assertRefusal(answer, what);
          assert.ok(answer.body.events.length <= Number(query.limit ?? PAGE_SIZE_MAX), what);
          for (const event of answer.body.events) {
            if (query.user !== undefined) assert.equal(event.userId, query.user, what);
            if (query.type !== undefined) assert.equal(event.type, query.type, what);
            if (query.since !== undefined) assert.ok(event.at >= Number(query.since), what);
            assert.ok(known.has(event.id) || event.at >= everything.events[0].at, `${what}: an event that exists`);
          }
        },
      ),
      { numRuns: RUNS * 3 },
    );
  });
});
