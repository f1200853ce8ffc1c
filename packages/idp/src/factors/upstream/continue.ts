import type { MfaMethod } from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import type { Sealer } from '../../crypto/seal.js';
import { randomToken, type SecretHasher } from '../../crypto/secrets.js';
import { UPSTREAM_DEVICE_TICKET_TTL_SECONDS } from '../../defaults.js';
import type { PendingDevice } from '../../devices/pending.js';
import type { DeviceStore } from '../../devices/store.js';
import { ServiceError } from '../../errors.js';
import type { SignIn } from '../../sign-in/finish.js';
import type { MfaStep } from '../../sign-in/mfa-step.js';
import type { PipelineOutcome, SignInPipeline } from '../../sign-in/pipeline.js';
import type { SpentTokenStore } from '../../spent-tokens/store.js';

/** What the page is told in its return URL's fragment (UpstreamResultStatus), or in the answer of the link and device steps. */
export type UpstreamResult =
  | { status: 'SUCCESS'; code: string; deviceId?: string }
  | { status: 'MFA_REQUIRED'; sessionId: string; method: MfaMethod; userid: string; deviceId?: string }
  | { status: 'LINK_NEEDED'; link: string; userid: string }
  | { status: 'DEVICE_KEY_NEEDED'; ticket: string; userid: string }
  | { status: 'ERROR'; code: string; message: string };

/** A result that goes on from a proven user: a code, the MFA step, or an error. */
export type SignedInResult = Extract<UpstreamResult, { status: 'SUCCESS' | 'MFA_REQUIRED' | 'ERROR' }>;

/** The sign-in a DEVICE_KEY_NEEDED ticket holds, sealed by the service: the page adds only its key. */
interface Ticket {
  kind: 'upstream-device';
  id: string;
  clientId: string;
  userId: string;
  codeChallenge: string;
  amr: string[];
  authTime: number;
  expiresAt: number;
}

export interface ContinuationDeps {
  mfa: Pick<MfaStep, 'methodOf'>;
  pipeline: SignInPipeline;
  /** The user's devices: a key already registered to the user is used again, not registered twice. */
  devices: Pick<DeviceStore, 'list' | 'findActive'>;
  deviceIdleMs: number;
  /** Seals the device ticket (purpose 'upstream-device'). */
  ticketSealer: Sealer;
  spent: SpentTokenStore;
  hash: SecretHasher;
  now: () => number;
}

const ticketRefused = () =>
  new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired or was already finished. Go back to the app and start again.');

/**
 * The sign-in once the upstream identity is a user of ours (service.ts resolves it): which
 * device it registers or uses again, then the pipeline (the application's MFA policy, the code),
 * as the page's result.
 *
 * An application's page that asked to remember the browser gets a single-use ticket instead
 * (DEVICE_KEY_NEEDED) and finishes the sign-in with its device key (`finishWithDevice`). The key
 * never rides in the start's navigation: anyone can craft that link, and a key chosen by its
 * author would become the victim's device. The ticket reaches only the return URL on the app's
 * origin, where service-web checks the result's `state` before it sends a key.
 */
export function createContinuation(deps: ContinuationDeps) {
  const { mfa, pipeline, now } = deps;

  /** The pipeline's outcome as the page's result. */
  function resultOf(outcome: PipelineOutcome, email: string, deviceId: string | undefined): SignedInResult {
    const device = deviceId ? { deviceId } : {};
    if (outcome.kind === 'done') return { status: 'SUCCESS', code: outcome.code, ...device };
    if (outcome.kind === 'mfa')
      return { status: 'MFA_REQUIRED', sessionId: outcome.sessionId, method: outcome.method, userid: email, ...device };
    // No code without a second factor, and none to set up here (as after a passkey).
    return {
      status: 'ERROR',
      code: 'ERR_REQUEST_INVALID',
      message: 'This application requires a second factor: sign in with your email address once to set one up.',
    };
  }

  /** The page's key as this user's device: the one registered before (this browser again), or a new one with its id drawn now. */
  async function knownDevice(clientId: string, userId: string, device: PendingDevice): Promise<{ id: string } | PendingDevice> {
    const at = now();
    for (const row of await deps.devices.list({ userId, clientId, usedSince: at - deps.deviceIdleMs })) {
      const key = (await deps.devices.findActive(row.id, at - deps.deviceIdleMs))?.publicJwk;
      if (key && key.x === device.publicJwk.x && key.y === device.publicJwk.y) return { id: row.id };
    }
    // Drawn before the sign-in finishes: a page stopped at the MFA step keeps its key under it.
    return { ...device, id: randomToken('dev_', 16) };
  }

  /** The sign-in of `user` through the pipeline, registering (or using again) `device` when there is one. */
  async function signInAs(
    client: ClientRecord,
    user: { id: string; email: string },
    from: { codeChallenge: string | null; device?: PendingDevice | undefined; amr: readonly string[]; authTime?: number },
  ): Promise<SignedInResult> {
    const device = from.device ? await knownDevice(client.id, user.id, from.device) : null;
    const signIn: SignIn = {
      clientId: client.id,
      userId: user.id,
      // Registered by the one finisher (its new-device mail; on the hosted pages, the SSO session bound to it).
      device,
      codeChallenge: from.codeChallenge,
      amr: [...from.amr],
      authTime: from.authTime ?? Math.floor(now() / 1000),
    };
    return resultOf(await pipeline.continue({ client, signIn, method: await mfa.methodOf(user.id) }), user.email, device?.id);
  }

  return {
    signInAs,

    /** DEVICE_KEY_NEEDED: the sign-in sealed into a ticket the page finishes with its key. */
    ticketFor(
      client: ClientRecord,
      user: { id: string; email: string },
      from: { codeChallenge: string; amr: readonly string[] },
    ): UpstreamResult {
      const at = now();
      const ticket: Ticket = {
        kind: 'upstream-device',
        id: randomToken('udt_'),
        clientId: client.id,
        userId: user.id,
        codeChallenge: from.codeChallenge,
        amr: [...from.amr],
        authTime: Math.floor(at / 1000),
        expiresAt: at + UPSTREAM_DEVICE_TICKET_TTL_SECONDS * 1000,
      };
      return { status: 'DEVICE_KEY_NEEDED', ticket: deps.ticketSealer.seal(JSON.stringify(ticket)), userid: user.email };
    },

    /**
     * POST /v1/upstream/device: the ticket of this client, spent once (a replay or a second tab is
     * refused), then the sign-in goes on with the page's key. `device` is checked by the caller
     * before, so a malformed key spends nothing.
     */
    async finishWithDevice(
      client: ClientRecord,
      sealed: string,
      device: PendingDevice,
      userOf: (id: string) => Promise<{ id: string; email: string } | undefined>,
    ): Promise<SignedInResult> {
      const at = now();
      let ticket: Ticket;
      try {
        ticket = JSON.parse(deps.ticketSealer.open(sealed)) as Ticket;
      } catch {
        throw ticketRefused();
      }
      if (ticket.kind !== 'upstream-device' || ticket.clientId !== client.id || !(ticket.expiresAt > at)) throw ticketRefused();
      const spent = await deps.spent.spend(
        { purpose: 'upstream-device', idHash: deps.hash('upstream-device', ticket.id), expiresAt: ticket.expiresAt },
        at,
      );
      if (!spent) throw ticketRefused();
      const user = await userOf(ticket.userId);
      if (!user) throw ticketRefused();
      return signInAs(client, user, { ...ticket, device });
    },
  };
}
