import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { ENVIRONMENT } from './config.js';
import { ConfigError } from './errors.js';

/**
 * `--config FILE` (or SERVICE_IDP_CONFIG): a JSON object whose keys are the settings' environment
 * variable names (`{ "SERVICE_IDP_PORT": 8080, "SMTP_URL": "smtp://…" }`), so a setting has one
 * name whichever way it is given and every message names it the same. Precedence: flags, then
 * the environment, then the file, then the defaults (docs/operations.md).
 *
 * Loaded by the CLI only when a file is named: a command without one never loads TypeBox.
 */

/** Read by loadConfig but not in the --help table (Twilio's further settings). */
const FURTHER_SETTINGS = ['TWILIO_AUTH_TOKEN', 'TWILIO_FROM', 'TWILIO_BASE_URL'] as const;
/**
 * Not in a file: the file's own name, and NODE_ENV, which also changes how the libraries
 * behave and so belongs to the process's environment.
 */
const ENVIRONMENT_ONLY = new Set(['SERVICE_IDP_CONFIG', 'NODE_ENV']);

export const FILE_SETTINGS: readonly string[] = [...Object.keys(ENVIRONMENT), ...FURTHER_SETTINGS].filter(
  (name) => !ENVIRONMENT_ONLY.has(name),
);

const Setting = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const ConfigFile = Type.Object(Object.fromEntries(FILE_SETTINGS.map((name) => [name, Type.Optional(Setting)])), {
  additionalProperties: false,
});

/** The file's settings as environment strings (true/false as 1/0), checked against the schema. */
export function readConfigFile(path: string): Record<string, string> {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`cannot read the configuration file ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`the configuration file ${file} is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ConfigError(`the configuration file ${file} must hold one JSON object of settings`);
  const unknown = Object.keys(parsed).find((name) => !FILE_SETTINGS.includes(name));
  if (unknown !== undefined)
    throw new ConfigError(
      ENVIRONMENT_ONLY.has(unknown)
        ? `${unknown} cannot be set in the configuration file ${file}: set it in the environment`
        : `unknown setting ${unknown} in the configuration file ${file} (the settings are the environment variables of --help)`,
    );
  if (!Value.Check(ConfigFile, parsed)) {
    const [first] = Value.Errors(ConfigFile, parsed);
    const name = first?.instancePath.replace(/^\//, '') ?? 'a setting';
    throw new ConfigError(`${name} in the configuration file ${file} must be a string, a number or true/false`);
  }
  return Object.fromEntries(
    Object.entries(parsed as Record<string, string | number | boolean>).map(([name, value]) => [
      name,
      typeof value === 'boolean' ? (value ? '1' : '0') : String(value),
    ]),
  );
}
