import { canonicalEmail } from 'service-protocol';
import type { ServiceContext } from '../context.js';
import { type Command, type CommandArgs, type Io, UsageError } from './command.js';
import { cursor, sinceTime, table, time } from './format.js';

/** A users command: the ID|EMAIL it names (checked before the database is opened), then the whole context. */
function onUser(
  name: string,
  usage: string,
  flags: Command['flags'],
  run: (ctx: ServiceContext, subject: string, args: CommandArgs, io: Io) => Promise<void>,
): Command {
  return {
    name,
    usage,
    flags,
    async run(args, io) {
      const [subject] = args.operands;
      if (!subject) throw new UsageError(`usage: service-idp ${name} ID|EMAIL`);
      const { withContext } = await import('./open.js');
      await withContext(args.config, (ctx) => run(ctx, subject, args, io));
      return 0;
    },
  };
}

const resetMfa: Command = {
  name: 'users reset-mfa',
  usage: `  service-idp users reset-mfa EMAIL
      Recovery for a user who lost their second factor and recovery codes: removes both (and
      every remember_me), mails the user a notice and prints what was removed. Verify who asks
      before running it.
`,
  flags: [],
  async run({ operands: [address], config }, io) {
    const { withContext } = await import('./open.js');
    return withContext(config, async (ctx) => {
      const email = canonicalEmail(address ?? '');
      if (email === null) throw new UsageError('usage: service-idp users reset-mfa EMAIL (a valid address)');
      const removed = await ctx.mfa.resetByOperator(email, 'cli');
      io.out(
        removed
          ? `MFA (${removed}) removed for ${email}; the user was told by mail. They can enroll again at their next new-device sign-in.\n`
          : `${email} has no MFA method: nothing changed.\n`,
      );
      return 0;
    });
  },
};

const recoveryCodes: Command = {
  name: 'users recovery-codes',
  usage: `  service-idp users recovery-codes ID|EMAIL
      Makes a new set of recovery codes for a user with MFA and prints it once (the old set
      stops working; the user is told by mail). Verify who asks, and hand the codes over privately.
`,
  flags: [],
  async run({ operands: [subject], config }, io) {
    const { withContext } = await import('./open.js');
    return withContext(config, async (ctx) => {
      const codes = await ctx.users.regenerateRecoveryCodes(subject ?? '', 'cli');
      io.out(`New recovery codes (shown once; the earlier ones no longer work):\n${codes.join('\n')}\n`);
      return 0;
    });
  },
};

const list: Command = {
  name: 'users list',
  usage: `  service-idp users list [--email TEXT] [--created-since WHEN] [--created-before WHEN] [--limit 50] [--cursor CURSOR] [--json]
      Users, oldest first; --email keeps addresses containing TEXT; --created-since and
      --created-before keep users created from WHEN on and before WHEN (a date such as
      2026-01-31 or 2026-01-31T12:00:00Z, or a duration back from now: 90m, 24h, 7d). A full
      page ends with the --cursor of the next one.
`,
  flags: ['email', 'created-since', 'created-before', 'limit', 'cursor', 'json'],
  paged: true,
  async run({ values, limit, config }, io) {
    const createdSince = sinceTime(values['created-since'], Date.now(), '--created-since');
    const createdBefore = sinceTime(values['created-before'], Date.now(), '--created-before');
    const { withContext } = await import('./open.js');
    const page = await withContext(config, (ctx) =>
      ctx.users.list({
        ...(values.email ? { email: values.email } : {}),
        ...(createdSince !== undefined ? { createdSince } : {}),
        ...(createdBefore !== undefined ? { createdBefore } : {}),
        ...cursor(values.cursor),
        limit,
      }),
    );
    if (values.json) io.out(`${JSON.stringify(page)}\n`);
    else if (page.users.length === 0) io.out(values.email ? `No user's address contains "${values.email}".\n` : 'No users yet.\n');
    else
      io.out(
        `${table(
          ['USER ID', 'EMAIL', 'CREATED', 'STATUS'],
          page.users.map((u) => [u.id, u.email, time(u.createdAt), u.disabledAt === null ? 'active' : `disabled ${time(u.disabledAt)}`]),
        )}\n${page.nextCursor ? `More: --cursor ${page.nextCursor}\n` : ''}`,
      );
    return 0;
  },
};

const show = onUser(
  'users show',
  `  service-idp users show ID|EMAIL [--json]
      The account, its devices, MFA method (no secret) and the clients it signed in to.
`,
  ['json'],
  async (ctx, subject, { values }, io) => {
    const shown = await ctx.users.show(subject);
    if (values.json) {
      io.out(`${JSON.stringify(shown)}\n`);
      return;
    }
    const active = shown.devices.filter((d) => d.removedAt === null);
    const lines = [
      `User ${shown.id}`,
      `  email:    ${shown.email}`,
      `  created:  ${time(shown.createdAt)}`,
      `  status:   ${shown.disabledAt === null ? 'active' : `disabled since ${time(shown.disabledAt)}`}`,
      ...(shown.externalId === null ? [] : [`  external: ${shown.externalId}`]),
      `  MFA:      ${shown.mfa ? `${shown.mfa.method}${shown.mfa.phone ? ` ${shown.mfa.phone}` : ''} since ${time(shown.mfa.confirmedAt)}` : 'none'}`,
      `  recovery: ${shown.recoveryCodes ? `${shown.recoveryCodes.remaining} of ${shown.recoveryCodes.total} codes unused, made ${time(shown.recoveryCodes.createdAt)}` : 'no codes'}`,
      `  devices:  ${active.length} active, ${shown.devices.length} in all, of which ${active.filter((d) => d.kind === 'passkey').length} active passkeys (service-idp devices list --user ${shown.id})`,
      `  clients:  ${shown.clientSignIns.map((c) => `${c.clientName ?? c.clientId} (${c.clientId})`).join(', ') || 'none yet'}`,
    ];
    io.out(`${lines.join('\n')}\n`);
  },
);

const disabling = (name: 'users disable' | 'users enable', usage: string) =>
  onUser(name, usage, [], async (ctx, subject, _args, io) => {
    const changed = name === 'users disable' ? await ctx.users.disable(subject, 'cli') : await ctx.users.enable(subject, 'cli');
    io.out(`User ${changed.id} (${changed.email}) ${changed.disabledAt === null ? 'enabled' : 'disabled'}.\n`);
  });

const disable = disabling('users disable', '  service-idp users disable ID|EMAIL\n');

const enable = disabling(
  'users enable',
  `  service-idp users enable ID|EMAIL
      A disabled user cannot sign in anywhere (no code is sent; answers look like any other)
      and no token is issued for them; enabling restores the account as it was.
`,
);

const update = onUser(
  'users update',
  `  service-idp users update ID|EMAIL --external-id ID [--json]
      Sets the id a provisioning system (SCIM) knows the user by; "" clears it. One user per id.
`,
  ['external-id', 'json'],
  async (ctx, subject, { values }, io) => {
    const externalId = values['external-id'];
    if (externalId === undefined) throw new UsageError('usage: service-idp users update ID|EMAIL --external-id ID (or "" to clear it)');
    const changed = await ctx.users.setExternalId(subject, externalId === '' ? null : externalId, 'cli');
    io.out(
      values.json
        ? `${JSON.stringify(changed)}\n`
        : `User ${changed.id} (${changed.email}): external id ${changed.externalId ?? 'cleared'}.\n`,
    );
  },
);

const remove = onUser(
  'users delete',
  `  service-idp users delete ID|EMAIL
      Delete the user and every row about them in one transaction; an event without personal
      data records that a deletion happened. Cannot be undone.
`,
  [],
  async (ctx, subject, _args, io) => {
    const found = await ctx.users.find(subject);
    await ctx.users.delete(found.id, 'cli');
    io.out(`User ${found.id} deleted with every row about them.\n`);
  },
);

const exported = onUser(
  'users export',
  `  service-idp users export ID|EMAIL
      Everything held about the user, as JSON: account, devices, MFA method without secrets,
      client sign-ins, events.
`,
  [],
  async (ctx, subject, _args, io) => io.out(`${JSON.stringify(await ctx.users.export(subject), null, 2)}\n`),
);

export const users: Command[] = [resetMfa, recoveryCodes, list, show, update, disable, enable, remove, exported];
