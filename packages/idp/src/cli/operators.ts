import { type Command, UsageError } from './command.js';
import { cursor, table, time } from './format.js';
import type { Data } from './open.js';

/** The operators service (admin/operators.ts), its changes recorded in the audit log. */
async function operators(data: Data) {
  const [{ createOperators }, { createOperatorStore }, { eventLog }] = await Promise.all([
    import('../admin/operators.js'),
    import('../admin/operator-store.js'),
    import('./open.js'),
  ]);
  const { events } = await eventLog(data);
  return createOperators({ store: createOperatorStore(data.db), events, now: data.now });
}

const add: Command = {
  name: 'operators add',
  usage: `  service-idp operators add EMAIL [--role viewer|admin] [--json]
      Lets EMAIL into the operator console at /admin (default role: viewer, who reads; an admin
      also acts). They sign in there through the hosted sign-in, with a second factor or a
      passkey. Adding an existing operator changes their role.
`,
  flags: ['role', 'json'],
  async run({ operands: [email], values, config }, io) {
    if (!email) throw new UsageError('usage: service-idp operators add EMAIL [--role viewer|admin]');
    const role = values.role ?? 'viewer';
    if (role !== 'viewer' && role !== 'admin') throw new UsageError('--role is viewer or admin');
    const { withData } = await import('./open.js');
    const added = await withData(config, async (data) => (await operators(data)).add({ email, role }, 'cli'));
    if (values.json) io.out(`${JSON.stringify(added)}\n`);
    else io.out(`Operator ${added.email} (${added.role}) can sign in at ${config.console?.url ?? config.issuer}/admin\n`);
    return 0;
  },
};

const list: Command = {
  name: 'operators list',
  usage: `  service-idp operators list [--limit 50] [--cursor CURSOR] [--json]
      Oldest first; a full page ends with the --cursor of the next one.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData } = await import('./open.js');
    const page = await withData(config, async (data) => (await operators(data)).page({ ...cursor(values.cursor), limit }));
    const all = page.items;
    if (values.json)
      io.out(`${JSON.stringify({ operators: all, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/operators's shape
    else if (all.length === 0) io.out('No operators yet: service-idp operators add EMAIL --role admin\n');
    else
      io.out(
        `${table(
          ['OPERATOR ID', 'EMAIL', 'ROLE', 'ADDED', 'ADDED BY'],
          all.map((o) => [o.id, o.email, o.role, time(o.createdAt), o.addedBy]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const remove: Command = {
  name: 'operators remove',
  usage: `  service-idp operators remove ID|EMAIL
      The operator's console sessions end at once.
`,
  flags: [],
  async run({ operands: [key], config }, io) {
    if (!key) throw new UsageError('usage: service-idp operators remove ID|EMAIL');
    const { withData } = await import('./open.js');
    const removed = await withData(config, async (data) => (await operators(data)).remove(key, 'cli'));
    io.out(`Operator ${removed.email} removed.\n`);
    return 0;
  },
};

export const operatorCommands: Command[] = [add, list, remove];
