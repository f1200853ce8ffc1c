import { randomToken, type SecretHasher } from '../crypto/secrets.js';
import { ADMIN_KEY_LAST_USED_RESOLUTION_SECONDS, ADMIN_KEY_NAME_MAX_LENGTH, PAGE_SIZE_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { keysetPage, type PageQuery } from '../storage/pagination.js';
import type { AdminKeyRecord, AdminKeyStore } from './key-store.js';

export interface AdminKeys {
  create(
    name: string,
    actor: string,
  ): Promise<
    AdminKeyRecord & {
      key: string;
    }
  >;
  list: () => Promise<AdminKeyRecord[]>;
  /** A page of `list`, oldest first. */
  page(query: PageQuery): Promise<{ items: AdminKeyRecord[]; nextCursor: string | null }>;
  revoke(id: string, actor: string): Promise<void>;
  /** The live key presented, or undefined (missing, unknown and revoked look the same). */
  authenticate(key: string | undefined): Promise<AdminKeyRecord | undefined>;
}

/**
 * Keys of the admin API. Each is shown once at creation and stored only as a keyed hash, like
 * client keys; it carries a name and its last use, and a revoked key stops working at once.
 */
export function createAdminKeys({
  store,
  hash,
  events,
  now,
}: {
  store: AdminKeyStore;
  hash: SecretHasher;
  events: EventLog;
  now: () => number;
}): AdminKeys {
  return {
    async create(name: string, actor: string): Promise<AdminKeyRecord & { key: string }> {
      const trimmed = name.trim();
      if (!trimmed || trimmed.length > ADMIN_KEY_NAME_MAX_LENGTH)
        throw new ServiceError('ERR_REQUEST_INVALID', `An admin key's name is 1 to ${ADMIN_KEY_NAME_MAX_LENGTH} characters.`);
      const record = { id: randomToken('adk_', 12), name: trimmed, createdAt: now() };
      const key = randomToken('admin_');
      await store.insert({ ...record, keyHash: hash('admin-key', key) });
      await events.record({ type: 'admin_key.created', actor, detail: { keyId: record.id } });
      return { ...record, lastUsedAt: null, revokedAt: null, key };
    },

    list: () => store.list(),
    page: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.page(after, limit)),

    async revoke(id: string, actor: string): Promise<void> {
      if (!(await store.revoke(id, now()))) throw new ServiceError('ERR_NOT_FOUND', `No live admin key ${id}.`);
      await events.record({ type: 'admin_key.revoked', actor, detail: { keyId: id } });
    },

    async authenticate(key: string | undefined): Promise<AdminKeyRecord | undefined> {
      if (!key) return undefined;
      // Looked up by its keyed hash: the database never compares anything an attacker chose.
      const record = await store.findLive(hash('admin-key', key));
      if (record && now() - (record.lastUsedAt ?? 0) >= ADMIN_KEY_LAST_USED_RESOLUTION_SECONDS * 1000) await store.touch(record.id, now());
      return record;
    },
  };
}
