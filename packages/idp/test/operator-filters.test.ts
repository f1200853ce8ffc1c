/**
 * Property-based tests of the operators' filters and cursors (users and events, shared by the
 * CLI and the admin API): any filter text finds exactly the addresses containing it, in any
 * case, with % _ and \ taken literally; any page size pages through everything once, in
 * order; any other cursor or event type is refused with ERR_REQUEST_INVALID, never a crash.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { PAGE_SIZE_MAX } from '../src/defaults.js';
import { ServiceError } from '../src/errors.js';
import { EVENT_TYPES } from '../src/events/types.js';
import { startTestService, type TestService } from './helpers.js';

const RUNS = 40;

describe('operator filters (property-based)', () => {
  let service: TestService;
  const tag = `pbt${process.pid}x${Date.now()}`;
  // Local parts with the characters LIKE treats specially, and mixed case in the filter only.
  const locals = ['ann', 'a_n', 'a%n', 'a\\n', 'bob.smith', 'b_b%', 'ann_%', "o'neil", 'zed'];
  const seeded: string[] = [];
  before(async () => {
    service = await startTestService();
    for (const [i, local] of locals.entries()) {
      const email = `${local}.${tag}@example.com`;
      await service.ctx.accounts.findOrCreate(email, 1_000_000 + i);
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
});
