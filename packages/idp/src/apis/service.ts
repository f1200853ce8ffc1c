import type { AdminApi, AdminGrant, AdminRole } from 'service-protocol';
import { randomToken } from '../crypto/secrets.js';
import {
  API_IDENTIFIER_MAX_LENGTH,
  API_NAME_MAX_LENGTH,
  API_PERMISSION_MAX_LENGTH,
  API_PERMISSIONS_MAX,
  APIS_MAX,
  PAGE_SIZE_MAX,
  ROLE_NAME_MAX_LENGTH,
  ROLE_PERMISSIONS_MAX,
  ROLES_MAX,
  USER_ROLES_MAX,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { CONTROL_CHARACTERS, keysetPage, type PageQuery } from '../storage/pagination.js';
import type { ApiStore } from './store.js';

/** An API resource: the audience of the access tokens issued for it, and the permissions it defines. */
export interface Api {
  /** An absolute https URI or a urn (RFC 8707 `resource`, the token's `aud`), matched as an exact string. */
  identifier: string;
  name: string;
  /** Scope tokens such as `read:notes`, sorted. */
  permissions: string[];
  /** RFC 7662 4: the client the API's resource server authenticates as to introspect its tokens, or null. */
  resourceServerClientId: string | null;
  /** Its access tokens also name the user's roles that grant any of its permissions (`roles`). */
  rolesInToken: boolean;
}

/**
 * What the token code asks of the APIs and roles (docs/authorization.md): the wing's service
 * `apiAuthorization`, which later wings take as a need.
 */
export interface ApiAuthorization {
  /** The API with this identifier (exact string), or undefined. */
  findApi(identifier: string): Promise<Api | undefined>;
  /** The permissions the user's roles grant on the API, each once, sorted (none for an unknown user or API). */
  userPermissions(userId: string, apiIdentifier: string): Promise<string[]>;
  /** The names of the roles the user holds, sorted. */
  userRoles(userId: string): Promise<string[]>;
  /** The names of the user's roles that grant any permission of the API, sorted (its tokens' `roles` claim). */
  userRolesFor(userId: string, apiIdentifier: string): Promise<string[]>;
  /** The permissions granted to a machine client on the API (client_credentials), sorted. */
  clientPermissions(clientId: string, apiIdentifier: string): Promise<string[]>;
  /** What a machine client may get, by API then permission. */
  clientGrants(clientId: string): Promise<AdminGrant[]>;
}

/** What an operator gives to register an API (CLI flags, admin API body). */
export interface ApiInput {
  identifier: string;
  name: string;
  permissions?: string[];
  /** A confidential or machine client's id (cli_…): its resource server's, which may introspect the API's tokens. */
  resourceServerClientId?: string | null;
  /** Its access tokens carry a `roles` claim. Default false. */
  rolesInToken?: boolean;
}

/** What an operator changes on an API (the identifier never changes). */
export interface ApiChange {
  name?: string;
  permissions?: string[];
  /** null: no client may introspect the API's tokens but the one each was issued to. */
  resourceServerClientId?: string | null;
  rolesInToken?: boolean;
}

/** What an operator gives to make a role. */
export interface RoleInput {
  name: string;
  permissions?: AdminGrant[];
}

/** The operator's side (CLI, admin API, console): every change checked here and recorded as an event with its actor. */
export interface Apis extends ApiAuthorization {
  createApi(input: ApiInput, actor: string): Promise<AdminApi>;
  /** By id (api_…) or identifier; ERR_NOT_FOUND when unknown. */
  getApi(key: string): Promise<AdminApi>;
  pageApis(query: PageQuery): Promise<{ items: AdminApi[]; nextCursor: string | null }>;
  /** Renames it and/or replaces its permissions: a permission removed leaves every role that granted it. */
  updateApi(key: string, change: ApiChange, actor: string): Promise<AdminApi>;
  /** Deletes it: its permissions leave every role. */
  deleteApi(key: string, actor: string): Promise<void>;
  createRole(input: RoleInput, actor: string): Promise<AdminRole>;
  /** By id (role_…) or name; ERR_NOT_FOUND when unknown. */
  getRole(key: string): Promise<AdminRole>;
  pageRoles(query: PageQuery): Promise<{ items: AdminRole[]; nextCursor: string | null }>;
  /** Renames it and/or replaces the permissions it grants. */
  updateRole(key: string, change: { name?: string; permissions?: AdminGrant[] }, actor: string): Promise<AdminRole>;
  /** Deletes it: every user holding it loses it. */
  deleteRole(key: string, actor: string): Promise<void>;
  /** The roles a user holds, sorted by name; ERR_NOT_FOUND for an unknown user id. */
  rolesOfUser(userId: string): Promise<AdminRole[]>;
  /** Gives the user (by id) the role (by id or name); holding it already changes nothing. */
  assignRole(userId: string, roleKey: string, actor: string): Promise<AdminRole>;
  /** Takes the role from the user; ERR_NOT_FOUND when they do not hold it. */
  unassignRole(userId: string, roleKey: string, actor: string): Promise<void>;
  /** Replaces what a machine client (by id; the caller checks it is one) may get with client_credentials. */
  grantClient(clientId: string, grants: AdminGrant[], actor: string): Promise<AdminGrant[]>;
}

const invalid = (message: string) => new ServiceError('ERR_REQUEST_INVALID', message);

/**
 * A permission: a scope token (RFC 6749 3.3: printable ASCII, no space, `"` or `\`) without `,`
 * or `=`, which the CLI uses to write lists and grants (`IDENTIFIER=read:notes,write:notes`).
 */
const PERMISSION = new RegExp(`^[\\x21\\x23-\\x2b\\x2d-\\x3c\\x3e-\\x5b\\x5d-\\x7e]{1,${API_PERMISSION_MAX_LENGTH}}$`);
/** A role's name: letters, digits and `.` `_` `:` `-`, starting with a letter or digit (it may travel in a token and a URL path). */
export const ROLE_NAME_PATTERN = `^[A-Za-z0-9][A-Za-z0-9._:-]{0,${ROLE_NAME_MAX_LENGTH - 1}}$`;
const ROLE_NAME = new RegExp(ROLE_NAME_PATTERN);
/** A URN (RFC 8141): a namespace of 2 to 32 letters, digits or hyphens, then printable ASCII without `?` or `#` (no q-, r- or f-component). */
const URN = /^urn:[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]:[\x21\x22\x24-\x3e\x40-\x7e]+$/i;

/** Loopback hosts, where an API identifier may be http: a resource server on the developer's or agent's own machine (an MCP server on localhost). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * An API identifier: an absolute https URI (http on a loopback host) with a host and no query,
 * fragment or credentials (RFC 8707 2: a resource has no fragment and should have no query), or
 * a urn; printable ASCII. Kept as written: tokens name it, and `resource` matches it, as an
 * exact string.
 */
export function checkApiIdentifier(raw: string): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > API_IDENTIFIER_MAX_LENGTH)
    throw invalid(`An API identifier is an absolute URI of 1 to ${API_IDENTIFIER_MAX_LENGTH} characters.`);
  if (!/^[\x21-\x7e]+$/.test(raw)) throw invalid('An API identifier is printable ASCII, without spaces.');
  if (/^urn:/i.test(raw)) {
    if (!URN.test(raw)) throw invalid('The API identifier is not a valid urn (urn:NAMESPACE:NAME, without ? or #).');
    return raw;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('An API identifier is an absolute https URI (https://api.example.com) or a urn (urn:example:notes).');
  }
  if (!url.hostname || !(url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname))))
    throw invalid(
      'An API identifier is an absolute https URI (https://api.example.com; http only on localhost, 127.0.0.1 or [::1]) or a urn (urn:example:notes).',
    );
  if (raw.includes('#') || raw.includes('?') || url.username || url.password)
    throw invalid('An API identifier has no query, fragment or credentials (RFC 8707).');
  return raw;
}

function checkName(raw: string, what: string): string {
  const name = typeof raw === 'string' ? raw.trim() : '';
  if (name.length === 0 || name.length > API_NAME_MAX_LENGTH || CONTROL_CHARACTERS.test(name))
    throw invalid(`${what} name is 1 to ${API_NAME_MAX_LENGTH} characters, without control characters.`);
  return name;
}

/** The permissions, each once and sorted, or ERR_REQUEST_INVALID naming the first bad one. */
export function checkPermissions(raw: readonly string[]): string[] {
  const names = [...new Set(raw)];
  if (names.length > API_PERMISSIONS_MAX) throw invalid(`An API defines at most ${API_PERMISSIONS_MAX} permissions.`);
  for (const name of names)
    if (typeof name !== 'string' || !PERMISSION.test(name))
      throw invalid(
        `The permission "${String(name).slice(0, 50)}" is not a scope token: 1 to ${API_PERMISSION_MAX_LENGTH} printable ASCII characters, without spaces, quotes, backslashes, commas or "=".`,
      );
  return names.sort();
}

/** A client id as the clients wing makes them (cli_…) or a built-in one: letters, digits, `_` and `-`. */
function checkClientId(raw: string | null | undefined): string | null | undefined {
  if (raw === undefined || raw === null) return raw;
  if (typeof raw !== 'string' || !/^[A-Za-z0-9_-]{1,100}$/.test(raw)) throw invalid('A client id is 1 to 100 letters, digits, "_" or "-".');
  return raw;
}

const noResourceServerClient = (clientId: string) =>
  invalid(
    `No confidential or machine client ${clientId}: a resource server introspects as a client that authenticates (service-idp clients create --machine).`,
  );

function checkRoleName(raw: string): string {
  if (typeof raw !== 'string' || !ROLE_NAME.test(raw))
    throw invalid(`A role name is 1 to ${ROLE_NAME_MAX_LENGTH} letters, digits, ".", "_", ":" or "-", starting with a letter or digit.`);
  if (raw.startsWith('role_')) throw invalid('A role name may not start with "role_" (role ids do).');
  return raw;
}

function checkGrants(raw: readonly AdminGrant[]): AdminGrant[] {
  const seen = new Map<string, AdminGrant>();
  for (const grant of raw) {
    if (typeof grant?.api !== 'string' || typeof grant.permission !== 'string') throw invalid('A grant names an API and a permission.');
    seen.set(`${grant.api} ${grant.permission}`, { api: grant.api, permission: grant.permission });
  }
  if (seen.size > ROLE_PERMISSIONS_MAX) throw invalid(`A role grants at most ${ROLE_PERMISSIONS_MAX} permissions.`);
  return [...seen.values()];
}

const missingGrants = (missing: AdminGrant[]) =>
  invalid(
    `Not a permission of a registered API: ${missing
      .slice(0, 5)
      .map((grant) => `${grant.api.slice(0, API_IDENTIFIER_MAX_LENGTH)} ${grant.permission.slice(0, API_PERMISSION_MAX_LENGTH)}`)
      .join(', ')}${missing.length > 5 ? ', …' : ''}. A role grants only permissions its APIs define (service-idp apis list).`,
  );

/**
 * APIs, roles and the roles users hold (docs/authorization.md). The CLI, the admin API and the
 * console share it, so they refuse the same input in the same words and record the same events.
 */
export function createApis({ store, events, now }: { store: ApiStore; events: EventLog; now: () => number }): Apis {
  const apiNotFound = (key: string) => new ServiceError('ERR_NOT_FOUND', `No API ${key.slice(0, API_IDENTIFIER_MAX_LENGTH)}.`);
  const roleNotFound = (key: string) => new ServiceError('ERR_NOT_FOUND', `No role ${key.slice(0, ROLE_NAME_MAX_LENGTH)}.`);
  const userNotFound = (id: string) => new ServiceError('ERR_NOT_FOUND', `No user ${id.slice(0, 100)}.`);

  async function getApi(key: string): Promise<AdminApi> {
    const api = key.startsWith('api_') ? await store.findApi({ id: key }) : await store.findApi({ identifier: key });
    if (!api) throw apiNotFound(key);
    return api;
  }

  async function getRole(key: string): Promise<AdminRole> {
    const role = key.startsWith('role_') ? await store.findRole({ id: key }) : await store.findRole({ name: key });
    if (!role) throw roleNotFound(key);
    return role;
  }

  return {
    async findApi(identifier) {
      const api = await store.findApi({ identifier });
      return api && { ...api, permissions: [...api.permissions] };
    },
    userPermissions: (userId, apiIdentifier) => store.userPermissions(userId, apiIdentifier),
    userRoles: (userId) => store.userRoleNames(userId),
    userRolesFor: (userId, apiIdentifier) => store.userRoleNamesFor(userId, apiIdentifier),

    async createApi(input, actor) {
      const identifier = checkApiIdentifier(input.identifier);
      const name = checkName(input.name, 'An API');
      const permissions = checkPermissions(input.permissions ?? []);
      const resourceServerClientId = checkClientId(input.resourceServerClientId) ?? null;
      if ((await store.countApis()) >= APIS_MAX) throw invalid(`This service has ${APIS_MAX} APIs, the most it keeps.`);
      const id = randomToken('api_', 12);
      const rolesInToken = input.rolesInToken === true;
      const made = await store.insertApi({ id, identifier, name, permissions, resourceServerClientId, rolesInToken, at: now() });
      if (made === 'taken') throw invalid(`An API with the identifier ${identifier} exists already.`);
      if (made === 'no client') throw noResourceServerClient(resourceServerClientId as string);
      await events.record({
        type: 'api.created',
        actor,
        detail: {
          apiId: id,
          identifier,
          permissions: permissions.join(','),
          ...(resourceServerClientId ? { resourceServerClientId } : {}),
          ...(rolesInToken ? { rolesInToken: 'yes' } : {}),
        },
      });
      return getApi(id);
    },

    getApi,
    pageApis: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.pageApis(after, limit)),

    async updateApi(key, change, actor) {
      const name = change.name === undefined ? undefined : checkName(change.name, 'An API');
      const permissions = change.permissions === undefined ? undefined : checkPermissions(change.permissions);
      const resourceServerClientId = checkClientId(change.resourceServerClientId);
      const { id, resourceServerClientId: before } = await getApi(key);
      const updated = await store.updateApi(
        id,
        {
          ...(name !== undefined ? { name } : {}),
          ...(permissions ? { permissions } : {}),
          ...(resourceServerClientId !== undefined ? { resourceServerClientId } : {}),
          ...(change.rolesInToken !== undefined ? { rolesInToken: change.rolesInToken } : {}),
        },
        now(),
      );
      if (!updated) throw apiNotFound(key);
      if (updated === 'no client') throw noResourceServerClient(resourceServerClientId as string);
      const { api, added, removed, rolesChanged } = updated;
      await events.record({
        type: 'api.updated',
        actor,
        detail: {
          apiId: api.id,
          identifier: api.identifier,
          ...(name !== undefined ? { name } : {}),
          ...(added.length > 0 ? { permissionsAdded: added.join(',') } : {}),
          ...(removed.length > 0 ? { permissionsRemoved: removed.join(','), rolesChanged } : {}),
          ...(api.resourceServerClientId !== before ? { resourceServerClientId: api.resourceServerClientId ?? '' } : {}),
          ...(change.rolesInToken !== undefined ? { rolesInToken: change.rolesInToken ? 'yes' : 'no' } : {}),
        },
      });
      return api;
    },

    async deleteApi(key, actor) {
      const { id } = await getApi(key);
      const deleted = await store.deleteApi(id);
      if (!deleted) throw apiNotFound(key);
      await events.record({
        type: 'api.deleted',
        actor,
        detail: { apiId: id, identifier: deleted.api.identifier, rolesChanged: deleted.rolesChanged },
      });
    },

    clientPermissions: (clientId, apiIdentifier) => store.clientPermissions(clientId, apiIdentifier),
    clientGrants: (clientId) => store.clientGrants(clientId),

    async grantClient(clientId, raw, actor) {
      const granted = await store.setClientGrants(clientId, checkGrants(raw));
      if ('missing' in granted) throw missingGrants(granted.missing);
      await events.record({ type: 'client.permissions_granted', actor, clientId, detail: { permissions: granted.length } });
      return granted;
    },

    async createRole(input, actor) {
      const name = checkRoleName(input.name);
      const grants = checkGrants(input.permissions ?? []);
      if ((await store.countRoles()) >= ROLES_MAX) throw invalid(`This service has ${ROLES_MAX} roles, the most it keeps.`);
      const made = await store.insertRole({ id: randomToken('role_', 12), name, grants, at: now() });
      if (made === 'taken') throw invalid(`A role named ${name} exists already.`);
      if ('missing' in made) throw missingGrants(made.missing);
      await events.record({
        type: 'role.created',
        actor,
        detail: { roleId: made.id, role: made.name, permissions: made.permissions.length },
      });
      return made;
    },

    getRole,
    pageRoles: (query) => keysetPage(query, PAGE_SIZE_MAX, (after, limit) => store.pageRoles(after, limit)),

    async updateRole(key, change, actor) {
      const name = change.name === undefined ? undefined : checkRoleName(change.name);
      const grants = change.permissions === undefined ? undefined : checkGrants(change.permissions);
      const { id } = await getRole(key);
      const updated = await store.updateRole(id, { ...(name !== undefined ? { name } : {}), ...(grants ? { grants } : {}) }, now());
      if (updated === undefined) throw roleNotFound(key);
      if (updated === 'taken') throw invalid(`A role named ${name} exists already.`);
      if ('missing' in updated) throw missingGrants(updated.missing);
      const { before, role } = updated;
      await events.record({
        type: 'role.updated',
        actor,
        detail: {
          roleId: role.id,
          role: role.name,
          ...(before.name !== role.name ? { previousName: before.name } : {}),
          ...(grants ? { permissions: role.permissions.length } : {}),
        },
      });
      return role;
    },

    async deleteRole(key, actor) {
      const { id } = await getRole(key);
      const deleted = await store.deleteRole(id);
      if (!deleted) throw roleNotFound(key);
      await events.record({ type: 'role.deleted', actor, detail: { roleId: id, role: deleted.role.name, holders: deleted.holders } });
    },

    async rolesOfUser(userId) {
      if (!(await store.userExists(userId))) throw userNotFound(userId);
      return store.rolesOf(userId);
    },

    async assignRole(userId, roleKey, actor) {
      const role = await getRole(roleKey);
      const outcome = await store.assign(userId, role.id, now(), actor, USER_ROLES_MAX);
      if (outcome === 'no user') throw userNotFound(userId);
      if (outcome === 'no role') throw roleNotFound(roleKey);
      if (outcome === 'too many') throw invalid(`A user holds at most ${USER_ROLES_MAX} roles.`);
      if (outcome === 'assigned')
        await events.record({ type: 'role.assigned', userId, actor, detail: { roleId: role.id, role: role.name } });
      return role;
    },

    async unassignRole(userId, roleKey, actor) {
      const role = await getRole(roleKey);
      if (!(await store.unassign(userId, role.id)))
        throw new ServiceError('ERR_NOT_FOUND', `The user does not hold the role ${role.name}, or there is no such user.`);
      await events.record({ type: 'role.unassigned', userId, actor, detail: { roleId: role.id, role: role.name } });
    },
  };
}
