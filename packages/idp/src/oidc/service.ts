import type { CodeService } from '../authorization-codes/service.js';
import { type ClientService, CONSOLE_CLIENT_ID, HOSTED_CLIENT_ID } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { pkceChallengeOf } from '../crypto/pkce.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, SESSION_ABSOLUTE_LIFETIME_SECONDS, SESSION_IDLE_TIMEOUT_SECONDS } from '../defaults.js';
import type { DeviceStore } from '../devices/store.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import type { PasskeyStore } from '../factors/passkey/store.js';
import type { OrganizationAccess, OrganizationMembership } from '../organizations/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { type AuthorizationResponse, authorizationResponse } from './authorization-response.js';
import { type CheckedRequest, checkAuthorizeRequest, type FindApi, ORGANIZATION_SCOPE } from './authorize-request.js';
import { askedBy, type ConsentItem, consentNeeded } from './consent.js';
import type { ConsentStore } from './consent-store.js';
import type { PushedRequests } from './pushed-requests.js';
import type { AuthorizationRequest, FrontChannelTarget, HeldSignIn, LiveSession, OidcStore, SignInSession } from './store.js';

export interface OidcDeps {
  issuer: string;
  clients: ClientService;
  codes: CodeService;
  store: OidcStore;
  /** Pushed authorization requests (RFC 9126): /authorize takes one by its request_uri. */
  pushed: Pick<PushedRequests, 'take'>;
  /** The registered APIs a request's `resource` may name (RFC 8707, apis/). */
  findApi: FindApi;
  devices: DeviceStore;
  /**
   * A session a passkey opened is bound to that passkey: revoking it ends the session. A held
   * sign-in of a user with no passkey for the hosted pages offers to add one.
   */
  passkeys: Pick<PasskeyStore, 'findActiveById' | 'list'>;
  enabledUsers: EnabledUserStore;
  /** What each user granted each third-party client (oidc/consent.ts). */
  consents: ConsentStore;
  events: EventLog;
  hash: SecretHasher;
  now: () => number;
  /** A device unused for this long is no longer trusted (its session ends with it). */
  deviceIdleMs: number;
  /**
   * Who belongs to which organization (organizations/): a code for an organization only for its
   * member, the picker's list, and an organization's MFA policy.
   */
  organizations: Pick<OrganizationAccess, 'membership' | 'membershipsOf' | 'find'>;
}

/** What the hosted page sends to finish: its pending request, the browser's binding cookie, the hosted code and its PKCE verifier. */
export interface HostedCompletion {
  requestId: string;
  binding: string | undefined;
  code: string;
  codeVerifier: string;
}

/**
 * What follows a sign-in: the app's response (with its code); for a third-party client the
 * consent page's request (oidc/consent.ts); for an app asking the user to choose one of several
 * organizations the picker's (docs/organizations.md); or, for an organization that requires MFA
 * and a sign-in without it, a new sign-in request for that organization (the step-up).
 */
export type NextPage =
  | { response: AuthorizationResponse }
  | { consentRequestId: string }
  | { organizationRequestId: string }
  | { stepUpRequestId: string };

/** A finished hosted sign-in: what follows, and the new session cookie value if any. */
export type SignInFinished = NextPage & { session?: string };

/** What the organization picker shows: the app, the user's organizations and roles, and its form's token (CSRF). */
export interface OrganizationView {
  client: ClientRecord;
  memberships: OrganizationMembership[];
  csrf: string;
  /** Where the response goes (the page's CSP lets its form lead there). */
  request: AuthorizationRequest;
}

/** The picker's answer: its request, the browser's binding cookie, the form's token, the organization chosen. */
export interface OrganizationAnswer {
  requestId: string;
  binding: string | undefined;
  csrf: string;
  organization: string;
}

/** What the consent page shows: the app's name and what it asks, and the token its form carries (CSRF). */
export interface ConsentView {
  client: ClientRecord;
  items: ConsentItem[];
  csrf: string;
  /** Where the response goes with response_mode=form_post (the page's CSP lets its form lead there). */
  request: AuthorizationRequest;
}

/** The consent page's answer: its request, the browser's binding cookie, the form's token. */
export interface ConsentAnswer {
  requestId: string;
  binding: string | undefined;
  csrf: string;
  allow: boolean;
}

/** What /authorize answers: our error page, the response to the client, or the hosted sign-in. */
export type AuthorizeOutcome =
  | { kind: 'page'; message: string }
  | { kind: 'respond'; response: AuthorizationResponse }
  /** The hosted sign-in: `requestId` goes in its URL, `binding` in a cookie of this browser. */
  | { kind: 'sign-in'; requestId: string; binding: string }
  /** A live session, and a third-party client needs the user's consent: the consent page, bound likewise. */
  | { kind: 'consent'; requestId: string; binding: string }
  /** A live session, and the user chooses one of their organizations: the picker, bound likewise. */
  | { kind: 'organization'; requestId: string; binding: string };

export interface OidcService {
  hostedPublishableKey: string;
  /** Creates or refreshes the hosted pages' client (its origin follows the configured issuer). */
  ensureHostedClient: () => Promise<void>;
  authorize(
    params: Record<string, unknown>,
    cookies: {
      session?: string;
      binding?: string;
    },
  ): Promise<AuthorizeOutcome>;
  /** The consent page's content for this browser's request waiting on it (ERR_SESSION_INVALID when expired, used, unknown or another browser's). */
  consentView(requestId: string, binding: string | undefined): Promise<ConsentView>;
  /**
   * The consent page's Allow or Deny: the waiting request consumed (once, this browser's, its
   * form's token checked). Allow merges the grant into the user's consent and issues the code;
   * Deny answers access_denied (RFC 6749 4.1.2.1).
   */
  answerConsent(answer: ConsentAnswer): Promise<AuthorizationResponse>;
  /** The picker's content for this browser's request waiting on it (ERR_SESSION_INVALID when expired, used, unknown or another browser's). */
  organizationView(requestId: string, binding: string | undefined): Promise<OrganizationView>;
  /**
   * The picker's choice: the waiting request consumed (once, this browser's, its form's token
   * checked), then the code for the organization chosen: access_denied for one the user is not
   * a member of, the step-up for one that requires MFA the sign-in did not pass.
   */
  answerOrganization(answer: OrganizationAnswer): Promise<NextPage>;
  /** The pending request a hosted page shows, with its app; undefined when expired, used or unknown. */
  pendingRequest(requestId: string): Promise<
    | {
        request: AuthorizationRequest;
        client: ClientRecord;
      }
    | undefined
  >;
  /**
   * The hosted client as the browser API should see it for one pending request: the app's
   * name (mails say which app), the app's MFA policy and whether it counts a passkey as MFA,
   * so the sign-in enforces what the app requires.
   */
  hostedClientFor(hosted: ClientRecord, requestId: string | undefined): Promise<ClientRecord>;
  /**
   * The hosted page's last step: the code service-web got for the hosted client (consumed
   * here, PKCE-checked) becomes a sign-in session bound to the device, and the pending
   * request (consumed, and only from the browser that made it) gets its own code.
   */
  completeSignIn(
    input: HostedCompletion & {
      previousSession: string | undefined;
    },
  ): Promise<SignInFinished>;
  /**
   * The same last step for a sign-in that issued recovery codes, or where the page may offer
   * to add a passkey: the hosted code (60 s) is redeemed now and the sign-in is held on the
   * pending request, so nothing short-lived waits while the user copies the codes or makes a
   * passkey; `continueSignIn` then finishes it within the request's lifetime. `passkeyOffer`:
   * the user has no passkey for the hosted pages and did not sign in with one.
   */
  holdSignIn(input: HostedCompletion): Promise<{
    passkeyOffer: boolean;
  }>;
  /**
   * The sign-in held on this browser's live pending request, for the "Add a passkey" offer
   * (oidc/passkey-offer.ts): who signed in, the request's keyed id hash (the ceremony's
   * context) and its app's name; ERR_SESSION_INVALID when there is none (expired, continued,
   * another browser's, not held) or its user is disabled or deleted, or was offered nothing.
   */
  heldSignIn(
    requestId: string,
    binding: string | undefined,
  ): Promise<{
    userId: string;
    email: string;
    context: string;
    appName: string;
  }>;
  /** Finishes a held sign-in (the user saved the codes): the request is consumed and the app gets its code. */
  continueSignIn(input: { requestId: string; binding: string | undefined; previousSession: string | undefined }): Promise<SignInFinished>;
  /**
   * The context a hosted passkey sign-in is bound to: the pending request (a keyed hash of its
   * id), live and bound to this browser (its binding cookie), or ERR_SESSION_INVALID. So an
   * assertion is spent only for the request, and in the browser, it was made for.
   */
  hostedCeremonyContext(requestId: string | undefined, binding: string | undefined): Promise<string>;
  /** The live session behind a cookie (its user and device), if any. */
  session: (cookie: string | undefined) => Promise<
    | (LiveSession & {
        idHash: string;
      })
    | undefined
  >;
  /**
   * Ends the session behind a cookie (a sign-out); its apps with a back-channel URI get a
   * logout token (oidc/store.ts endSessions). Its `sid` and the apps to frame on the
   * signed-out page (Front-Channel Logout), when it had one.
   */
  endSession: (cookie: string) => Promise<{ sid: string; frontChannel: FrontChannelTarget[] } | undefined>;
  sweep: (at: number) => Promise<void>;
}

/**
 * The authorization endpoint's logic (OIDC Core 3.1.2): check the request, answer from a live
 * sign-in session when it satisfies the request (SSO), otherwise park the request for the
 * hosted sign-in and, once that finishes, issue the code through the same single-use code
 * store and token endpoint as the browser library's flow.
 */
export function createOidcService(deps: OidcDeps): OidcService {
  const { issuer, clients, codes, store, pushed, devices, passkeys, enabledUsers, events, hash, now, consents } = deps;
  const hostedPublishableKey = `pk_hosted_${hash('hosted-publishable-key', issuer).slice(0, 32)}`;

  const errorResponse = (checked: Extract<CheckedRequest, { kind: 'redirect-error' }>) =>
    authorizationResponse(checked.redirectUri, checked.responseMode, {
      error: checked.error,
      error_description: checked.description,
      state: checked.state,
      iss: issuer,
    });

  /**
   * The session behind the cookie, if live, what it is bound to still trusted and its user
   * enabled. A session is bound to what signed in (`deviceId`): a remembered browser (revoked or
   * idle past deviceIdleMs, it ends the session) or a passkey (revoked, it ends the session).
   */
  async function liveSession(cookie: string | undefined): Promise<(LiveSession & { idHash: string }) | undefined> {
    if (!cookie) return undefined;
    const idHash = hash('sign-in-session', cookie);
    const at = now();
    const session = await store.findLiveSession(idHash, at, at - SESSION_IDLE_TIMEOUT_SECONDS * 1000);
    if (!session) return undefined;
    // Bound to the device or passkey: revoking (or a device's expiring) ends the session too.
    const [device, user] = await Promise.all([
      devices.findActive(session.deviceId, at - deps.deviceIdleMs),
      enabledUsers.findById(session.userId),
    ]);
    const bound = device ?? (await passkeys.findActiveById(session.deviceId));
    if (!bound || bound.userId !== session.userId || !user) return undefined;
    return { ...session, idHash };
  }

  /**
   * Why a session cannot answer this request, if it cannot. OIDC Core 3.1.2.1: prompt=login
   * and an exceeded max_age (max_age=0 is prompt=login) need a fresh sign-in; an app requiring
   * MFA needs it in the session. The reason is the prompt=none error (OIDC Core 3.1.2.6).
   */
  function shortfall(session: SignInSession, request: AuthorizationRequest, client: ClientRecord, organizationMfa: boolean) {
    if (request.prompt?.split(' ').includes('login')) return 'login_required';
    // The console always asks for a fresh sign-in (console/service.ts); enforced here, not by its
    // own prompt=login alone: a copied SSO cookie with prompt=none must not get the console a code.
    if (client.id === CONSOLE_CLIENT_ID) return 'login_required';
    const age = Math.floor(now() / 1000) - session.authTime;
    if (request.maxAgeSeconds !== null && (request.maxAgeSeconds === 0 || age > request.maxAgeSeconds)) return 'login_required';
    if ((client.mfaPolicy === 'required' || organizationMfa) && !session.amr.includes('mfa')) return 'interaction_required';
    // A passkey counted as MFA by the app that opened the session: an app that does not count
    // it (passkeySatisfiesMfa false) asks for its second factor on the hosted page.
    if (client.passkeySatisfiesMfa === false && passkeyAsMfa(session.amr)) return 'interaction_required';
    return undefined;
  }

  /** The app's code, issued in the session `sid` (null: no session), which remembers the app for its logout. */
  async function issueFor(request: AuthorizationRequest, signedIn: HeldSignIn, sid: string | null): Promise<AuthorizationResponse> {
    // An app that asks for an organization gets a code only for its member: anyone else, and an
    // organization that does not exist, get the same refusal (RFC 6749 4.1.2.1 access_denied).
    if (request.organization !== null && !(await deps.organizations.membership(signedIn.userId, request.organization)))
      return authorizationResponse(request.redirectUri, request.responseMode, {
        error: 'access_denied',
        error_description: 'You are not a member of the organization this application asked for.',
        state: request.state,
        iss: issuer,
      });
    if (sid) await store.recordClient(sid, request.clientId, signedIn.userId, now());
    const code = await codes.issue({
      sid,
      clientId: request.clientId,
      userId: signedIn.userId,
      codeChallenge: request.codeChallenge,
      amr: signedIn.amr,
      authTime: signedIn.authTime,
      deviceId: signedIn.deviceId,
      redirectUri: request.redirectUri,
      nonce: request.nonce,
      scope: request.scope,
      resources: request.resources,
      organizationId: request.organization,
    });
    return authorizationResponse(request.redirectUri, request.responseMode, { code, state: request.state, iss: issuer });
  }

  const expired = () => new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired. Go back to the app and start again.');

  /** Whether this user must consent to what a third-party client's request asks (oidc/consent.ts). */
  async function consentMissing(request: AuthorizationRequest, client: ClientRecord, userId: string): Promise<boolean> {
    if (!client.thirdParty) return false;
    const [asked, granted] = await Promise.all([askedBy(request, deps.findApi), consents.find(userId, client.id)]);
    return consentNeeded(client, request, asked.grant, granted);
  }

  /**
   * The app's code, or when the user must consent first, a copy of the request waiting on the
   * consent page (a new id, the same browser's binding) with the sign-in and its session held on it.
   */
  async function issueOrAsk(
    request: AuthorizationRequest,
    client: ClientRecord,
    signedIn: HeldSignIn,
    sid: string | null,
    bindingHash: string,
  ): Promise<{ response: AuthorizationResponse } | { consentRequestId: string }> {
    if (!(await consentMissing(request, client, signedIn.userId))) return { response: await issueFor(request, signedIn, sid) };
    return { consentRequestId: await park(request, bindingHash, { signedIn, sid, page: 'consent' }) };
  }

  /**
   * The organization a request is for once its user is known. An `organization` parameter names
   * it; the `organization` scope alone asks the user to choose: their only organization is
   * taken without a page, several need the picker, none leaves the tokens without one.
   * `mfaRequired`: the organization (of which the user is a member) requires a second factor.
   */
  async function organizationFor(
    request: AuthorizationRequest,
    userId: string,
  ): Promise<{ kind: 'ready'; request: AuthorizationRequest; mfaRequired: boolean } | { kind: 'choose' }> {
    if (request.organization !== null) {
      const membership = await deps.organizations.membership(userId, request.organization);
      // A non-member is refused by issueFor, whatever the organization's policy.
      return { kind: 'ready', request, mfaRequired: membership?.organization.mfaRequired === true };
    }
    if (!request.scope.split(' ').includes(ORGANIZATION_SCOPE)) return { kind: 'ready', request, mfaRequired: false };
    const memberships = await deps.organizations.membershipsOf(userId);
    if (memberships.length > 1) return { kind: 'choose' };
    const only = memberships[0]?.organization;
    return only
      ? { kind: 'ready', request: { ...request, organization: only.id }, mfaRequired: only.mfaRequired }
      : { kind: 'ready', request, mfaRequired: false };
  }

  /** A copy of the request (a new id, the same browser's binding) waiting on a page, with the sign-in and its session held on it. */
  async function park(
    request: AuthorizationRequest,
    bindingHash: string,
    held?: { signedIn: HeldSignIn; sid: string | null; page: 'consent' | 'organization' },
  ) {
    const requestId = randomToken('');
    const at = now();
    await store.insertRequest(
      hash('authorization-request', requestId),
      bindingHash,
      request,
      at,
      at + AUTHORIZATION_REQUEST_TTL_SECONDS * 1000,
      held,
    );
    return requestId;
  }

  /**
   * After a sign-in (or a live session, or the picker): the picker when the user must choose an
   * organization; the step-up when the organization requires MFA and the sign-in passed none (a
   * new sign-in request for that organization, whose hosted sign-in then requires it:
   * hostedClientFor); otherwise the code, or the consent page first.
   */
  async function proceed(
    request: AuthorizationRequest,
    client: ClientRecord,
    signedIn: HeldSignIn,
    sid: string | null,
    bindingHash: string,
  ): Promise<NextPage> {
    const step = await organizationFor(request, signedIn.userId);
    if (step.kind === 'choose') return { organizationRequestId: await park(request, bindingHash, { signedIn, sid, page: 'organization' }) };
    if (step.mfaRequired && !signedIn.amr.includes('mfa')) {
      const user = await enabledUsers.findById(signedIn.userId);
      if (!user) throw expired();
      return { stepUpRequestId: await park({ ...step.request, prompt: null, loginHint: user.email }, bindingHash) };
    }
    return issueOrAsk(step.request, client, signedIn, sid, bindingHash);
  }

  /** The consent form's token: bound to the waiting request and to the browser holding it (its binding cookie). */
  const consentCsrf = (idHash: string, bindingHash: string) => hash('consent-form', `${idHash}.${bindingHash}`);
  /** The picker form's token, likewise (another purpose: neither page's token answers the other). */
  const organizationCsrf = (idHash: string, bindingHash: string) => hash('organization-form', `${idHash}.${bindingHash}`);

  /** The hosted page's code (the hosted client is public: PKCE binds it; its user still enabled) → who signed in, how. */
  async function redeemHosted(input: HostedCompletion): Promise<HeldSignIn> {
    if (!input.binding) throw expired();
    const redeemed = await codes.redeem(input.code, randomToken('', 16), {
      id: HOSTED_CLIENT_ID,
      secretKeyHash: null,
      pkceChallenge: pkceChallengeOf(input.codeVerifier) ?? null,
      redirectUri: null,
      dpopProof: false,
    });
    // The hosted client's own code, bound to this page's PKCE verifier (codeBinding), its user enabled.
    const hostedCode = redeemed?.redeemed?.user && redeemed.redeemed.code;
    if (!hostedCode) throw expired();
    return { userId: hostedCode.userId, deviceId: hostedCode.deviceId, amr: hostedCode.amr, authTime: hostedCode.authTime };
  }

  /** A consumed request and its sign-in → a new session (remembered device only) and the app's code. */
  async function finish(
    request: AuthorizationRequest,
    signedIn: HeldSignIn,
    previousSession: string | undefined,
    bindingHash: string,
  ): Promise<SignInFinished> {
    const client = await clients.findById(request.clientId);
    if (!client) throw expired();
    // The sign-in ran under this app's policy (hostedClientFor); checked again where it counts.
    if (client.mfaPolicy === 'required' && !signedIn.amr.includes('mfa')) throw expired();
    // A hosted code of a passkey counted as MFA (another app's request, same browser) is no
    // second factor for an app that does not count a passkey as one.
    if (client.passkeySatisfiesMfa === false && passkeyAsMfa(signedIn.amr)) throw expired();
    const at = now();
    // A new session value at every sign-in (no session fixation); the old one ends. The same
    // user signing in again in this browser (a step-up, prompt=login) stays the same SSO
    // session for the apps: the new one keeps its sid, and no app is logged out. Another
    // user's session ends as a sign-out does (its apps get logout tokens).
    const previous = previousSession ? await liveSession(previousSession) : undefined;
    const kept = signedIn.deviceId && previous?.userId === signedIn.userId ? previous.sid : null;
    if (previousSession) {
      const idHash = hash('sign-in-session', previousSession);
      if (kept) await store.replaceSession(idHash, at);
      else await store.endSessions({ idHash }, at);
    }
    let session: string | undefined;
    let sid: string | null = null;
    // Only a remembered device or a passkey gets a session: it is what the session is bound to.
    if (signedIn.deviceId) {
      session = randomToken('');
      // OIDC `sid`: random and public, never derived from the cookie.
      sid = kept ?? randomToken('sid_', 16);
      await store.insertSession(
        hash('sign-in-session', session),
        { ...signedIn, deviceId: signedIn.deviceId },
        sid,
        at,
        at + SESSION_ABSOLUTE_LIFETIME_SECONDS * 1000,
      );
    }
    // A third-party client's user consents first, a user of several organizations chooses one:
    // the session is made all the same (they did sign in).
    const outcome = await proceed(request, client, signedIn, sid, bindingHash);
    return session ? { ...outcome, session } : outcome;
  }

  /**
   * Whether a held sign-in may add a passkey for the hosted pages: not one a passkey made (its
   * `amr` has `user`, the authenticator's user verification, factors/passkey/; a remembered
   * browser's is `swk` alone), and only while its user has none (the offer is for users without one).
   */
  async function offersPasskey(signedIn: HeldSignIn): Promise<boolean> {
    if (signedIn.amr.includes('user')) return false;
    return (await passkeys.list({ userId: signedIn.userId, clientId: HOSTED_CLIENT_ID })).length === 0;
  }

  return {
    hostedPublishableKey,

    ensureHostedClient: () =>
      clients.ensureFirstParty({
        id: HOSTED_CLIENT_ID,
        name: 'Hosted sign-in',
        origin: new URL(issuer).origin,
        publishableKey: hostedPublishableKey,
      }),

    async authorize(sent: Record<string, unknown>, cookies: { session?: string; binding?: string }): Promise<AuthorizeOutcome> {
      // RFC 9126 4: a request_uri stands for the request its client pushed, and only that request's parameters count.
      const requestUri = typeof sent.request_uri === 'string' ? sent.request_uri : undefined;
      const params =
        requestUri === undefined ? sent : await pushed.take(typeof sent.client_id === 'string' ? sent.client_id : '', requestUri);
      if (!params) return { kind: 'page', message: 'The pushed authorization request is unknown, expired or already used (request_uri).' };
      const checked = await checkAuthorizeRequest(params, async (id) => (id === HOSTED_CLIENT_ID ? undefined : clients.findById(id)), {
        pushed: requestUri !== undefined,
        findApi: deps.findApi,
      });
      if (checked.kind === 'page') return checked;
      if (checked.kind === 'redirect-error') return { kind: 'respond', response: errorResponse(checked) };
      const { client, request } = checked;
      const session = await liveSession(cookies.session);
      const organization = session ? await organizationFor(request, session.userId) : undefined;
      const organizationMfa = organization?.kind === 'ready' && organization.mfaRequired;
      const unmet = session ? shortfall(session, request, client, organizationMfa) : 'login_required';
      // One binding value per browser, reused across tabs; a new one when the browser has none.
      const binding = cookies.binding && /^[A-Za-z0-9_-]{43}$/.test(cookies.binding) ? cookies.binding : randomToken('');
      if (session && !unmet) {
        const mustConsent = await consentMissing(request, client, session.userId);
        // OIDC Core 3.1.2.6: no page may be shown, and the user has not consented to what the app asks.
        if (mustConsent && request.prompt === 'none')
          return {
            kind: 'respond',
            response: errorResponse({
              kind: 'redirect-error',
              ...request,
              error: 'consent_required',
              description: 'The user must consent to what this app asks.',
            }),
          };
        // OIDC Core 3.1.2.6: no page may be shown, and the user must choose an organization.
        if (organization?.kind === 'choose' && request.prompt === 'none')
          return {
            kind: 'respond',
            response: errorResponse({
              kind: 'redirect-error',
              ...request,
              error: 'interaction_required',
              description: 'The user must choose an organization.',
            }),
          };
        await store.touchSession(session.idHash, now());
        await events.record({
          type: 'sign_in.succeeded',
          userId: session.userId,
          clientId: client.id,
          deviceId: session.deviceId,
          detail: { amr: session.amr.join(' '), via: 'session' },
        });
        const outcome = await proceed(request, client, session, session.sid, hash('authorization-binding', binding));
        if ('response' in outcome) return { kind: 'respond', response: outcome.response };
        if ('consentRequestId' in outcome) return { kind: 'consent', requestId: outcome.consentRequestId, binding };
        if ('organizationRequestId' in outcome) return { kind: 'organization', requestId: outcome.organizationRequestId, binding };
        return { kind: 'sign-in', requestId: outcome.stepUpRequestId, binding };
      }
      if (request.prompt === 'none') {
        // OIDC Core 3.1.2.6: no UI may be shown; say why the session did not do.
        const description =
          unmet !== 'interaction_required'
            ? 'The user must sign in.'
            : organizationMfa && client.mfaPolicy !== 'required'
              ? 'This organization requires a second factor.'
              : 'This app requires a second factor.';
        return {
          kind: 'respond',
          response: errorResponse({ kind: 'redirect-error', ...request, error: unmet ?? 'login_required', description }),
        };
      }
      // The session's user's only organization requires the MFA the session lacks: the sign-in is
      // for that organization, so the hosted sign-in requires the second factor (hostedClientFor).
      const stepUp = organizationMfa && unmet === 'interaction_required' && organization?.kind === 'ready';
      const requestId = await park(stepUp ? organization.request : request, hash('authorization-binding', binding));
      return { kind: 'sign-in', requestId, binding };
    },

    async consentView(requestId: string, binding: string | undefined): Promise<ConsentView> {
      if (!binding) throw expired();
      const idHash = hash('authorization-request', requestId);
      const bindingHash = hash('authorization-binding', binding);
      const pending = await store.findConsentRequest(idHash, bindingHash, now());
      const client = pending && (await clients.findById(pending.request.clientId));
      if (!pending || !client) throw expired();
      const { items } = await askedBy(pending.request, deps.findApi);
      return { client, items, csrf: consentCsrf(idHash, bindingHash), request: pending.request };
    },

    async answerConsent(answer: ConsentAnswer): Promise<AuthorizationResponse> {
      if (!answer.binding) throw expired();
      const idHash = hash('authorization-request', answer.requestId);
      const bindingHash = hash('authorization-binding', answer.binding);
      // CSRF: the form's token, of this request and this browser; checked before anything is consumed.
      if (!safeEqual(answer.csrf, consentCsrf(idHash, bindingHash))) throw expired();
      const pending = await store.consumeConsentRequest(idHash, bindingHash, now());
      if (!pending) throw expired();
      const { request, signedIn, sid } = pending;
      // The user may have been disabled or deleted, or the client deleted, while reading.
      const [user, client] = await Promise.all([enabledUsers.findById(signedIn.userId), clients.findById(request.clientId)]);
      if (!user || !client) throw expired();
      if (!answer.allow)
        // RFC 6749 4.1.2.1: the resource owner denied the request.
        return errorResponse({ kind: 'redirect-error', ...request, error: 'access_denied', description: 'The user denied the request.' });
      const { grant } = await askedBy(request, deps.findApi);
      // Its codes and refresh tokens join a clients row: written now that a user allowed it, not at every fetch.
      if (client.metadataDocument) await clients.recordMetadataDocumentClient(client);
      await consents.merge(signedIn.userId, client.id, grant, now());
      await events.record({
        type: 'consent.granted',
        userId: signedIn.userId,
        clientId: client.id,
        ...(signedIn.deviceId ? { deviceId: signedIn.deviceId } : {}),
        detail: { scope: [...grant.scope, ...grant.permissions.map(([api, permission]) => `${api} ${permission}`)].join(' ') },
      });
      return issueFor(request, signedIn, sid);
    },

    async organizationView(requestId: string, binding: string | undefined): Promise<OrganizationView> {
      if (!binding) throw expired();
      const idHash = hash('authorization-request', requestId);
      const bindingHash = hash('authorization-binding', binding);
      const pending = await store.findConsentRequest(idHash, bindingHash, now(), 'organization');
      const client = pending && (await clients.findById(pending.request.clientId));
      if (!pending || !client) throw expired();
      const memberships = await deps.organizations.membershipsOf(pending.signedIn.userId);
      return { client, memberships, csrf: organizationCsrf(idHash, bindingHash), request: pending.request };
    },

    async answerOrganization(answer: OrganizationAnswer): Promise<NextPage> {
      if (!answer.binding) throw expired();
      const idHash = hash('authorization-request', answer.requestId);
      const bindingHash = hash('authorization-binding', answer.binding);
      // CSRF: the form's token, of this request and this browser; checked before anything is consumed.
      if (!safeEqual(answer.csrf, organizationCsrf(idHash, bindingHash))) throw expired();
      const pending = await store.consumeConsentRequest(idHash, bindingHash, now(), 'organization');
      if (!pending) throw expired();
      const { request, signedIn, sid } = pending;
      const [user, client] = await Promise.all([enabledUsers.findById(signedIn.userId), clients.findById(request.clientId)]);
      if (!user || !client) throw expired();
      // The choice becomes the request's organization: issueFor refuses one the user is not a
      // member of (a tampered form) with access_denied, as for an app naming it.
      return proceed({ ...request, organization: answer.organization }, client, signedIn, sid, bindingHash);
    },

    async pendingRequest(requestId: string): Promise<{ request: AuthorizationRequest; client: ClientRecord } | undefined> {
      const request = await store.findLiveRequest(hash('authorization-request', requestId), now());
      const client = request && (await clients.findById(request.clientId));
      return client && request && { request, client };
    },

    async hostedClientFor(hosted: ClientRecord, requestId: string | undefined): Promise<ClientRecord> {
      const pending = requestId ? await this.pendingRequest(requestId) : undefined;
      if (!pending) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired. Go back to the app and start again.');
      // A sign-in for an organization that requires MFA requires it as an app's policy does (the
      // user is not known yet; a non-member is refused at the end all the same).
      const organization = pending.request.organization ? await deps.organizations.find(pending.request.organization) : undefined;
      return {
        ...hosted,
        name: pending.client.name,
        mfaPolicy: organization?.mfaRequired ? 'required' : pending.client.mfaPolicy,
        passkeySatisfiesMfa: pending.client.passkeySatisfiesMfa,
        app: { id: pending.client.id, name: pending.client.name },
      };
    },

    async completeSignIn(input: HostedCompletion & { previousSession: string | undefined }): Promise<SignInFinished> {
      const signedIn = await redeemHosted(input);
      const request = await store.consumeRequest(
        hash('authorization-request', input.requestId),
        hash('authorization-binding', input.binding ?? ''),
        now(),
      );
      if (!request) throw expired();
      return finish(request, signedIn, input.previousSession, hash('authorization-binding', input.binding ?? ''));
    },

    async holdSignIn(input: HostedCompletion): Promise<{ passkeyOffer: boolean }> {
      const signedIn = await redeemHosted(input);
      const held = await store.holdSignIn(
        hash('authorization-request', input.requestId),
        hash('authorization-binding', input.binding ?? ''),
        signedIn,
        now(),
      );
      if (!held) throw expired();
      return { passkeyOffer: await offersPasskey(signedIn) };
    },

    async heldSignIn(
      requestId: string,
      binding: string | undefined,
    ): Promise<{ userId: string; email: string; context: string; appName: string }> {
      if (!binding) throw expired();
      const idHash = hash('authorization-request', requestId);
      const at = now();
      const [signedIn, request] = await Promise.all([
        store.findHeldSignIn(idHash, hash('authorization-binding', binding), at),
        store.findLiveRequest(idHash, at),
      ]);
      const [user, client] = await Promise.all([
        signedIn && enabledUsers.findById(signedIn.userId),
        request && clients.findById(request.clientId),
      ]);
      if (!signedIn || !user || !client || !(await offersPasskey(signedIn))) throw expired();
      return { userId: user.id, email: user.email, context: idHash, appName: client.name };
    },

    async continueSignIn(input: {
      requestId: string;
      binding: string | undefined;
      previousSession: string | undefined;
    }): Promise<SignInFinished> {
      if (!input.binding) throw expired();
      const held = await store.consumeHeldRequest(
        hash('authorization-request', input.requestId),
        hash('authorization-binding', input.binding),
        now(),
      );
      // The user may have been disabled or deleted while reading.
      if (!held || !(await enabledUsers.findById(held.signedIn.userId))) throw expired();
      return finish(held.request, held.signedIn, input.previousSession, hash('authorization-binding', input.binding));
    },

    async hostedCeremonyContext(requestId: string | undefined, binding: string | undefined): Promise<string> {
      const idHash = requestId ? hash('authorization-request', requestId) : '';
      const pending = idHash && binding ? await store.findLiveRequest(idHash, now()) : undefined;
      if (!pending || !safeEqual(pending.bindingHash, hash('authorization-binding', binding ?? ''))) throw expired();
      return idHash;
    },

    session: liveSession,

    async endSession(cookie: string) {
      const [ended] = await store.endSessions({ idHash: hash('sign-in-session', cookie) }, now());
      return ended?.sid ? { sid: ended.sid, frontChannel: await store.frontChannelTargets(ended.sid) } : undefined;
    },

    sweep: (at: number) => store.deleteExpired(at),
  };
}

/**
 * `mfa` in `amr` only because a passkey counted as MFA (factors/passkey/: `user`, from the
 * authenticator's user verification, then `mfa`), with no second factor's own method after it
 * (sign-in/mfa-session.ts appends `mfa` and the method's amr).
 */
const passkeyAsMfa = (amr: readonly string[]) =>
  amr.includes('user') && amr.includes('mfa') && !amr.some((m) => m === 'totp' || m === 'sms' || m === 'email');
