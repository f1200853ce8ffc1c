import { ADMIN_PREFIX } from '../admin/prefix.js';
import { type Command, UsageError } from './command.js';
import { cursor, table, time } from './format.js';
import type { Data } from './open.js';

/** The admin key service (admin/keys.ts), its changes recorded in the audit log. */
async function adminKeys(data: Data) {
  const [{ createAdminKeys }, { createAdminKeyStore }, { eventLog }] = await Promise.all([
    import('../admin/keys.js'),
    import('../admin/key-store.js'),
    import('./open.js'),
  ]);
  const { events } = await eventLog(data);
  return createAdminKeys({ store: createAdminKeyStore(data.db), hash: data.hash, events, now: data.now });
}

const create: Command = {
  name: 'admin-keys create',
  usage: `  service-idp admin-keys create --name NAME [--json]
      A key for the admin API (${ADMIN_PREFIX}, Authorization: Bearer KEY). Shown once; only a
      keyed hash is stored.
`,
  flags: ['name', 'json'],
  async run({ values, config }, io) {
    const name = values.name;
    if (!name) throw new UsageError('usage: service-idp admin-keys create --name NAME');
    const { withData } = await import('./open.js');
    const made = await withData(config, async (data) => (await adminKeys(data)).create(name, 'cli'));
    if (values.json) io.out(`${JSON.stringify(made)}\n`);
    else
      io.out(
        `Admin key ${made.id} (${made.name}) created. It is shown once; store it now.\n  key: ${made.key}\nUse it as: Authorization: Bearer KEY on ${ADMIN_PREFIX}/…\n`,
      );
    return 0;
  },
};

const list: Command = {
  name: 'admin-keys list',
  usage: `  service-idp admin-keys list [--limit 50] [--cursor CURSOR] [--json]
      Names, creation and last-use times; never the keys. Oldest first; a full page ends with
      the --cursor of the next one.
`,
  flags: ['limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const { withData } = await import('./open.js');
    const page = await withData(config, async (data) => (await adminKeys(data)).page({ ...cursor(values.cursor), limit }));
    const keys = page.items;
    if (values.json)
      io.out(`${JSON.stringify({ adminKeys: keys, nextCursor: page.nextCursor })}\n`); // GET /admin/v1/admin-keys's shape
    else if (keys.length === 0) io.out('No admin keys yet: service-idp admin-keys create --name NAME\n');
    else
      io.out(
        `${table(
          ['KEY ID', 'NAME', 'CREATED', 'LAST USED', 'STATUS'],
          keys.map((k) => [
            k.id,
            k.name,
            time(k.createdAt),
            time(k.lastUsedAt),
            k.revokedAt === null ? 'live' : `revoked ${time(k.revokedAt)}`,
          ]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const revoke: Command = {
  name: 'admin-keys revoke',
  usage: `  service-idp admin-keys revoke KEY_ID
      The key stops working at once, on every node.
`,
  flags: [],
  async run({ operands: [keyId], config }, io) {
    if (!keyId) throw new UsageError('usage: service-idp admin-keys revoke KEY_ID');
    const { withData } = await import('./open.js');
    await withData(config, async (data) => (await adminKeys(data)).revoke(keyId, 'cli'));
    io.out(`Admin key ${keyId} revoked.\n`);
    return 0;
  },
};

export const adminKeyCommands: Command[] = [create, list, revoke];
