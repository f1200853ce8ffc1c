import type { Command } from './command.js';

export const rotate: Command = {
  name: 'keys rotate',
  usage: `  service-idp keys rotate
      New signing keys (RS256, ES256, EdDSA); the JWKS serves old and new until tokens signed
      by the old ones expire.
`,
  flags: [],
  async run({ config }, io) {
    const { withData, operations } = await import('./open.js');
    const kid = await withData(config, async (data) => (await operations(data)).rotateSigningKey('cli'));
    io.out(
      `New signing key ${kid}. (That is the RS256 key; ES256 and EdDSA keys were renewed too.) Running nodes sign with them within 30 s; the old keys stay in the JWKS until their tokens expire.\n`,
    );
    return 0;
  },
};
