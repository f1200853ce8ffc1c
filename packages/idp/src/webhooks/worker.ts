import { Agent as HttpAgent, request as httpRequest, type OutgoingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Webhook } from 'standardwebhooks';
import type { Sealer } from '../crypto/seal.js';
import { randomToken } from '../crypto/secrets.js';
import {
  WEBHOOK_CLAIM_BATCH,
  WEBHOOK_DISABLE_AFTER_FAILING_HOURS,
  WEBHOOK_ERROR_MAX_LENGTH,
  WEBHOOK_LEASE_MS,
  WEBHOOK_POLL_INTERVAL_MS,
  WEBHOOK_REQUEST_TIMEOUT_MS,
  WEBHOOK_RETRY_FIRST_DELAY_SECONDS,
  WEBHOOK_RETRY_MAX_DELAY_SECONDS,
  WEBHOOK_RETRY_WINDOW_HOURS,
} from '../defaults.js';
import type { EventLog } from '../events/service.js';
import type { WebhookFanOut } from './fan-out.js';
import type { ClaimedDelivery, WebhookOutboxStore } from './outbox-store.js';
import type { WebhookEndpointStore } from './store.js';
import { checkedLookup, type HostResolver, isInternalHost, RefusedAddressError, systemResolver } from './target.js';

const HOUR_MS = 60 * 60 * 1000;

/** Delay before the attempt after `failedAttempts` failures: doubling from the first delay, capped. */
export function retryDelayMs(failedAttempts: number): number {
  const seconds = WEBHOOK_RETRY_FIRST_DELAY_SECONDS * 2 ** Math.min(failedAttempts - 1, 30);
  return Math.min(seconds, WEBHOOK_RETRY_MAX_DELAY_SECONDS) * 1000;
}

export interface DeliveryTimings {
  requestTimeoutMs: number;
  pollIntervalMs: number;
  leaseMs: number;
}

/** What went wrong, for the endpoint's last error: a status or an error code, never a body or a header. */
function describeFailure(error: unknown): string {
  if (error instanceof RefusedAddressError) return 'refused address';
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) return 'timed out';
  for (let e = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth += 1) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return `network error ${code}`;
  }
  return 'network error';
}

/**
 * One POST through `agent`, resolving to the answer's status once its head arrives. The body is
 * drained unread (the signal still bounds it); node:http never follows a redirect. A kept-alive
 * connection the receiver closed while it sat idle (Node servers do after 5 s) fails with
 * ECONNRESET on reuse: as Node's docs advise (`request.reusedSocket`), it is sent again once, on
 * another connection, rather than counted as the receiver's failure (the same webhook-id, so a
 * receiver that did read it drops the repeat).
 */
function post(url: URL, headers: OutgoingHttpHeaders, body: string, agent: HttpAgent, signal: AbortSignal, again = true): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const request = send(url, { method: 'POST', headers, agent, signal }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (again && request.reusedSocket && error.code === 'ECONNRESET' && !signal.aborted)
        resolve(post(url, headers, body, agent, signal, false));
      else reject(error);
    });
    request.end(body);
  });
}

/** How deliveries are made: the operator's settings (wiring.ts) as the worker needs them. */
export interface DeliverySettings {
  sealer: Sealer;
  now: () => number;
  /** Tests shorten these; defaults.ts holds the real ones. */
  timings?: Partial<DeliveryTimings>;
  /** Deliver to internal addresses too (development, or SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL). */
  allowInternal: boolean;
  /** Resolves receivers' names (tests pass their own). */
  resolve?: HostResolver;
}

/**
 * The back-channel logout side of the outbox (oidc/backchannel-logout.ts): where each client
 * takes logout tokens, and a freshly signed token for a row. The same loop, leases and retry
 * schedule as webhooks; no signature header (the token is the signed part) and no endpoint
 * health (a client is not disabled for failing).
 */
export interface LogoutDelivery {
  /** Each client's back-channel logout URI now; a client deleted meanwhile or without one is absent. */
  targets(clientIds: string[]): Promise<Map<string, string>>;
  /** A logout token for the client from the row's payload, signed now. */
  token(clientId: string, payload: string): Promise<string>;
}

export interface DeliveryWorker {
  start(): void;
  /** Stops claiming, aborts requests in flight and hands their rows back; resolves when nothing runs. */
  stop(): Promise<void>;
}

/**
 * The delivery loop each `service-idp start` node runs: claims due outbox rows under a lease,
 * POSTs each as a Standard Webhooks message (webhook-id, webhook-timestamp, webhook-signature),
 * and records the outcome: done on a 2xx, else retried with back-off until the retry window
 * ends. Redirects are not followed and answers are not read. An endpoint failing for
 * WEBHOOK_DISABLE_AFTER_FAILING_HOURS is disabled (a `webhook.disabled` event says so).
 * Unless `allowInternal`, a target that is or resolves to an internal address is refused
 * (target.ts): the agents' lookup checks the addresses each connection is made to.
 */
export function createDeliveryWorker({
  outbox,
  endpoints,
  fanOut,
  sealer,
  events,
  now,
  timings = {},
  allowInternal,
  resolve = systemResolver,
  onError,
  logout,
}: DeliverySettings & {
  /** Back-channel logout tokens in the same outbox; without it their rows wait. */
  logout?: LogoutDelivery;
  outbox: WebhookOutboxStore;
  endpoints: WebhookEndpointStore;
  fanOut: WebhookFanOut;
  events: EventLog;
  onError: (error: unknown) => void;
}): DeliveryWorker {
  const requestTimeoutMs = timings.requestTimeoutMs ?? WEBHOOK_REQUEST_TIMEOUT_MS;
  const pollIntervalMs = timings.pollIntervalMs ?? WEBHOOK_POLL_INTERVAL_MS;
  const leaseMs = timings.leaseMs ?? WEBHOOK_LEASE_MS;
  /** This process's name on the leases it takes. */
  const owner = randomToken('node_', 12);
  const stopping = new AbortController();
  // Kept-alive connections were checked when made; a new one resolves (and is checked) again.
  const lookup = checkedLookup(resolve, allowInternal);
  const httpAgent = new HttpAgent({ keepAlive: true, lookup });
  const httpsAgent = new HttpsAgent({ keepAlive: true, lookup });
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = true;

  /** What one attempt sends: the URL, its headers and body. */
  type Request = { url: string; headers: OutgoingHttpHeaders; body: string };

  function webhookRequest(delivery: ClaimedDelivery, target: { url: string; secretSealed: string }, at: number): Request {
    // A secret that no longer opens (another server secret) throws here, outside the attempt's
    // try: the operator's error to see in the log, not the receiver's failure to count.
    const signature = new Webhook(sealer.open(target.secretSealed)).sign(delivery.id, new Date(at), delivery.payload);
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'service-idp-webhooks',
      'webhook-id': delivery.id,
      'webhook-timestamp': String(Math.floor(at / 1000)),
      'webhook-signature': signature,
    };
    return { url: target.url, headers, body: delivery.payload };
  }

  /** OIDC Back-Channel Logout 1.0 2.5: the token as the `logout_token` form field. */
  async function logoutRequest(delivery: ClaimedDelivery, url: string, port: LogoutDelivery): Promise<Request> {
    const body = new URLSearchParams({ logout_token: await port.token(delivery.endpointId, delivery.payload) }).toString();
    return { url, headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'service-idp-logout' }, body };
  }

  async function attempt(delivery: ClaimedDelivery, request: Request): Promise<void> {
    let failure: string | undefined;
    try {
      const url = new URL(request.url);
      // An address literal or a localhost name never reaches the lookup.
      if (!allowInternal && isInternalHost(url.hostname)) throw new RefusedAddressError();
      const signal = AbortSignal.any([AbortSignal.timeout(requestTimeoutMs), stopping.signal]);
      const status = await post(url, request.headers, request.body, url.protocol === 'https:' ? httpsAgent : httpAgent, signal);
      if (status < 200 || status > 299) failure = `HTTP ${status}`;
    } catch (error) {
      if (stopping.signal.aborted) throw error;
      failure = describeFailure(error);
    }
    const done = now();
    const webhook = delivery.kind === 'webhook';
    if (failure === undefined) {
      await outbox.delivered(delivery.id, owner, done);
      if (webhook) await endpoints.recordSuccess(delivery.endpointId, done);
      return;
    }
    const error = `${failure} (attempt ${delivery.attempts})`.slice(0, WEBHOOK_ERROR_MAX_LENGTH);
    const retryAt = done + retryDelayMs(delivery.attempts);
    const giveUp = retryAt > delivery.createdAt + WEBHOOK_RETRY_WINDOW_HOURS * HOUR_MS;
    await outbox.failed(delivery.id, owner, error, done, giveUp ? null : retryAt);
    if (webhook && (await endpoints.recordFailure(delivery.endpointId, error, done, WEBHOOK_DISABLE_AFTER_FAILING_HOURS * HOUR_MS))) {
      await fanOut.reload();
      await events.record({ type: 'webhook.disabled', detail: { webhookId: delivery.endpointId, reason: 'failing' } });
    }
  }

  /** The request of a claimed row, or undefined when it has nowhere to go any more. */
  async function requestOf(
    delivery: ClaimedDelivery,
    hooks: Map<string, { url: string; secretSealed: string }>,
    clients: Map<string, string>,
  ): Promise<Request | undefined> {
    if (delivery.kind === 'webhook') {
      const target = hooks.get(delivery.endpointId);
      // Deleted since the claim: the sweeper takes its rows.
      return target && webhookRequest(delivery, target, now());
    }
    const url = clients.get(delivery.endpointId);
    if (url && logout) return logoutRequest(delivery, url, logout);
    // The client was deleted or dropped its URI: nothing to tell; done, not delivered.
    await outbox.failed(delivery.id, owner, 'no back-channel logout URI', now(), null);
    return undefined;
  }

  /** Deliveries this node is making, by outbox id. */
  const inFlight = new Map<string, Promise<void>>();
  /** False once a claim found fewer rows than it asked for; a poll, a new event or a finished delivery sets it again. */
  let moreDue = true;
  /** Wakes a drain that waits on its deliveries in flight (the poll or a new event). */
  let wake = () => {};

  /**
   * Keeps up to WEBHOOK_CLAIM_BATCH deliveries in flight, claiming more as each ends, until
   * nothing is due and nothing is in flight: a slow receiver holds only its own deliveries.
   * Rows of one user arrive in order because the claim skips a row while an earlier one of
   * the same user and endpoint is not done (in flight counts as not done).
   */
  async function drain(): Promise<void> {
    await fanOut.refreshIfStale();
    const aborted: string[] = [];
    moreDue = true;
    while (!stopping.signal.aborted) {
      const room = WEBHOOK_CLAIM_BATCH - inFlight.size;
      if (moreDue && room > 0) {
        const claimed = await outbox.claim(owner, now(), leaseMs, room);
        moreDue = claimed.length === room;
        const ids = (kind: ClaimedDelivery['kind']) => [...new Set(claimed.filter((d) => d.kind === kind).map((d) => d.endpointId))];
        const hooks = await endpoints.secrets(ids('webhook'));
        const logoutIds = ids('backchannel_logout');
        const clients = logout && logoutIds.length > 0 ? await logout.targets(logoutIds) : new Map<string, string>();
        for (const delivery of claimed) {
          const running = requestOf(delivery, hooks, clients)
            .then((request) => request && attempt(delivery, request))
            .catch((error: unknown) => {
              if (stopping.signal.aborted) aborted.push(delivery.id);
              else onError(error);
            })
            .finally(() => {
              inFlight.delete(delivery.id);
              moreDue = true;
            });
          inFlight.set(delivery.id, running);
        }
        if (moreDue && inFlight.size < WEBHOOK_CLAIM_BATCH) continue;
      }
      if (inFlight.size === 0) return;
      await Promise.race([
        ...inFlight.values(),
        new Promise<void>((resolve) => {
          wake = resolve;
        }),
      ]);
    }
    await Promise.allSettled(inFlight.values());
    // Handed back for another node (or the next start) at once, not after the lease.
    await outbox.release(aborted, owner);
  }

  function run(): void {
    if (stopped) return;
    if (running) {
      again = true;
      moreDue = true;
      wake();
      return;
    }
    running = drain()
      .catch(onError)
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          run();
        }
      });
  }

  return {
    start(): void {
      stopped = false;
      fanOut.whenEnqueued(() => setTimeout(run, 0).unref());
      timer = setInterval(run, pollIntervalMs);
      timer.unref();
      run();
    },

    async stop(): Promise<void> {
      stopped = true;
      clearInterval(timer);
      stopping.abort();
      await running;
      // Deliveries left by a drain that failed (the database went away) end too.
      await Promise.allSettled(inFlight.values());
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}
