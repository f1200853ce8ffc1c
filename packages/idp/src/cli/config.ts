import type { Command } from './command.js';

export const configCheck: Command = {
  name: 'config check',
  usage: `  service-idp config check [--config FILE]
      Reads the configuration as start would (flags, environment, --config file, defaults),
      prints the effective settings as JSON with passwords, tokens and secrets hidden, and
      exits 0; a bad setting is one line and exit 2. Opens no database.
`,
  flags: [],
  data: 'none',
  async run({ config }, io) {
    const [{ redactedConfig }, { configWarnings }] = await Promise.all([import('../config-file.js'), import('../config.js')]);
    for (const warning of configWarnings(config)) io.err(`service-idp: warning: ${warning}\n`);
    io.out(`${JSON.stringify(redactedConfig(config), null, 2)}\n`);
    return 0;
  },
};
