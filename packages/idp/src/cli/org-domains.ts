import type { AdminOrganizationDomain } from 'service-protocol';
import { type Command, UsageError, type Values } from './command.js';
import { table } from './format.js';

const describe = (d: AdminOrganizationDomain) =>
  d.verified
    ? `verified (${d.verifiedBy})${d.connectionId ? `, signs in at ${d.connectionId}${d.allowEmailCode ? ' or by mailed code' : ''}` : ''}${d.joinRole ? `, new users join as ${d.joinRole}` : ''}`
    : `not verified: publish TXT ${d.record.name} "${d.record.value}", then service-idp orgs domains verify ${d.organizationId} ${d.domain}`;

const print = (domain: AdminOrganizationDomain, values: Values) =>
  values.json ? `${JSON.stringify(domain)}\n` : `${domain.domain} of ${domain.organizationId}: ${describe(domain)}.\n`;

const two = (operands: string[], usage: string): [string, string] => {
  const [org, domain] = operands;
  if (!org || !domain) throw new UsageError(`usage: ${usage}`);
  return [org, domain];
};

/** One `orgs domains` command acting on one claim through the whole service (its events, its DNS resolver). */
const onClaim = (
  word: string,
  usage: string,
  act: (ctx: import('../context.js').ServiceContext, org: string, domain: string, values: Values) => Promise<AdminOrganizationDomain>,
  flags: Command['flags'] = ['json'],
): Command => ({
  name: `orgs domains ${word}`,
  usage,
  flags,
  async run({ operands, values, config }, io) {
    const [org, domain] = two(operands, usage.trim().split('\n')[0] as string);
    const { withContext } = await import('./open.js');
    io.out(print(await withContext(config, (ctx) => act(ctx, org, domain, values)), values));
    return 0;
  },
});

const switchOf = (raw: string | undefined, yes: string, no: string, flag: string): boolean | undefined => {
  if (raw === undefined) return undefined;
  if (raw === yes) return true;
  if (raw === no) return false;
  throw new UsageError(`--${flag} is ${yes} or ${no}, not "${raw}"`);
};

const list: Command = {
  name: 'orgs domains list',
  usage: `  service-idp orgs domains list ORG_ID [--json]
      The domains an organization claims, verified or not, and how their addresses sign in.
`,
  flags: ['json'],
  async run({ operands: [org], values, config }, io) {
    if (!org) throw new UsageError('usage: service-idp orgs domains list ORG_ID');
    const { withContext } = await import('./open.js');
    const domains = await withContext(config, (ctx) => ctx.organizationDomains.list(org));
    if (values.json) io.out(`${JSON.stringify({ domains })}\n`);
    else if (domains.length === 0) io.out(`No domains yet: service-idp orgs domains add ${org} example.com\n`);
    else
      io.out(
        `${table(
          ['DOMAIN', 'STATUS'],
          domains.map((d) => [d.domain, describe(d)]),
        )}\n`,
      );
    return 0;
  },
};

const remove: Command = {
  name: 'orgs domains remove',
  usage: `  service-idp orgs domains remove ORG_ID DOMAIN
      Drop a claim: its addresses no longer go to the organization's provider nor join it.
`,
  flags: [],
  async run({ operands, config }, io) {
    const [org, domain] = two(operands, 'service-idp orgs domains remove ORG_ID DOMAIN');
    const { withContext } = await import('./open.js');
    await withContext(config, (ctx) => ctx.organizationDomains.remove(org, domain, 'cli'));
    io.out(`Removed ${domain} from ${org}.\n`);
    return 0;
  },
};

/** `service-idp orgs domains`: verified domains and each company's own sign-in (docs/organizations.md). */
export const orgDomains: readonly Command[] = [
  onClaim(
    'add',
    `  service-idp orgs domains add ORG_ID DOMAIN [--json]
      Claim a domain for an organization; prints the DNS TXT record that proves it.
`,
    (ctx, org, domain) => ctx.organizationDomains.claim(org, domain, 'cli'),
  ),
  list,
  onClaim(
    'verify',
    `  service-idp orgs domains verify ORG_ID DOMAIN [--json]
      Look the domain's TXT record up now (SERVICE_IDP_DNS_SERVERS, or the system's resolvers).
`,
    (ctx, org, domain) => ctx.organizationDomains.verify(org, domain, 'cli'),
  ),
  onClaim(
    'vouch',
    `  service-idp orgs domains vouch ORG_ID DOMAIN [--json]
      Mark the domain verified on your word, without DNS (you checked ownership another way).
`,
    (ctx, org, domain) => ctx.organizationDomains.vouch(org, domain, 'cli'),
  ),
  onClaim(
    'route',
    `  service-idp orgs domains route ORG_ID DOMAIN [--connection ID|none] [--email-code allow|refuse] [--join-role ROLE|none] [--json]
      How a verified domain's addresses sign in: at the organization's own provider (a connection,
      with no button and no mailed code unless --email-code allow), and whether new users join the
      organization with an organization role.
`,
    (ctx, org, domain, values) => {
      const connection = values.connection;
      const role = values['join-role'];
      const allowEmailCode = switchOf(values['email-code'], 'allow', 'refuse', 'email-code');
      return ctx.organizationDomains.update(
        org,
        domain,
        {
          ...(connection !== undefined ? { connectionId: connection === 'none' ? null : connection } : {}),
          ...(allowEmailCode !== undefined ? { allowEmailCode } : {}),
          ...(role !== undefined ? { joinRole: role === 'none' ? null : role } : {}),
        },
        'cli',
      );
    },
    ['connection', 'email-code', 'join-role', 'json'],
  ),
  remove,
];
