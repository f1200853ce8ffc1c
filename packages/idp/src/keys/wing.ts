import { defineWing } from '../composition/wing.js';
import type { Sealer } from '../crypto/seal.js';
import type { Db } from '../storage/schema.js';
import { createKeyring, type SigningKeyGenerator } from './keyring.js';
import { createKeyStore } from './store.js';

/** The signing keys (sealed at rest) that sign ID tokens, access tokens and logout tokens, published at the JWKS. */
export const keysWing = defineWing(
  'keys',
  ({
    db,
    now,
    config,
    sealerFor,
    overrides,
  }: {
    db: Db;
    now: () => number;
    config: { keyCacheSeconds: number };
    sealerFor: (purpose: string) => Sealer;
    overrides: { generateSigningKey?: SigningKeyGenerator };
  }) => ({
    services: {
      keyring: createKeyring({
        store: createKeyStore(db),
        sealer: sealerFor('signing-key'),
        now,
        cacheSeconds: config.keyCacheSeconds,
        ...(overrides.generateSigningKey ? { generate: overrides.generateSigningKey } : {}),
      }),
    },
  }),
);
