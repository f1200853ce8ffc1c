import { UpstreamPaths } from 'service-protocol';
import { createConnections } from '../../connections/service.js';
import { createConnectionStore } from '../../connections/store.js';
import { createSealer } from '../../crypto/seal.js';
import type { Db } from '../../storage/schema.js';
import { createUpstreamProvider } from './provider.js';
import { createUpstreamService, type UpstreamDeps } from './service.js';
import { createUpstreamStore } from './store.js';

/** What the composition hands over: the flows the upstream sign-in continues into, and the hosted look-up. */
export type UpstreamWiring = Omit<UpstreamDeps, 'connections' | 'provider' | 'store' | 'flowSealer' | 'tokenSealer' | 'ticketSealer'> & {
  /** Tests route the providers' real hosts to local servers. */
  fetch?: typeof fetch | undefined;
};

/** The connections and the upstream first factor over one database, wired as context.ts wires the rest. */
export function openUpstream(db: Db, serverSecret: Buffer, { fetch, ...deps }: UpstreamWiring) {
  const connections = createConnections({
    store: createConnectionStore(db),
    sealer: createSealer(serverSecret, 'connection-secret'),
    events: deps.events,
    now: deps.now,
  });
  const store = createUpstreamStore(db);
  const provider = createUpstreamProvider({
    redirectUri: `${deps.issuer}${UpstreamPaths.callback}`,
    now: deps.now,
    ...(fetch ? { fetch } : {}),
  });
  const upstream = createUpstreamService({
    ...deps,
    connections,
    provider,
    store,
    flowSealer: createSealer(serverSecret, 'upstream-flow'),
    tokenSealer: createSealer(serverSecret, 'upstream-tokens'),
    ticketSealer: createSealer(serverSecret, 'upstream-device'),
  });
  return { connections, upstream };
}
