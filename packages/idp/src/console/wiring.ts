import type { AccountStore } from '../accounts/store.js';
import { createOperatorStore } from '../admin/operator-store.js';
import { createOperators, type Operators } from '../admin/operators.js';
import type { CodeService } from '../authorization-codes/service.js';
import type { ClientService } from '../clients/service.js';
import type { SecretHasher } from '../crypto/secrets.js';
import type { DeviceStore } from '../devices/store.js';
import type { EventLog } from '../events/service.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { Db } from '../storage/database.js';
import { type ConsoleService, createConsoleService } from './service.js';
import { createConsoleSessionStore } from './store.js';

/** The operators and the console's sessions over one database, wired as context.ts wires the rest. */
export function openConsole(
  db: Db,
  issuer: string,
  deviceIdleMs: number,
  deps: {
    clients: ClientService;
    codes: CodeService;
    accounts: AccountStore;
    devices: DeviceStore;
    passkeyStore: Pick<PasskeyStore, 'findActiveById'>;
    events: EventLog;
    hash: SecretHasher;
    now: () => number;
  },
): { operators: Operators; console: ConsoleService } {
  const { passkeyStore, ...rest } = deps;
  const operators = createOperators({ store: createOperatorStore(db), events: deps.events, now: deps.now });
  const consoleService = createConsoleService({
    ...rest,
    issuer,
    deviceIdleMs,
    passkeys: passkeyStore,
    operators,
    store: createConsoleSessionStore(db),
  });
  return { operators, console: consoleService };
}
