import { createOperatorStore } from '../admin/operator-store.js';
import { createOperators } from '../admin/operators.js';
import { defineWing } from '../composition/wing.js';
import type { EventLog } from '../events/service.js';
import type { FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { Db } from '../storage/schema.js';
import { createConsoleService } from './service.js';
import { createConsoleSessionStore } from './store.js';

/**
 * The operators and the console's sessions (docs/operations.md, "The operator console"). Its
 * routes go where the console is served, the main listener or its own (app.ts decides).
 */
export const consoleWing = defineWing(
  'console',
  ({
    db,
    config,
    firstParty,
    events,
  }: {
    db: Db;
    /** `console.url`: the console's own listener's public URL, when it has one. */
    config: { console?: { url: string } | undefined };
    firstParty: FirstPartyDeps;
    events: EventLog;
  }) => {
    const operators = createOperators({ store: createOperatorStore(db), events, now: firstParty.now });
    const consoleService = createConsoleService({
      ...firstParty,
      events,
      operators,
      store: createConsoleSessionStore(db),
      consoleUrl: config.console?.url,
    });
    return { services: { operators, console: consoleService }, sweep: (at: number) => consoleService.sweep(at) };
  },
);
