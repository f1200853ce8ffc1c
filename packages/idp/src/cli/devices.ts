import { type Command, UsageError } from './command.js';
import { table, time } from './format.js';

const list: Command = {
  name: 'devices list',
  usage: `  service-idp devices list --user ID|EMAIL [--json]
      The user's devices for every client (remembered browsers and passkeys, with their
      kind; a synced passkey is marked), revoked and expired ones included.
`,
  flags: ['user', 'json'],
  async run({ values, config }, io) {
    if (!values.user) throw new UsageError('usage: service-idp devices list --user ID|EMAIL');
    const user = values.user;
    const [{ withContext }, { defaultDeviceName }] = await Promise.all([import('./open.js'), import('../devices/user-agent.js')]);
    const devices = await withContext(config, (ctx) => ctx.users.devices(user));
    if (values.json)
      io.out(`${JSON.stringify({ devices })}\n`); // GET /admin/v1/users/:id/devices's shape
    else if (devices.length === 0) io.out('This user has no devices.\n');
    else
      io.out(
        `${table(
          ['DEVICE ID', 'CLIENT ID', 'KIND', 'NAME', 'CREATED', 'LAST USED', 'STATUS'],
          devices.map((d) => [
            d.id,
            d.clientId,
            d.kind === 'passkey' ? `passkey${d.synced ? ' (synced)' : ''}` : 'browser',
            d.name ?? defaultDeviceName(d.browser, d.os),
            time(d.createdAt),
            time(d.lastUsedAt),
            d.removedAt === null ? 'active' : `revoked ${time(d.removedAt)}`,
          ]),
        )}\n`,
      );
    return 0;
  },
};

const revoke: Command = {
  name: 'devices revoke',
  usage: `  service-idp devices revoke DEVICE_ID
      The device's key (or the passkey) stops working on every node at once.
`,
  flags: [],
  async run({ operands: [deviceId], config }, io) {
    if (!deviceId) throw new UsageError('usage: service-idp devices revoke DEVICE_ID');
    const { withContext } = await import('./open.js');
    await withContext(config, (ctx) => ctx.users.revokeDevice(deviceId, 'cli'));
    io.out(`Device ${deviceId} revoked.\n`);
    return 0;
  },
};

export const devices: Command[] = [list, revoke];
