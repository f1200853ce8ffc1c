import { readFileSync } from 'node:fs';
import { type AdminConnection, CONNECTION_PRESETS, type ConnectionPreset } from 'service-protocol';
import type { ConnectionChange } from '../connections/service.js';
import { type Command, UsageError, type Values } from './command.js';
import { table, time } from './format.js';
import type { Data } from './open.js';

/** The connection service (connections/service.ts), wired as context.ts wires it. */
async function connectionService(data: Data) {
  const [{ createConnections }, { createConnectionStore }, { createSealer }, { eventLog }] = await Promise.all([
    import('../connections/service.js'),
    import('../connections/store.js'),
    import('../crypto/seal.js'),
    import('./open.js'),
  ]);
  const { events } = await eventLog(data);
  return createConnections({
    store: createConnectionStore(data.db),
    sealer: createSealer(data.serverSecret, 'connection-secret'),
    events,
    now: data.now,
  });
}

/** The linked identities (factors/upstream/identities.ts), with the audit log (identity.unlinked and its webhooks). */
async function identityService(data: Data) {
  const [{ createIdentities }, { createUpstreamStore }, { eventLog }] = await Promise.all([
    import('../factors/upstream/identities.js'),
    import('../factors/upstream/store.js'),
    import('./open.js'),
  ]);
  const { events } = await eventLog(data);
  return createIdentities({ store: createUpstreamStore(data.db), events });
}

const list = (raw: string | undefined) =>
  raw === undefined
    ? undefined
    : raw
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);

/** The secret from --client-secret-file (Apple's .p8 key, or a file holding the secret) or --client-secret. */
function secretOf(values: Values): string | undefined {
  if (values['client-secret-file']) return readFileSync(values['client-secret-file'], 'utf8').trim();
  return values['client-secret'];
}

function changeOf(values: Values): ConnectionChange {
  const secret = secretOf(values);
  const scopes = list(values.scopes);
  const clients = list(values.clients);
  return {
    ...(values.name !== undefined ? { name: values.name } : {}),
    ...(values['client-id'] !== undefined ? { clientId: values['client-id'] } : {}),
    ...(secret !== undefined ? { clientSecret: secret } : {}),
    ...(scopes ? { scopes } : {}),
    ...(clients ? { clients } : {}),
    ...(values['keep-tokens'] !== undefined ? { keepTokens: values['keep-tokens'] === 'on' } : {}),
    ...(values['apple-team-id'] !== undefined ? { appleTeamId: values['apple-team-id'] } : {}),
    ...(values['apple-key-id'] !== undefined ? { appleKeyId: values['apple-key-id'] } : {}),
  };
}

const describe = (c: AdminConnection) =>
  `Connection ${c.id} (${c.preset}, ${c.name}): issuer ${c.issuer}, client id ${c.clientId}, shown by ${c.clients.length ? c.clients.join(', ') : 'no application yet'}.\n`;

const CHANGE_FLAGS = [
  'name',
  'client-id',
  'client-secret',
  'client-secret-file',
  'scopes',
  'clients',
  'keep-tokens',
  'apple-team-id',
  'apple-key-id',
  'json',
] as const;

const create: Command = {
  name: 'connections create',
  usage: `  service-idp connections create --preset oidc|google|microsoft|apple|github --client-id ID
        [--upstream-issuer URL] [--client-secret S | --client-secret-file FILE] [--name TEXT]
        [--scopes a,b] [--clients CLIENT_ID,…] [--keep-tokens on|off]
        [--apple-team-id ID --apple-key-id ID] [--json]
      "Continue with …" at an upstream identity provider: any OpenID Connect provider by its
      issuer (oidc), or a preset. Register ISSUER/upstream/callback as the redirect URI at the
      provider. The secret is sealed at rest and never shown; Apple's is its .p8 key file.
      --clients names the applications that show the button. docs/operations.md, "Connections".
`,
  flags: ['preset', 'upstream-issuer', ...CHANGE_FLAGS],
  async run({ values, config }, io) {
    const preset = values.preset as ConnectionPreset | undefined;
    if (!preset || !CONNECTION_PRESETS.includes(preset) || !values['client-id'])
      throw new UsageError(`usage: service-idp connections create --preset ${CONNECTION_PRESETS.join('|')} --client-id ID …`);
    const { withData } = await import('./open.js');
    const made = await withData(config, async (data) =>
      (await connectionService(data)).create(
        {
          preset,
          clientId: values['client-id'] as string,
          ...(values['upstream-issuer'] !== undefined ? { issuer: values['upstream-issuer'] } : {}),
          ...changeOf(values),
        },
        'cli',
      ),
    );
    io.out(values.json ? `${JSON.stringify(made)}\n` : describe(made));
    return 0;
  },
};

const listCommand: Command = {
  name: 'connections list',
  usage: `  service-idp connections list [--json]
      Connections with their provider, client id and the applications that show them (never a secret).
`,
  flags: ['json'],
  async run({ values, config }, io) {
    const { withData } = await import('./open.js');
    const all = await withData(config, async (data) => (await connectionService(data)).list());
    if (values.json) io.out(`${JSON.stringify(all)}\n`);
    else if (all.length === 0) io.out('No connections yet: service-idp connections create --preset google --client-id ID …\n');
    else
      io.out(
        `${table(
          ['CONNECTION ID', 'PRESET', 'NAME', 'ISSUER', 'CLIENT ID', 'APPLICATIONS', 'KEEPS TOKENS', 'UPDATED'],
          all.map((c) => [
            c.id,
            c.preset,
            c.name,
            c.issuer,
            c.clientId,
            c.clients.join(',') || '-',
            c.keepTokens ? 'yes' : 'no',
            time(c.updatedAt),
          ]),
        )}\n`,
      );
    return 0;
  },
};

const update: Command = {
  name: 'connections update',
  usage: `  service-idp connections update CONNECTION_ID [--name …] [--client-id …] [--client-secret … |
        --client-secret-file …] [--scopes …] [--clients …] [--keep-tokens on|off] [--apple-team-id …]
        [--apple-key-id …] [--json]
      Changes what is given; --clients replaces the list of applications that show the button.
`,
  flags: CHANGE_FLAGS,
  async run({ values, operands: [id], config }, io) {
    if (!id) throw new UsageError('usage: service-idp connections update CONNECTION_ID [flags]');
    if (values['keep-tokens'] !== undefined && values['keep-tokens'] !== 'on' && values['keep-tokens'] !== 'off')
      throw new UsageError('--keep-tokens takes on or off');
    const { withData } = await import('./open.js');
    const changed = await withData(config, async (data) => (await connectionService(data)).update(id, changeOf(values), 'cli'));
    io.out(values.json ? `${JSON.stringify(changed)}\n` : describe(changed));
    return 0;
  },
};

const remove: Command = {
  name: 'connections delete',
  usage: `  service-idp connections delete CONNECTION_ID
      Removes the connection: its button goes; identities linked through it stay listed until unlinked.
`,
  flags: [],
  async run({ operands: [id], config }, io) {
    if (!id) throw new UsageError('usage: service-idp connections delete CONNECTION_ID');
    const { withData } = await import('./open.js');
    await withData(config, async (data) => (await connectionService(data)).delete(id, 'cli'));
    io.out(`Connection ${id} deleted.\n`);
    return 0;
  },
};

const identities: Command = {
  name: 'connections identities',
  usage: `  service-idp connections identities --user USER_ID [--json]
      The upstream identities linked to a user: connection, the provider's subject, the address it gave.
`,
  flags: ['user', 'json'],
  async run({ values, config }, io) {
    if (!values.user) throw new UsageError('usage: service-idp connections identities --user USER_ID');
    const { withData } = await import('./open.js');
    const found = await withData(config, async (data) => (await identityService(data)).list(values.user as string));
    // --json: GET /admin/v1/users/{id}/identities's shape, as every list command.
    if (values.json) io.out(`${JSON.stringify({ identities: found })}\n`);
    else if (found.length === 0) io.out('No linked identities.\n');
    else
      io.out(
        `${table(
          ['CONNECTION ID', 'SUBJECT', 'EMAIL', 'NAME', 'LINKED', 'LAST USED'],
          found.map((i) => [i.connectionId, i.subject, i.email ?? '-', i.name ?? '-', time(i.linkedAt), time(i.lastUsedAt)]),
        )}\n`,
      );
    return 0;
  },
};

const unlink: Command = {
  name: 'connections unlink',
  usage: `  service-idp connections unlink --user USER_ID --connection CONNECTION_ID --subject SUBJECT
      Unlinks one upstream identity from a user (they still sign in with their address's code).
`,
  flags: ['user', 'connection', 'subject'],
  async run({ values, config }, io) {
    const { user, connection, subject } = values;
    if (!user || !connection || !subject)
      throw new UsageError('usage: service-idp connections unlink --user USER_ID --connection CONNECTION_ID --subject SUBJECT');
    const { withData } = await import('./open.js');
    await withData(config, async (data) => (await identityService(data)).unlink(user, connection, subject, 'cli'));
    io.out(`Unlinked ${connection}/${subject} from ${user}.\n`);
    return 0;
  },
};

export const connections: readonly Command[] = [create, listCommand, update, remove, identities, unlink];
