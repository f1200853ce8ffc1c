import { PKCE_CHALLENGE_PATTERN } from 'service-protocol';
import type { ClientRecord } from '../clients/store.js';
import { redirectUriMatches } from '../clients/uris.js';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH, RESOURCES_PER_REQUEST_MAX } from '../defaults.js';
import { RESPONSE_MODES, type ResponseMode } from './authorization-response.js';
import type { AuthorizationRequest } from './store.js';

/** RFC 6749 4.1.2.1 and OIDC Core 3.1.2.6 error codes the authorization endpoint redirects with. */
export type AuthorizeErrorCode =
  | 'invalid_request'
  | 'unauthorized_client'
  | 'unsupported_response_type'
  | 'invalid_scope'
  | 'login_required'
  | 'interaction_required'
  /** OIDC Core 3.1.2.6: prompt=none, and a third-party client needs the user's consent (oidc/consent.ts). */
  | 'consent_required'
  /** RFC 6749 4.1.2.1: the user denied the third-party client's request on the consent page. */
  | 'access_denied'
  | 'request_not_supported'
  | 'registration_not_supported'
  /** RFC 8707 2: a `resource` that is not an absolute URI or not a registered API. */
  | 'invalid_target';

/** What the authorization endpoint needs of the registered APIs (apis/): each one's identifier and permissions. */
export type FindApi = (identifier: string) => Promise<{ identifier: string; name: string; permissions: readonly string[] } | undefined>;

/** The outcome of checking a request: shown on our own page, or sent back to the client. */
export type CheckedRequest =
  /** No trustworthy redirect URI: RFC 6749 4.1.2.1 forbids redirecting; the user sees our page. */
  | { kind: 'page'; message: string }
  | {
      kind: 'redirect-error';
      redirectUri: string;
      state: string | null;
      /** How the error goes back: the request's response_mode when it named a supported one. */
      responseMode: ResponseMode;
      error: AuthorizeErrorCode;
      description: string;
    }
  | { kind: 'valid'; client: ClientRecord; request: AuthorizationRequest };

/**
 * OIDC Core 3.1.2.1 prompt values we accept. `consent` shows the consent page to the user of a
 * third-party client (clients.thirdParty, oidc/consent.ts) even when they granted everything
 * before; a first-party client's registration by an operator stands for the user's consent
 * (OIDC Core 11 asks for it before offline_access), so it is always satisfied there and shows
 * no page. `select_account` is refused (one account per browser session).
 */
/**
 * The scope value asking for one of the user's organizations, the user choosing (Keycloak's
 * `organization` scope): with no `organization` parameter, the hosted picker after the sign-in.
 */
export const ORGANIZATION_SCOPE = 'organization';

export const PROMPT_VALUES = ['none', 'login', 'consent'] as const;

type Params = Record<string, unknown>;

/**
 * Checks an authorization request (RFC 6749 4.1.1, OIDC Core 3.1.2.1/3.1.2.2), in the order
 * the RFC's error rules need: the client and its exact redirect URI first (an error there is
 * never redirected, so this endpoint is no open redirector), then everything else, whose
 * errors go back to that redirect URI with the state.
 */
export async function checkAuthorizeRequest(
  params: Params,
  findClient: (id: string) => Promise<ClientRecord | undefined>,
  /**
   * `pushed`: the parameters came from a pushed request (RFC 9126), checked at the push or taken by its request_uri.
   * `findApi`: the registered APIs a `resource` may name (none without it).
   */
  { pushed = false, findApi = async () => undefined }: { pushed?: boolean; findApi?: FindApi } = {},
): Promise<CheckedRequest> {
  // RFC 6749 3.1: a parameter sent twice is an error; for these two nobody can be told.
  const clientId = single(params.client_id);
  if (clientId === undefined || clientId === '') return { kind: 'page', message: 'The request names no client (client_id).' };
  const client = clientId.length <= 200 ? await findClient(clientId) : undefined;
  if (!client) return { kind: 'page', message: 'The application that sent you here is not registered with this service.' };
  const redirectUri = single(params.redirect_uri);
  // OIDC Core 3.1.2.1: redirect_uri is required; RFC 9700 2.1: compared by exact string match,
  // a public client's loopback IP literal on any port (RFC 8252 7.3, clients/uris.ts).
  if (
    redirectUri === undefined ||
    redirectUri.length > REDIRECT_URI_MAX_LENGTH ||
    !redirectUriMatches(client.redirectUris, redirectUri, client.type)
  ) {
    return { kind: 'page', message: `The return address is not one ${client.name} registered, so you were not sent back.` };
  }
  const state = single(params.state);
  if (state !== undefined && state.length > AUTHORIZE_PARAMETER_MAX_LENGTH) {
    return { kind: 'page', message: 'The request`s state is too long to return.' };
  }
  // Read first, so every later error goes back the way the client asked (OAuth 2.0 Multiple Response Type Encoding Practices 2.1).
  const mode = single(params.response_mode);
  const responseMode: ResponseMode = mode === 'form_post' ? 'form_post' : 'query';
  const fail = (error: AuthorizeErrorCode, description: string): CheckedRequest => ({
    kind: 'redirect-error',
    redirectUri,
    state: state ?? null,
    responseMode,
    error,
    description,
  });

  for (const [name, value] of Object.entries(params)) {
    // RFC 8707 2: resource is the one parameter that may be sent several times.
    if (Array.isArray(value) && name !== 'resource') return fail('invalid_request', `${name} is sent more than once.`);
    if (typeof value === 'string' && value.length > Math.max(AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH)) {
      return fail('invalid_request', `${name} is too long.`);
    }
  }
  const text = (name: string) => (typeof params[name] === 'string' ? (params[name] as string) : undefined);
  for (const name of ['nonce', 'login_hint']) {
    if ((text(name)?.length ?? 0) > AUTHORIZE_PARAMETER_MAX_LENGTH) return fail('invalid_request', `${name} is too long.`);
  }
  // OIDC Core 6: request objects and dynamic registration are not supported.
  if (text('request') !== undefined) return fail('request_not_supported', 'Request objects are not supported.');
  if (text('registration') !== undefined) return fail('registration_not_supported', 'registration is not supported.');
  // RFC 9126 5: a client registered to push its requests gets no code for one sent in the clear.
  if (client.requirePushedAuthorizationRequests && !pushed)
    return fail('invalid_request', 'This client must push its authorization requests (PAR).');
  if (text('response_type') !== 'code') return fail('unsupported_response_type', 'Only response_type=code is supported.');
  if (mode !== undefined && !(RESPONSE_MODES as readonly string[]).includes(mode)) {
    return fail('invalid_request', `response_mode may be ${RESPONSE_MODES.join(' or ')}.`);
  }
  // OIDC Core 3.1.2.1: openid is required; other scopes are ignored (RFC 6749 3.3 lets us grant
  // fewer). The grant is `openid email`, and offline_access (OIDC Core 11) when asked for: a
  // first-party client is registered by an operator, which stands for the consent OIDC Core 11
  // otherwise asks; a third-party client's user consents on the consent page (oidc/consent.ts).
  const scopes = (text('scope') ?? '').split(' ');
  if (!scopes.includes('openid')) return fail('invalid_scope', 'The scope must include openid.');
  const resources = await requestedApis(params.resource, findApi);
  if (typeof resources === 'string') return fail('invalid_target', resources);
  // The permissions asked for among those of the APIs named (issue 37): what the token endpoint
  // then grants is narrowed to the user's roles (token/api-access.ts); other values are ignored.
  const permissions = [...new Set(scopes.filter((s) => resources.some((api) => api.permissions.includes(s))))];
  // `organization` (docs/organizations.md, "The organization picker"): the user chooses one of
  // theirs after signing in. A first-party app's only: a third-party app's consent page names no
  // organization, so it is granted fewer (RFC 6749 3.3), as the parameter is refused below.
  const picksOrganization = scopes.includes(ORGANIZATION_SCOPE) && !client.thirdParty;
  const scope = [
    scopes.includes('offline_access') ? 'openid email offline_access' : 'openid email',
    ...(picksOrganization ? [ORGANIZATION_SCOPE] : []),
    ...permissions,
  ].join(' ');

  const codeChallenge = text('code_challenge');
  const method = text('code_challenge_method');
  if (codeChallenge === undefined) {
    if (method !== undefined) return fail('invalid_request', 'code_challenge_method without code_challenge.');
    // RFC 9700 2.1.1: a public client has no other way to bind the code to itself.
    if (client.type === 'public') return fail('invalid_request', 'A public client must send a PKCE code_challenge (S256).');
  } else {
    // RFC 7636 4.3 defaults the method to plain, which RFC 9700 2.1.1 rules out: S256 must be named.
    if (method !== 'S256') return fail('invalid_request', 'code_challenge_method must be S256.');
    if (!PKCE_CHALLENGE_PATTERN.test(codeChallenge)) return fail('invalid_request', 'code_challenge is not an S256 challenge.');
  }

  const prompt = text('prompt');
  if (prompt !== undefined) {
    const values = prompt.split(' ');
    if (!values.every((v) => (PROMPT_VALUES as readonly string[]).includes(v))) {
      return fail('invalid_request', `prompt may be ${PROMPT_VALUES.join(', ')}.`);
    }
    // OIDC Core 3.1.2.1: none with any other value is an error.
    if (values.includes('none') && values.length > 1) return fail('invalid_request', 'prompt=none cannot be combined.');
  }
  // organizations/: the organization the app asks tokens for. Whether the user is a member is
  // known only once they signed in (oidc/service.ts issueFor), so nothing here tells whether it exists.
  const organization = text('organization');
  if (organization !== undefined && !/^[A-Za-z0-9_-]{1,100}$/.test(organization))
    return fail('invalid_request', 'organization must be an organization id.');
  // The consent page does not name organizations yet: a third-party app would learn the user's
  // organization and roles without the user being asked (docs/organizations.md).
  if (organization !== undefined && client.thirdParty)
    return fail('invalid_request', 'A third-party application cannot ask for an organization.');
  const maxAge = text('max_age');
  if (maxAge !== undefined && !/^\d{1,10}$/.test(maxAge)) return fail('invalid_request', 'max_age must be a number of seconds.');

  return {
    kind: 'valid',
    client,
    request: {
      clientId: client.id,
      redirectUri,
      state: state ?? null,
      nonce: text('nonce') ?? null,
      codeChallenge: codeChallenge ?? null,
      prompt: prompt ?? null,
      maxAgeSeconds: maxAge === undefined ? null : Number(maxAge),
      loginHint: text('login_hint') ?? null,
      scope,
      responseMode,
      resources: resources.map((api) => api.identifier),
      organization: organization ?? null,
    },
  };
}

/**
 * RFC 8707 2: each `resource` an absolute URI without a fragment, naming a registered API (our
 * rule: the token's audience must be one an operator registered). The APIs, or why not.
 */
async function requestedApis(values: unknown, findApi: FindApi) {
  const sent = values === undefined ? [] : Array.isArray(values) ? values : [values];
  if (sent.length > RESOURCES_PER_REQUEST_MAX) return `At most ${RESOURCES_PER_REQUEST_MAX} resource values.`;
  const apis = [];
  for (const value of new Set(sent)) {
    if (typeof value !== 'string' || !isAbsoluteUriWithoutFragment(value)) return 'resource must be an absolute URI without a fragment.';
    const api = await findApi(value);
    if (!api) return 'resource names no registered API.';
    apis.push(api);
  }
  return apis;
}

function isAbsoluteUriWithoutFragment(value: string): boolean {
  if (value.length > REDIRECT_URI_MAX_LENGTH || value.includes('#')) return false;
  return URL.canParse(value);
}

function single(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
