import type { AdminSettings } from 'service-protocol';
import type { SettingsChange } from '../branding/service.js';
import type { Command } from './command.js';
import { UsageError } from './command.js';

/** The settings an operator may set, by their command-line name, and the field of the admin API's settings each one is. */
const SETTINGS = {
  'product-name': 'productName',
  'policy-url': 'policyUrl',
  'terms-url': 'termsUrl',
  'documentation-url': 'documentationUrl',
} as const satisfies Record<string, keyof SettingsChange>;

const isSetting = (name: string | undefined): name is keyof typeof SETTINGS => name !== undefined && Object.hasOwn(SETTINGS, name);

const shown = (settings: AdminSettings) =>
  Object.entries(SETTINGS)
    .map(([name, field]) => `${name}: ${settings[field] ?? '(none)'}\n`)
    .join('');

const set: Command = {
  name: 'settings set',
  usage: `  service-idp settings set product-name NAME [--json]
  service-idp settings set policy-url|terms-url|documentation-url URL [--json]
      product-name: what the hosted pages and mails call the service where no application is
      named (default: the issuer's host name). 1 to 100 printable characters.
      policy-url, terms-url, documentation-url: the service's privacy policy, terms of service
      and developers' documentation, published in discovery as op_policy_uri, op_tos_uri and
      service_documentation (an https URL; "" removes one).
      --json prints the settings as GET /admin/v1/settings answers them.
`,
  flags: ['json'],
  async run({ operands: [setting, value], values, config }, io) {
    if (!isSetting(setting) || value === undefined)
      throw new UsageError(`usage: service-idp settings set ${Object.keys(SETTINGS).join('|')} VALUE`);
    const field = SETTINGS[setting];
    const change: SettingsChange = field === 'productName' ? { productName: value } : { [field]: value === '' ? null : value };
    const { withData, operations } = await import('./open.js');
    const settings = await withData(config, async (data) => (await operations(data)).updateSettings(change, 'cli'));
    io.out(values.json ? `${JSON.stringify(settings)}\n` : shown(settings));
    return 0;
  },
};

const show: Command = {
  name: 'settings show',
  usage: `  service-idp settings show [--json]
      The service's settings.
`,
  flags: ['json'],
  async run({ values, config }, io) {
    const { withData, brandingService } = await import('./open.js');
    const settings = await withData(config, async (data) => (await brandingService(data)).settings());
    io.out(values.json ? `${JSON.stringify(settings)}\n` : shown(settings));
    return 0;
  },
};

export const settings: Command[] = [set, show];
