import type { Command } from './command.js';
import { UsageError } from './command.js';

/** The settings an operator may set, by their command-line name. */
const SETTINGS = ['product-name'] as const;

const set: Command = {
  name: 'settings set',
  usage: `  service-idp settings set product-name NAME [--json]
      What the hosted pages and mails call the service where no application is named
      (default: the issuer's host name). 1 to 100 printable characters. --json prints the
      settings as GET /admin/v1/settings answers them.
`,
  flags: ['json'],
  async run({ operands: [setting, value], values, config }, io) {
    if (!setting || !(SETTINGS as readonly string[]).includes(setting) || value === undefined)
      throw new UsageError(`usage: service-idp settings set ${SETTINGS.join('|')} VALUE`);
    const { withData, operations } = await import('./open.js');
    const name = await withData(config, async (data) => (await operations(data)).setProductName(value, 'cli'));
    io.out(values.json ? `${JSON.stringify({ productName: name })}\n` : `Product name: ${name}\n`);
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
    const productName = await withData(config, async (data) => (await brandingService(data)).productName());
    io.out(values.json ? `${JSON.stringify({ productName })}\n` : `product-name: ${productName}\n`);
    return 0;
  },
};

export const settings: Command[] = [set, show];
