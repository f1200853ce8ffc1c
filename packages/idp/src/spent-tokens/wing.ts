import { defineWing } from '../composition/wing.js';
import type { Db } from '../storage/schema.js';
import { createSpentTokenStore } from './store.js';

/** The one replay table: every single-use token, proof and ticket is spent here, atomically. */
export const spentTokensWing = defineWing('spent-tokens', ({ db }: { db: Db }) => {
  const spentTokens = createSpentTokenStore(db);
  return { services: { spentTokens }, sweep: (at: number) => spentTokens.deleteExpired(at) };
});
