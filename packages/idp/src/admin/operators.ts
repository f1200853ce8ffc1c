import { canonicalEmail, type OperatorRole } from 'service-protocol';
import { randomToken } from '../crypto/secrets.js';
import { PAGE_SIZE_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { keysetPage, type PageQuery } from '../storage/pagination.js';
import type { OperatorRecord, OperatorStore } from './operator-store.js';

export const OPERATOR_ROLES: readonly OperatorRole[] = ['viewer', 'admin'];

export interface Operators {
  /** Adds an operator (or changes the role of one with this address); recorded as `operator.added`. */
  add(input: { email: string; role: string }, actor: string): Promise<OperatorRecord>;
  list(): Promise<OperatorRecord[]>;
  /** A page of `list`, oldest first. */
  page(query: PageQuery): Promise<{ items: OperatorRecord[]; nextCursor: string | null }>;
  /** Removes an operator by id or address: every console session of theirs ends at once. */
  remove(key: string, actor: string): Promise<OperatorRecord>;
  /** The operator with this address, if any (the console checks it on every call). */
  findByEmail(email: string): Promise<OperatorRecord | undefined>;
  findById(id: string): Promise<OperatorRecord | undefined>;
}

/**
 * Who may enter the operator console (console/): an address and a role. A viewer reads; an
 * admin also acts. The CLI and the admin API share this service, so both refuse the same input
 * in the same words and record the same events.
 */
export function createOperators({ store, events, now }: { store: OperatorStore; events: EventLog; now: () => number }): Operators {
  return {
    async add(input, actor) {
      const email = canonicalEmail(input.email);
      if (email === null) throw new ServiceError('ERR_REQUEST_INVALID', 'An operator needs a valid email address.');
      if (!(OPERATOR_ROLES as readonly string[]).includes(input.role))
        throw new ServiceError('ERR_REQUEST_INVALID', 'The role is viewer or admin.');
      const role = input.role as OperatorRole;
      const operator = await store.upsert({ id: randomToken('op_', 12), email, role, createdAt: now(), addedBy: actor });
      await events.record({ type: 'operator.added', actor, detail: { operator: operator.email, role: operator.role } });
      return operator;
    },

    list: () => store.list(),
    page: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.page(after, limit)),

    async remove(key, actor) {
      const removed = await store.remove(canonicalEmail(key) ?? key, now());
      if (!removed) throw new ServiceError('ERR_NOT_FOUND', `No operator ${key}.`);
      await events.record({ type: 'operator.removed', actor, detail: { operator: removed.email, role: removed.role } });
      return removed;
    },

    findByEmail: (email) => store.findByEmail(email),
    findById: (id) => store.findById(id),
  };
}
