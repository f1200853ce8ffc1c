import type { Command } from './command.js';
import { cursor, table, time } from './format.js';

export const events: Command = {
  name: 'events',
  usage: `  service-idp events [--user ID|EMAIL] [--type TYPE] [--since 2026-01-31|24h|7d] [--limit 50] [--cursor CURSOR] [--json]
      The audit trail, newest first.
`,
  flags: ['user', 'type', 'since', 'limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, since, config }, io) {
    const { withContext } = await import('./open.js');
    const page = await withContext(config, async (ctx) => {
      const userId = values.user ? (await ctx.users.find(values.user)).id : undefined;
      return ctx.events.list({
        ...(userId ? { userId } : {}),
        ...(values.type ? { type: values.type } : {}),
        ...(since !== undefined ? { since } : {}),
        ...cursor(values.cursor),
        limit,
      });
    });
    if (values.json) io.out(`${JSON.stringify(page)}\n`);
    else if (page.events.length === 0) io.out('No events.\n');
    else
      io.out(
        `${table(
          ['TIME', 'TYPE', 'USER', 'CLIENT', 'DEVICE', 'IP', 'BY', 'DETAIL'],
          page.events.map((e) => [
            time(e.at),
            e.type,
            e.userId ?? '-',
            e.clientId ?? '-',
            e.deviceId ?? '-',
            e.ip ?? '-',
            e.actor ?? '-',
            e.detail
              ? Object.entries(e.detail)
                  .map(([k, v]) => `${k}=${v}`)
                  .join(' ')
              : '',
          ]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};
