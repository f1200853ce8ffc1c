import { createOperatorStore } from '../admin/operator-store.js';
import { createOperators, type Operators } from '../admin/operators.js';
import type { EventLog } from '../events/service.js';
import type { FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { Db } from '../storage/schema.js';
import { type ConsoleService, createConsoleService } from './service.js';
import { createConsoleSessionStore } from './store.js';

/**
 * The operators and the console's sessions over one database, wired as context.ts wires the rest;
 * `consoleUrl`: the console's own listener's public URL, when it has one (config.console).
 */
export function openConsole(
  db: Db,
  deps: FirstPartyDeps & { events: EventLog },
  consoleUrl?: string,
): { operators: Operators; console: ConsoleService } {
  const operators = createOperators({ store: createOperatorStore(db), events: deps.events, now: deps.now });
  const consoleService = createConsoleService({ ...deps, operators, store: createConsoleSessionStore(db), consoleUrl });
  return { operators, console: consoleService };
}
