import { createPrivateKey } from 'node:crypto';
import { type AdminConnection, CONNECTION_PRESETS, type ConnectionPreset } from 'service-protocol';
import type { Sealer } from '../crypto/seal.js';
import { randomToken } from '../crypto/secrets.js';
import { CONNECTIONS_MAX } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { PRESETS } from './presets.js';
import type { ConnectionRecord, ConnectionStore } from './store.js';

/** What the operator gives to create a connection (CLI flags, admin API body). */
export interface ConnectionInput {
  preset: ConnectionPreset;
  /** Required for `oidc`; a preset fixes it. */
  issuer?: string;
  clientId: string;
  /** The client secret; for Apple, the PEM private key of the Sign in with Apple key. */
  clientSecret?: string;
  name?: string;
  scopes?: string[];
  clients?: string[];
  keepTokens?: boolean;
  appleTeamId?: string;
  appleKeyId?: string;
}

export type ConnectionChange = Partial<Omit<ConnectionInput, 'preset' | 'issuer'>>;

/** A connection with its secret opened, for the upstream sign-in alone (never listed, never logged). */
export interface OpenConnection extends ConnectionRecord {
  secret: string | undefined;
}

export interface Connections {
  create(input: ConnectionInput, actor: string): Promise<AdminConnection>;
  update(id: string, change: ConnectionChange, actor: string): Promise<AdminConnection>;
  delete(id: string, actor: string): Promise<void>;
  list(): Promise<AdminConnection[]>;
  get(id: string): Promise<AdminConnection>;
  /** The connection with its secret, for a sign-in; undefined when unknown. */
  open(id: string): Promise<OpenConnection | undefined>;
  /** The connections an application shows, as buttons. */
  forClient(clientId: string): Promise<{ id: string; name: string; preset: ConnectionPreset }[]>;
}

const invalid = (message: string) => new ServiceError('ERR_REQUEST_INVALID', message);
const notFound = () => new ServiceError('ERR_NOT_FOUND', 'No connection has this id.');

/** An issuer as OpenID Connect Discovery 1.0 (section 2) requires it: https, no query or fragment; http only on loopback. */
export function checkIssuer(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('The issuer is not an absolute URL.');
  }
  if (url.search || url.hash || url.username || url.password) throw invalid('The issuer must have no query, fragment or credentials.');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname)))
    throw invalid('The issuer must be https (http only on a loopback address, for development).');
  return raw;
}

/** 127.0.0.0/8, ::1 and localhost: where an http issuer is accepted (development and tests). */
export const isLoopback = (host: string) => host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

const CLIENT_ID = /^[\x21-\x7e]{1,300}$/;
const SCOPE = /^[\x21\x23-\x5b\x5d-\x7e]{1,100}$/;

export const toAdmin = (c: ConnectionRecord): AdminConnection => ({
  id: c.id,
  name: c.name,
  preset: c.preset,
  issuer: c.issuer,
  clientId: c.clientId,
  hasSecret: c.secretSealed !== null,
  scopes: c.scopes,
  clients: c.clients,
  keepTokens: c.keepTokens,
  appleTeamId: c.appleTeamId,
  appleKeyId: c.appleKeyId,
  createdAt: c.createdAt,
  updatedAt: c.updatedAt,
});

/**
 * The operator's connections to upstream identity providers, for the CLI and the admin API
 * alike (the same checks, the same messages). Secrets are sealed at rest (crypto/seal.ts,
 * purpose `connection-secret`) and never shown again; changes are recorded as events.
 */
export function createConnections({
  store,
  sealer,
  events,
  now,
}: {
  store: ConnectionStore;
  sealer: Sealer;
  events: EventLog;
  now: () => number;
}): Connections {
  function checked(c: ConnectionRecord, secret: string | undefined): ConnectionRecord {
    if (!c.name.trim() || c.name.length > 100) throw invalid('The name must be 1 to 100 characters.');
    if (!CLIENT_ID.test(c.clientId)) throw invalid('The client id must be 1 to 300 visible ASCII characters.');
    const bad = c.scopes.find((s) => !SCOPE.test(s));
    if (bad !== undefined || c.scopes.length > 20) throw invalid('A scope must be 1 to 100 visible characters, at most 20 of them.');
    if (PRESETS[c.preset].oidc && !c.scopes.includes('openid')) throw invalid('An OpenID Connect connection asks for the openid scope.');
    if (c.clients.some((id) => !/^[A-Za-z0-9_-]{1,100}$/.test(id))) throw invalid('A client id in clients is malformed.');
    if (c.preset === 'apple') {
      if (!c.appleTeamId || !c.appleKeyId) throw invalid('Apple needs its team id and key id (--apple-team-id, --apple-key-id).');
      if (secret !== undefined) {
        try {
          const key = createPrivateKey(secret);
          if (key.asymmetricKeyType !== 'ec') throw new Error('not EC');
        } catch {
          throw invalid('Apple needs the PEM private key (P-256) of its Sign in with Apple key as the client secret.');
        }
      }
    }
    if (secret !== undefined && (secret.length === 0 || secret.length > 10_000))
      throw invalid('The client secret must be 1 to 10000 characters.');
    return c;
  }

  async function find(id: string): Promise<ConnectionRecord> {
    const found = await store.find(id);
    if (!found) throw notFound();
    return found;
  }

  return {
    async create(input, actor) {
      if (!CONNECTION_PRESETS.includes(input.preset)) throw invalid(`The preset must be one of ${CONNECTION_PRESETS.join(', ')}.`);
      const preset = PRESETS[input.preset];
      const issuer = preset.issuer ?? input.issuer;
      if (issuer === undefined) throw invalid('A generic OpenID Connect connection needs its issuer.');
      if (preset.issuer !== undefined && input.issuer !== undefined && input.issuer !== preset.issuer)
        throw invalid(`The ${input.preset} preset's issuer is ${preset.issuer}.`);
      if ((await store.list()).length >= CONNECTIONS_MAX) throw invalid(`A service has at most ${CONNECTIONS_MAX} connections.`);
      if (!input.clientSecret && input.preset !== 'oidc') throw invalid(`The ${input.preset} preset needs a client secret.`);
      const at = now();
      const record = checked(
        {
          id: randomToken('con_', 12),
          name: input.name ?? preset.name,
          preset: input.preset,
          issuer: checkIssuer(issuer),
          clientId: input.clientId,
          secretSealed: input.clientSecret ? sealer.seal(input.clientSecret) : null,
          scopes: input.scopes ?? preset.scopes,
          clients: [...new Set(input.clients ?? [])],
          keepTokens: input.keepTokens ?? false,
          appleTeamId: input.appleTeamId ?? null,
          appleKeyId: input.appleKeyId ?? null,
          createdAt: at,
          updatedAt: at,
        },
        input.clientSecret,
      );
      await store.insert(record);
      await events.record({ type: 'connection.created', detail: { connection: record.id, preset: record.preset, actor } });
      return toAdmin(record);
    },

    async update(id, change, actor) {
      const current = await find(id);
      const next = checked(
        {
          ...current,
          ...(change.name !== undefined ? { name: change.name } : {}),
          ...(change.clientId !== undefined ? { clientId: change.clientId } : {}),
          ...(change.clientSecret !== undefined ? { secretSealed: sealer.seal(change.clientSecret) } : {}),
          ...(change.scopes !== undefined ? { scopes: change.scopes } : {}),
          ...(change.clients !== undefined ? { clients: [...new Set(change.clients)] } : {}),
          ...(change.keepTokens !== undefined ? { keepTokens: change.keepTokens } : {}),
          ...(change.appleTeamId !== undefined ? { appleTeamId: change.appleTeamId } : {}),
          ...(change.appleKeyId !== undefined ? { appleKeyId: change.appleKeyId } : {}),
          updatedAt: now(),
        },
        change.clientSecret,
      );
      await store.update(next);
      await events.record({ type: 'connection.updated', detail: { connection: id, actor } });
      return toAdmin(next);
    },

    async delete(id, actor) {
      if (!(await store.delete(id))) throw notFound();
      await events.record({ type: 'connection.deleted', detail: { connection: id, actor } });
    },

    list: async () => (await store.list()).map(toAdmin),
    get: async (id) => toAdmin(await find(id)),

    async open(id) {
      const found = await store.find(id);
      return found && { ...found, secret: found.secretSealed === null ? undefined : sealer.open(found.secretSealed) };
    },

    async forClient(clientId) {
      return (await store.list()).filter((c) => c.clients.includes(clientId)).map((c) => ({ id: c.id, name: c.name, preset: c.preset }));
    },
  };
}
