import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { Db } from '../storage/schema.js';
import { createCodeService } from './service.js';
import { createCodeStore } from './store.js';

/** The authorization codes every finished sign-in ends with, redeemed once at the token endpoint. */
export const authorizationCodesWing = defineWing(
  'authorization-codes',
  ({ db, hash, now }: { db: Db; hash: SecretHasher; now: () => number }) => {
    const store = createCodeStore(db);
    return { services: { codes: createCodeService({ store, hash, now }) }, sweep: (at: number) => store.deleteExpired(at) };
  },
);
