import type { ClientRecord } from '../clients/store.js';
import type { FindApi } from './authorize-request.js';
import type { ConsentGrant } from './consent-store.js';
import type { AuthorizationRequest } from './store.js';

/** The hosted consent page (GET shows it, POST answers it). */
export const CONSENT_PATH = '/signin/consent';

/** The OIDC scope values a consent covers (authorize-request.ts grants no others). */
const OIDC_VALUES = ['openid', 'email', 'offline_access'];

/** One thing the consent page lists, in the words the page gives it. */
export type ConsentItem = { kind: 'email' } | { kind: 'offline' } | { kind: 'permission'; apiName: string; permission: string };

/**
 * What a request asks of the user, as a grant (what Allow records) and as the page's list: the
 * email address (openid email, always), staying signed in (offline_access), and each permission
 * of each API named by `resource` that the request's scope asks for.
 */
export async function askedBy(
  request: Pick<AuthorizationRequest, 'scope' | 'resources'>,
  findApi: FindApi,
): Promise<{ grant: ConsentGrant; items: ConsentItem[] }> {
  const values = request.scope.split(' ');
  const scope = OIDC_VALUES.filter((value) => values.includes(value));
  const items: ConsentItem[] = [{ kind: 'email' }];
  if (scope.includes('offline_access')) items.push({ kind: 'offline' });
  const permissions: Array<[string, string]> = [];
  for (const identifier of request.resources) {
    const api = await findApi(identifier);
    if (!api) continue;
    for (const permission of values.filter((value) => api.permissions.includes(value))) {
      permissions.push([api.identifier, permission]);
      items.push({ kind: 'permission', apiName: api.name, permission });
    }
  }
  return { grant: { scope, permissions }, items };
}

/**
 * Whether the user must see the consent page (docs/authorization.md, "Consent"): only for a
 * third-party client, when the app asks anything not already granted to it by this user (the
 * first sign-in always: nothing is granted yet), or when it sends prompt=consent. A client known
 * by its metadata document always: whoever controls that URL now may not be who the user allowed.
 */
export function consentNeeded(
  client: Pick<ClientRecord, 'thirdParty' | 'metadataDocument'>,
  request: Pick<AuthorizationRequest, 'prompt'>,
  asked: ConsentGrant,
  granted: ConsentGrant | undefined,
): boolean {
  if (!client.thirdParty) return false;
  if (client.metadataDocument) return true;
  if (request.prompt?.split(' ').includes('consent')) return true;
  if (!granted) return true;
  const pairs = new Set(granted.permissions.map(([api, permission]) => `${api} ${permission}`));
  return (
    asked.scope.some((value) => !granted.scope.includes(value)) ||
    asked.permissions.some(([api, permission]) => !pairs.has(`${api} ${permission}`))
  );
}
