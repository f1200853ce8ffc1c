import { defineWing } from '../composition/wing.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { Db } from '../storage/schema.js';
import type { HostResolver } from '../webhooks/target.js';
import { createMetadataDocuments } from './metadata-document.js';
import { createClientService } from './service.js';
import { createClientStore } from './store.js';

/** The applications that sign users in (docs/protocol.md, "Clients"): registered ones, the service's own, and metadata documents' when on. */
export const clientsWing = defineWing(
  'clients',
  ({
    db,
    hash,
    now,
    config,
    overrides,
  }: {
    db: Db;
    hash: SecretHasher;
    now: () => number;
    config: { production: boolean; clientIdMetadataDocuments: boolean };
    overrides: { webhookResolve?: HostResolver; clientMetadataTimeoutMs?: number };
  }) => {
    // The one place URL client_ids are wired to their documents (clients/metadata-document.ts); off: they name no client.
    const metadataDocuments = config.clientIdMetadataDocuments
      ? createMetadataDocuments({
          production: config.production,
          now,
          ...(overrides.webhookResolve ? { resolve: overrides.webhookResolve } : {}),
          ...(overrides.clientMetadataTimeoutMs ? { timeoutMs: overrides.clientMetadataTimeoutMs } : {}),
        })
      : undefined;
    return {
      services: {
        clients: createClientService({ store: createClientStore(db), hash, now, ...(metadataDocuments ? { metadataDocuments } : {}) }),
      },
    };
  },
);
