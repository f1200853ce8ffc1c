import { type DevicePublicJwk, normalizeEmail, OTP_PATTERN } from 'service-protocol';
import type { ClientService } from '../../clients/service.js';
import type { ClientRecord } from '../../clients/store.js';
import type { Connections, OpenConnection } from '../../connections/service.js';
import type { Sealer } from '../../crypto/seal.js';
import { randomToken, type SecretHasher, safeEqual } from '../../crypto/secrets.js';
import { OTP_MAX_ATTEMPTS, UPSTREAM_FLOW_TTL_SECONDS, UPSTREAM_LINK_TTL_SECONDS, UPSTREAM_START_PER_IP } from '../../defaults.js';
import type { DeviceStore } from '../../devices/store.js';
import { ServiceError } from '../../errors.js';
import type { EventLog } from '../../events/service.js';
import { domainOfAddress } from '../../organization-domains/dns-proof.js';
import type { DomainRouting } from '../../organization-domains/service.js';
import type { OtpService } from '../../otp/service.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import type { SignInPipeline } from '../../sign-in/pipeline.js';
import type { SpentTokenStore } from '../../spent-tokens/store.js';
import type { Throttle } from '../../throttle/service.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import { createContinuation, type SignedInResult, type UpstreamResult } from './continue.js';
import { upstreamFirst, upstreamLinkedFirst } from './factor.js';
import { deviceOf, type Flow, openFlow, pendingDevice, random, sealFlow } from './flow.js';
import { createIdentities, type Identities } from './identities.js';
import type { UpstreamIdentity, UpstreamProvider } from './provider.js';
import type { LinkedIdentity, UpstreamStore } from './store.js';

export interface UpstreamDeps {
  issuer: string;
  connections: Pick<Connections, 'open'>;
  clients: Pick<ClientService, 'authenticateBrowser'>;
  /**
   * The hosted pages: the hosted client as it acts for this browser's live pending request (the
   * app's name and MFA policy), and the app's id; ERR_SESSION_INVALID when there is none, or when
   * `binding` is not the request's (undefined: not asked again, at the callback, whose flow
   * cookie was only set after the start checked it).
   */
  hostedFor(requestId: string, binding: string | undefined): Promise<{ client: ClientRecord; appClientId: string }>;
  clientById(id: string): Promise<ClientRecord | undefined>;
  provider: UpstreamProvider;
  store: UpstreamStore;
  enabledUsers: EnabledUserStore;
  mfa: Pick<MfaStep, 'methodOf'>;
  pipeline: SignInPipeline;
  otp: OtpService;
  events: EventLog;
  spent: SpentTokenStore;
  throttle: Throttle;
  /** Seals the flow cookie (purpose 'upstream-flow'). */
  flowSealer: Sealer;
  /** Seals kept provider tokens (purpose 'upstream-tokens'). */
  tokenSealer: Sealer;
  /** Seals the device ticket of an application's page (purpose 'upstream-device', continue.ts). */
  ticketSealer: Sealer;
  hash: SecretHasher;
  now: () => number;
  /** The user's devices: a page's key already registered to the user is used again, not registered twice. */
  devices: Pick<DeviceStore, 'list' | 'findActive'>;
  deviceIdleMs: number;
  /** Organizations' verified domains routed to their own provider (organization-domains/): what such a connection may vouch for. */
  routing: Pick<DomainRouting, 'domainsOf'>;
}

export interface StartInput {
  connection: string;
  key: string;
  returnTo: string;
  state: string;
  codeChallenge: string;
  request?: string;
  /** The hosted pages: the page's device key to register (flow.ts deviceOf), and the User-Agent naming it. */
  deviceKey?: string;
  userAgent?: string;
  /** Applications: the page finishes the sign-in with its device key (DEVICE_KEY_NEEDED, continue.ts). */
  rememberDevice?: boolean;
}

/** A page's device key as the link and device steps receive it, with the User-Agent naming it. */
export type PageDevice = { jwk: DevicePublicJwk; userAgent?: string | undefined };

/** Where the browser goes next, and the flow cookie to set (or clear: ''). */
export type Navigation = { location: string; cookie?: string };

export interface UpstreamService extends Identities {
  /** GET /upstream/start: checks the client, its return URL and the connection; the provider's URL and the flow cookie. */
  start(input: StartInput, binding: string | undefined, ip: string | undefined): Promise<Navigation>;
  /** The provider's answer: checked, the identity resolved, the sign-in continued; the page's return URL with the result. */
  callback(params: URLSearchParams, flowCookie: string | undefined, ip: string): Promise<Navigation>;
  /**
   * POST /v1/upstream/link: the emailed code that proves the existing account; then the sign-in
   * goes on. A device key sent with it is registered as after the emailed code.
   */
  confirmLink(client: ClientRecord, link: string, otp: string, device?: PageDevice): Promise<SignedInResult>;
  /** POST /v1/upstream/device: the page that asked to remember the browser finishes the sign-in with its key (continue.ts). */
  finishWithDevice(client: ClientRecord, ticket: string, device: PageDevice): Promise<SignedInResult>;
  /** The hosted pages: the app whose pending request (this browser's) the page serves, for its buttons. */
  hostedApp(requestId: string | undefined, binding: string | undefined): Promise<string>;
}

const refused = (message = 'The sign-in with this provider could not be completed. Try again.') =>
  new ServiceError('ERR_UPSTREAM_REFUSED', message);
const expired = () => new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired. Go back to the app and start again.');

/** `return_to#status=…&state=…&…`: the result in the fragment, never in a query a server logs or a Referer carries. */
export function withResult(returnTo: string, pageState: string, result: UpstreamResult): string {
  const url = new URL(returnTo);
  url.hash = new URLSearchParams({ ...result, state: pageState } as Record<string, string>).toString();
  return url.href;
}

/**
 * An upstream identity provider as a first factor (amr `fed`, RFC 8176): the browser goes to
 * the provider with state, nonce and PKCE bound to it (flow.ts), comes back to the callback,
 * and the identity is resolved by (connection, subject). A new identity with a provider-verified
 * address no account has makes the account; one whose address an account has is linked only
 * after that account's emailed code (otp/, the one sender), never on the provider's word alone;
 * an unverified address neither links nor matches. The sign-in then goes on through the
 * pipeline like every other (the application's MFA policy, the code for the page).
 */
export function createUpstreamService(deps: UpstreamDeps): UpstreamService {
  const { issuer, connections, clients, provider, store, enabledUsers, otp, events, spent, hash, now } = deps;

  async function usable(id: string, appClientId: string): Promise<OpenConnection> {
    const connection = /^[A-Za-z0-9_-]{1,100}$/.test(id) ? await connections.open(id) : undefined;
    // An organization's own provider serves its people at every application (the address step sends them there).
    if (!connection || (!connection.clients.includes(appClientId) && (await deps.routing.domainsOf(connection.id)).length === 0))
      throw new ServiceError('ERR_NOT_FOUND', 'This application offers no sign-in with this provider.');
    return connection;
  }

  const continuation = createContinuation({ ...deps, ticketSealer: deps.ticketSealer });

  const sealTokens = (connection: OpenConnection, identity: UpstreamIdentity) =>
    connection.keepTokens ? deps.tokenSealer.seal(JSON.stringify(identity.tokens)) : null;

  const recordLinked = (client: ClientRecord, userId: string, connection: string, via: 'new_account' | 'email_code' | 'verified_domain') =>
    events.record({ type: 'identity.linked', userId, clientId: client.id, detail: { connection, via } });

  /** The flow's sign-in: DEVICE_KEY_NEEDED when the app's page finishes it with its key, else on through the pipeline. */
  const signInAs = (client: ClientRecord, user: { id: string; email: string }, flow: Flow, amr: readonly string[]) =>
    flow.rememberDevice
      ? continuation.ticketFor(client, user, { codeChallenge: flow.codeChallenge, amr })
      : continuation.signInAs(client, user, { codeChallenge: flow.codeChallenge, device: flow.device, amr });

  /** Who this identity is here: linked, new (made from a verified address), or an account to prove first. */
  async function resolve(client: ClientRecord, connection: OpenConnection, identity: UpstreamIdentity, flow: Flow, ip: string) {
    const at = now();
    const linked = await store.find(connection.id, identity.subject);
    if (linked) {
      // By subject: an address changed at the provider changes nothing (it is shown, not matched).
      const user = await enabledUsers.findById(linked.userId);
      if (!user) throw refused();
      await store.touch(connection.id, identity.subject, at, {
        email: identity.email ?? null,
        name: identity.name ?? null,
        tokensSealed: sealTokens(connection, identity),
      });
      return signInAs(client, user, flow, upstreamFirst);
    }
    // An organization's own provider speaks for the addresses of its verified domains, and only those.
    const organizationDomains = await deps.routing.domainsOf(connection.id);
    const email = identity.email ? normalizeEmail(identity.email) : undefined;
    if (organizationDomains.length > 0) {
      if (!email || !organizationDomains.includes(domainOfAddress(email) ?? ''))
        throw refused('This organization’s provider can sign in only addresses of its own domains.');
    } else if (!email || !identity.emailVerified)
      throw refused('This provider did not vouch for your email address, so it cannot sign you in here. Use your email address instead.');
    const existing = await enabledUsers.findByEmail(email);
    if (existing && organizationDomains.length > 0) {
      // The organization proved it owns the domain, so its provider proves the mailbox: linked with no mailed code.
      if (!(await store.link({ ...linkOf(connection, identity, existing.id, now()), tokensSealed: sealTokens(connection, identity) })))
        throw refused();
      await recordLinked(client, existing.id, connection.id, 'verified_domain');
      return signInAs(client, existing, flow, upstreamFirst);
    }
    if (existing) return startLinkProof(client, connection, identity, existing, flow, ip);
    if (await enabledUsers.isDisabled(email)) throw refused();
    const user = await enabledUsers.findOrCreate(email, at);
    if (!user) throw refused();
    if (!(await store.link({ ...linkOf(connection, identity, user.id, at), tokensSealed: sealTokens(connection, identity) })))
      throw refused();
    await recordLinked(client, user.id, connection.id, 'new_account');
    return signInAs(client, user, flow, upstreamFirst);
  }

  const linkOf = (connection: OpenConnection, identity: UpstreamIdentity, userId: string, at: number): LinkedIdentity => ({
    connectionId: connection.id,
    subject: identity.subject,
    userId,
    email: identity.email ?? null,
    name: identity.name ?? null,
    linkedAt: at,
    lastUsedAt: at,
  });

  /** An account has this address: its emailed code must prove it before the identity joins it. */
  async function startLinkProof(
    client: ClientRecord,
    connection: OpenConnection,
    identity: UpstreamIdentity,
    user: { id: string; email: string },
    flow: Flow,
    ip: string,
  ): Promise<UpstreamResult> {
    const link = randomToken('lnk_');
    const idHash = hash('upstream-link', link);
    await store.insertProof(
      {
        idHash,
        clientId: client.id,
        connectionId: connection.id,
        subject: identity.subject,
        userId: user.id,
        email: user.email,
        name: identity.name ?? null,
        tokensSealed: sealTokens(connection, identity),
        codeChallenge: flow.codeChallenge,
        expiresAt: now() + UPSTREAM_LINK_TTL_SECONDS * 1000,
      },
      now(),
    );
    await otp.send({
      challengeId: idHash,
      // Its own purpose: the spacing of resends does not hold it back behind the account's last sign-in code.
      purpose: 'link',
      channel: { kind: 'email', to: user.email },
      ip,
      clientId: client.app?.id ?? client.id,
      clientName: client.name,
      arm: (otpHash, expiresAt) => store.armProof(idHash, otpHash, Math.min(expiresAt, now() + UPSTREAM_LINK_TTL_SECONDS * 1000)),
      disarm: () => store.expireProof(idHash, now()),
    });
    return { status: 'LINK_NEEDED', link, userid: user.email };
  }

  return {
    async start(input, binding, ip) {
      if (ip !== undefined)
        await deps.throttle.consume(
          `upstream:start:ip:${ip}`,
          UPSTREAM_START_PER_IP,
          'Too many sign-ins from this network. Try again later.',
        );
      if (!/^[A-Za-z0-9_-]{43,128}$/.test(input.codeChallenge))
        throw new ServiceError('ERR_REQUEST_INVALID', 'code_challenge must be an S256 challenge.');
      if (!/^[\x21-\x7e]{8,200}$/.test(input.state))
        throw new ServiceError('ERR_REQUEST_INVALID', 'state must be 8 to 200 visible characters.');
      let client: ClientRecord;
      let appClientId: string;
      let returnTo: string;
      // A key in the navigation only where the browser's binding vouches for the page (a crafted
      // link must not choose a user's device key); an application's page sends its key later.
      if (input.deviceKey !== undefined && input.request === undefined)
        throw new ServiceError('ERR_REQUEST_INVALID', 'device_key is for the hosted sign-in pages (with request); use remember_device.');
      if (input.rememberDevice && input.request !== undefined)
        throw new ServiceError('ERR_REQUEST_INVALID', 'remember_device is for applications; the hosted pages send device_key.');
      const device = input.deviceKey !== undefined ? deviceOf(input.deviceKey, input.userAgent) : undefined;
      if (input.request !== undefined) {
        // The hosted pages: the pending request must be this browser's; the result goes back to its page.
        ({ client, appClientId } = await deps.hostedFor(input.request, binding ?? ''));
        returnTo = `${issuer}/signin?request=${encodeURIComponent(input.request)}`;
      } else {
        // The return URL must be on one of the application's registered origins: no open redirect.
        let origin: string;
        try {
          const url = new URL(input.returnTo);
          if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new Error('scheme');
          origin = url.origin;
          url.hash = '';
          returnTo = url.href;
        } catch {
          throw new ServiceError('ERR_REQUEST_INVALID', 'return_to must be an absolute http(s) URL.');
        }
        client = await clients.authenticateBrowser(input.key, origin);
        appClientId = client.id;
      }
      const connection = await usable(input.connection, appClientId);
      const flow: Flow = {
        connectionId: connection.id,
        state: random(),
        nonce: random(),
        codeVerifier: random(),
        clientId: client.id,
        ...(input.request !== undefined ? { requestId: input.request } : {}),
        returnTo,
        pageState: input.state,
        codeChallenge: input.codeChallenge,
        ...(device ? { device } : {}),
        ...(input.rememberDevice ? { rememberDevice: true } : {}),
        expiresAt: now() + UPSTREAM_FLOW_TTL_SECONDS * 1000,
      };
      let location: string;
      try {
        location = await provider.authorizationUrl(connection, flow);
      } catch (error) {
        throw new ServiceError('ERR_UNAVAILABLE', 'The provider cannot be reached. Try again later.', {}, error);
      }
      return { location, cookie: sealFlow(deps.flowSealer, flow) };
    },

    async callback(params, flowCookie, ip) {
      const at = now();
      const flow = openFlow(deps.flowSealer, flowCookie, at);
      // No flow in this browser: another browser's callback (login CSRF), or an expired one.
      if (!flow) throw expired();
      const back = (result: UpstreamResult): Navigation => ({ location: withResult(flow.returnTo, flow.pageState, result), cookie: '' });
      const fail = (error: unknown): Navigation => {
        const known = error instanceof ServiceError && error.expose;
        return back({
          status: 'ERROR',
          code: known ? error.code : 'ERR_UPSTREAM_REFUSED',
          message: known ? error.message : refused().message,
        });
      };
      // A swapped state (another sign-in's answer in this browser) is refused before anything is spent.
      if (!safeEqual(params.get('state') ?? '', flow.state)) return fail(refused());
      // Spent once: the same answer twice (a replay, a reload) is refused.
      if (!(await spent.spend({ purpose: 'upstream-state', idHash: hash('upstream-state', flow.state), expiresAt: flow.expiresAt }, at)))
        return fail(refused());
      if (params.has('error')) return fail(refused('The sign-in was cancelled or refused by the provider.'));
      try {
        const connection = await connections.open(flow.connectionId);
        if (!connection) throw refused();
        const client = flow.requestId ? (await deps.hostedFor(flow.requestId, undefined).catch(() => undefined))?.client : undefined;
        const signingClient = client ?? (flow.requestId ? undefined : await deps.clientById(flow.clientId));
        if (!signingClient) throw expired();
        let identity: UpstreamIdentity;
        try {
          identity = await provider.identity(connection, params, flow);
        } catch {
          throw refused();
        }
        return back(await resolve(signingClient, connection, identity, flow, ip));
      } catch (error) {
        return fail(error);
      }
    },

    async confirmLink(client, link, code, device) {
      if (!OTP_PATTERN.test(code)) throw new ServiceError('ERR_REQUEST_INVALID', 'The code is 6 digits.');
      const pending = device ? pendingDevice(device.jwk, device.userAgent) : undefined;
      const idHash = hash('upstream-link', link);
      const proof = await store.findProof(idHash, now());
      if (!proof || proof.clientId !== client.id) throw expired();
      await otp.check({
        email: proof.email,
        maxAttempts: OTP_MAX_ATTEMPTS,
        live: proof.otpHash !== null,
        spend: () => store.spendProofAttempt(idHash, OTP_MAX_ATTEMPTS, now()),
        compare: async (spent) => (otp.matchesStored(idHash, spent.otpHash, code) ? { kind: 'match', value: null } : { kind: 'wrong' }),
        refund: async () => {},
        complete: () => store.completeProof(idHash, now()),
        attemptsOf: (spent) => spent.attempts,
      });
      const user = await enabledUsers.findById(proof.userId);
      if (!user) throw expired();
      const at = now();
      const linked = await store.link({
        connectionId: proof.connectionId,
        subject: proof.subject,
        userId: user.id,
        email: proof.email,
        name: proof.name,
        linkedAt: at,
        lastUsedAt: at,
        tokensSealed: proof.tokensSealed,
      });
      // Linked meanwhile (another tab): only to this same user does the sign-in go on.
      if (!linked && (await store.find(proof.connectionId, proof.subject))?.userId !== user.id) throw expired();
      if (linked) await recordLinked(client, user.id, proof.connectionId, 'email_code');
      return continuation.signInAs(client, user, { codeChallenge: proof.codeChallenge, device: pending, amr: upstreamLinkedFirst });
    },

    finishWithDevice: (client, ticket, device) =>
      continuation.finishWithDevice(client, ticket, pendingDevice(device.jwk, device.userAgent), (id) => enabledUsers.findById(id)),

    hostedApp: async (requestId, binding) => (await deps.hostedFor(requestId ?? '', binding ?? '')).appClientId,

    ...createIdentities({ store, events }),
  };
}
