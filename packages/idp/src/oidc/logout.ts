import { compactVerify, createLocalJWKSet } from 'jose';
import { type ClientService, HOSTED_CLIENT_ID } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { AUTHORIZE_PARAMETER_MAX_LENGTH, REDIRECT_URI_MAX_LENGTH, TOKEN_PARAMETER_MAX_LENGTH } from '../defaults.js';
import type { EventLog } from '../events/service.js';
import { SIGNING_ALGS } from '../keys/algs.js';
import type { Keyring } from '../keys/keyring.js';
import { redirectTo } from './authorization-response.js';
import { type LogoutFrame, logoutFrames } from './frontchannel-logout.js';
import type { OidcService } from './service.js';

export interface LogoutDeps {
  issuer: string;
  clients: ClientService;
  keyring: Keyring;
  oidc: OidcService;
  events: EventLog;
  hash: SecretHasher;
}

/** What the end-session endpoint answers. */
export type LogoutOutcome =
  /** A request it cannot honour: our page, never a redirect (a 400). */
  | { kind: 'page'; message: string }
  /** Ask the user (OpenID Connect RP-Initiated Logout 1.0 2): a form that posts `fields` back. */
  | { kind: 'confirm'; fields: Record<string, string>; returnTo: string | null }
  /**
   * Signed out (or nothing to end): back to the app when it asked and registered where, else our
   * page; through our page when the session's apps are to be framed (Front-Channel Logout 1.0).
   */
  | { kind: 'done'; location: string | null; frames: LogoutFrame[] };

/** The parameters every route hands in: the query (GET) or the form (POST). */
type Params = Record<string, unknown>;

interface CheckedLogout {
  /** The ID token hint's subject and client, verified as ours (its expiry does not matter). */
  hint: { sub: string; clientId: string } | null;
  client: ClientRecord | null;
  redirectUri: string | null;
  state: string | null;
}

const PARAMETERS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'logout_hint', 'ui_locales', 'confirmation'];

export interface LogoutService {
  /**
   * A logout request (GET, or a POST form from the app): ends the session at once when a
   * verified hint names its user, asks the user otherwise.
   */
  request(params: Params, cookie: string | undefined): Promise<LogoutOutcome>;
  /**
   * The confirmation form posted from our own page (the route checked its Origin): the
   * session ends only when the form's value is the one derived from this browser's cookie.
   */
  confirm(params: Params, cookie: string | undefined): Promise<LogoutOutcome>;
}

/**
 * The end-session endpoint's logic (OpenID Connect RP-Initiated Logout 1.0). The session ends
 * at once only when an ID token hint we issued names the session's user; otherwise the user
 * confirms on our page, whose form carries a value derived from the session cookie (CSRF).
 * The browser goes back only to a post_logout_redirect_uri the client registered, compared
 * character for character, with `state`.
 */
export function createLogoutService({ issuer, clients, keyring, oidc, events, hash }: LogoutDeps): LogoutService {
  /** OpenID Connect RP-Initiated Logout 1.0 2: the OP validates it issued the hint; an expired one still names who. */
  async function verifyHint(hint: string): Promise<{ sub: string; clientId: string } | undefined> {
    try {
      const { payload, protectedHeader } = await compactVerify(hint, createLocalJWKSet(await keyring.jwks()), {
        algorithms: [...SIGNING_ALGS],
      });
      if (protectedHeader.typ !== 'JWT') return undefined;
      const claims = JSON.parse(new TextDecoder().decode(payload)) as Record<string, unknown>;
      if (claims.iss !== issuer || typeof claims.sub !== 'string' || typeof claims.aud !== 'string') return undefined;
      return { sub: claims.sub, clientId: claims.aud };
    } catch {
      return undefined;
    }
  }

  const confirmationOf = (cookie: string) => hash('logout-confirmation', cookie);

  async function check(params: Params): Promise<CheckedLogout | { kind: 'page'; message: string }> {
    const refuse = (message: string) => ({ kind: 'page' as const, message });
    for (const name of PARAMETERS) {
      const value = params[name];
      if (value !== undefined && typeof value !== 'string') return refuse(`${name} is sent more than once.`);
    }
    const text = (name: string) => (typeof params[name] === 'string' && params[name] !== '' ? (params[name] as string) : undefined);
    const rawHint = text('id_token_hint');
    if ((rawHint?.length ?? 0) > TOKEN_PARAMETER_MAX_LENGTH) return refuse('id_token_hint is too long.');
    const hint = rawHint === undefined ? null : ((await verifyHint(rawHint)) ?? null);
    if (rawHint !== undefined && !hint)
      return refuse('The app sent a sign-out request this service cannot verify. Go back to the app and sign out there again.');
    const clientId = text('client_id') ?? hint?.clientId;
    // RP-Initiated Logout 1.0 2: client_id and the hint's audience must agree.
    if (hint && clientId !== hint.clientId) return refuse('The sign-out request names two different apps.');
    const client = clientId && clientId !== HOSTED_CLIENT_ID && clientId.length <= 200 ? await clients.findById(clientId) : undefined;
    if (clientId !== undefined && !client) return refuse('The app that sent you here is not registered with this service.');
    const redirectUri = text('post_logout_redirect_uri');
    const state = text('state');
    if (redirectUri !== undefined) {
      // RP-Initiated Logout 1.0 3.1: exact match with a registered value, else no redirection at all.
      if (!client) return refuse('The sign-out request names no app (client_id or id_token_hint), so you were not sent back.');
      if (redirectUri.length > REDIRECT_URI_MAX_LENGTH || !client.postLogoutRedirectUris.includes(redirectUri))
        return refuse(`The return address is not one ${client.name} registered, so you were not sent back.`);
    }
    if ((state?.length ?? 0) > AUTHORIZE_PARAMETER_MAX_LENGTH) return refuse('The request`s state is too long to return.');
    return { hint, client: client ?? null, redirectUri: redirectUri ?? null, state: state ?? null };
  }

  const back = (checked: CheckedLogout) => (checked.redirectUri ? redirectTo(checked.redirectUri, { state: checked.state }) : null);

  /** Ends the session: the frames of its apps that registered a front-channel logout URI. */
  async function end(cookie: string, session: { userId: string; deviceId: string }, client: ClientRecord | null): Promise<LogoutFrame[]> {
    const ended = await oidc.endSession(cookie);
    await events.record({
      type: 'session.ended',
      userId: session.userId,
      deviceId: session.deviceId,
      ...(client ? { clientId: client.id } : {}),
      detail: { via: 'logout' },
    });
    return ended ? logoutFrames(ended.frontChannel, { sid: ended.sid, issuer, clients }) : [];
  }

  return {
    async request(params: Params, cookie: string | undefined): Promise<LogoutOutcome> {
      const checked = await check(params);
      if ('kind' in checked) return checked;
      const session = cookie ? await oidc.session(cookie) : undefined;
      if (!cookie || !session) return { kind: 'done', location: back(checked), frames: [] };
      if (checked.hint && checked.hint.sub === session.userId) {
        return { kind: 'done', location: back(checked), frames: await end(cookie, session, checked.client) };
      }
      const fields: Record<string, string> = { confirmation: confirmationOf(cookie) };
      if (checked.client) fields.client_id = checked.client.id;
      if (checked.redirectUri) fields.post_logout_redirect_uri = checked.redirectUri;
      if (checked.state) fields.state = checked.state;
      return { kind: 'confirm', fields, returnTo: checked.redirectUri };
    },

    async confirm(params: Params, cookie: string | undefined): Promise<LogoutOutcome> {
      const checked = await check({ ...params, id_token_hint: undefined });
      if ('kind' in checked) return checked;
      const session = cookie ? await oidc.session(cookie) : undefined;
      if (!cookie || !session) return { kind: 'done', location: back(checked), frames: [] };
      const confirmation = typeof params.confirmation === 'string' ? params.confirmation : '';
      if (!safeEqual(confirmation, confirmationOf(cookie)))
        return { kind: 'page', message: 'This sign-out request did not come from this service`s page. Nothing was changed.' };
      return { kind: 'done', location: back(checked), frames: await end(cookie, session, checked.client) };
    },
  };
}
