/** The client's configuration: from options or the environment, every key loaded and checked once. */
import type { KeyObject } from 'node:crypto';
import { Paths } from 'service-protocol';
import { DELEGATION_TIMEOUT_MS } from '../defaults.js';
import { DelegationConfigError } from './errors.js';
import { type DelegationKeyKind, loadDelegationKey } from './keys.js';
import type { DelegationClientOptions } from './options.js';

/** Environment variables read by {@link ServiceDelegationClient.fromEnv}. */
export const DELEGATION_ENV = {
  baseUrl: 'SERVICE_BASE_URL',
  apiKey: 'SERVICE_API_KEY',
  spSigningKey: 'SP_ED25519_PRIVATE_KEY_PEM',
  spEncryptionKey: 'SP_X25519_PRIVATE_KEY_PEM',
  idpVerifyKey: 'IDP_ED25519_PUBLIC_KEY_PEM',
  idpEncryptionKey: 'IDP_X25519_PUBLIC_KEY_PEM',
  spId: 'OAUTH_CLIENT_ID',
} as const;

/** The path of the delegation endpoint, under the base URL. */
export const DELEGATION_PATH = Paths.delegation;

type KeyOption = 'spSigningKey' | 'spEncryptionKey' | 'idpVerifyKey' | 'idpEncryptionKey';

const KEY_OPTIONS: [KeyOption, DelegationKeyKind][] = [
  ['spSigningKey', 'ed25519-private'],
  ['spEncryptionKey', 'x25519-private'],
  ['idpVerifyKey', 'ed25519-public'],
  ['idpEncryptionKey', 'x25519-public'],
];
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

export interface Config {
  keys: Record<KeyOption, KeyObject>;
  audience: string;
  endpoint: string;
  spId: string;
  apiKey: string | undefined;
  fetch: typeof fetch;
  timeoutMs: number;
}

/** The options fromEnv reads (`apiKey` only when set); throws naming the required variables that are not. */
export function optionsFromEnv(env: NodeJS.ProcessEnv): DelegationClientOptions {
  const read = (name: string) => {
    const value = env[name];
    return value === undefined || value.trim() === '' ? undefined : value;
  };
  const missing = Object.entries(DELEGATION_ENV)
    .filter(([option, name]) => option !== 'apiKey' && read(name) === undefined)
    .map(([, name]) => name);
  if (missing.length > 0) {
    throw new DelegationConfigError(
      `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not set (required by the delegation client)`,
      {
        option: missing[0],
      },
    );
  }
  const options: DelegationClientOptions = {
    baseUrl: read(DELEGATION_ENV.baseUrl) as string,
    spId: read(DELEGATION_ENV.spId) as string,
    spSigningKey: read(DELEGATION_ENV.spSigningKey) as string,
    spEncryptionKey: read(DELEGATION_ENV.spEncryptionKey) as string,
    idpVerifyKey: read(DELEGATION_ENV.idpVerifyKey) as string,
    idpEncryptionKey: read(DELEGATION_ENV.idpEncryptionKey) as string,
  };
  const apiKey = read(DELEGATION_ENV.apiKey);
  if (apiKey !== undefined) options.apiKey = apiKey;
  return options;
}

/** Checks options and loads the keys; `nameOf` names an option in errors (the option, or its variable). */
export function resolveConfig(options: DelegationClientOptions, nameOf: (option: keyof typeof DELEGATION_ENV) => string): Config {
  const keys = {} as Config['keys'];
  for (const [option, kind] of KEY_OPTIONS) {
    keys[option] = loadDelegationKey(options[option], kind, nameOf(option));
  }
  const spId = options.spId;
  if (typeof spId !== 'string' || spId.trim() === '') {
    throw new DelegationConfigError(`${nameOf('spId')} is missing (the SP id: its OAuth client ID)`, { option: nameOf('spId') });
  }
  const audience = baseUrl(options.baseUrl, nameOf('baseUrl'));
  const apiKey = options.apiKey === undefined || options.apiKey === '' ? undefined : options.apiKey;
  if (apiKey !== undefined && typeof apiKey !== 'string') {
    throw new DelegationConfigError(`${nameOf('apiKey')} must be a string`, { option: nameOf('apiKey') });
  }
  const timeoutMs = options.timeoutMs ?? DELEGATION_TIMEOUT_MS;
  if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
    throw new DelegationConfigError('timeoutMs must be a positive integer', { option: 'timeoutMs' });
  }
  const fetchFn = options.fetch ?? globalThis.fetch;
  if (typeof fetchFn !== 'function') throw new DelegationConfigError('fetch must be a function', { option: 'fetch' });
  return { keys, audience, endpoint: `${audience}${DELEGATION_PATH}`, spId, apiKey, fetch: fetchFn, timeoutMs };
}

/** DESIGN: all traffic over HTTPS; plain HTTP only to the local machine. Returns the audience. */
function baseUrl(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new DelegationConfigError(`${name} is missing (the service's issuer URL)`, { option: name });
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new DelegationConfigError(`${name} is not a valid URL`, { option: name });
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && LOOPBACK.has(url.hostname))) {
    throw new DelegationConfigError(`${name} must be an https URL (http is allowed only for localhost)`, { option: name });
  }
  if (url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '') {
    throw new DelegationConfigError(`${name} must not carry a query, a fragment or credentials`, { option: name });
  }
  return value.trim().replace(/\/+$/, '');
}
