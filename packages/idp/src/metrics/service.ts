import { type IntervalHistogram, monitorEventLoopDelay } from 'node:perf_hooks';
import { gaugeLines, Histogram, LabelledValues } from './exposition.js';

/**
 * The service's metrics (docs/operations.md, "Metrics", lists every family). Counters are per
 * process; the webhook backlog is read from the shared database at scrape time. Every label
 * value is taken from a fixed set here (anything else becomes `other`), so nothing a client
 * sends (an address, an id, a token) can reach the page.
 */

/** Request latency buckets, seconds: Prometheus' defaults, which span a cached answer to a slow SMTP send. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;

/** What the event log tells its listeners: the type and the non-secret detail of a recorded event. */
export interface RecordedEvent {
  type: string;
  detail: Record<string, string | number | boolean> | null;
}

/** Pending webhook deliveries (not delivered, not given up), across all nodes. */
export interface WebhookBacklog {
  pending: number;
  /** created_at of the oldest pending delivery, epoch ms; null when none. */
  oldestCreatedAt: number | null;
}

/** A connection pool's use right now (PostgreSQL's pg Pool); undefined on SQLite (one in-process connection). */
export interface PoolUse {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface MetricsSources {
  now: () => number;
  /** The factors' labels (factors/index.ts): sign-ins are counted by them. */
  factors: readonly FactorLabel[];
  webhookBacklog: () => Promise<WebhookBacklog>;
  poolUse: () => PoolUse | undefined;
}

/** sign_in.failed's `step` (a browser path) → a short label. */
const STEPS: Record<string, string> = {
  '/authenticate': 'authenticate',
  '/email-otp/verify': 'email_otp',
  '/device/verify': 'device',
  '/mfa/initiate': 'mfa_initiate',
  '/mfa/verify': 'mfa_verify',
  '/passkeys/authentication': 'passkey',
};
const CHANNELS = new Set(['email', 'sms']);
const PURPOSES = new Set(['sign-in', 'mfa', 'mfa-enroll', 'mfa-change-current', 'mfa-change', 'mfa-proof', 'link']);
/** The service's own error codes only (errors.ts spells them ERR_…); bounded by that list. */
const REASON = /^ERR_[A-Z_]{1,40}$/;

const oneOf = (set: ReadonlySet<string>, value: unknown) => (typeof value === 'string' && set.has(value) ? value : 'other');

/** A factor's metric label in one role, with the amr values a pass in that role adds (factors/index.ts metricLabelsOf). */
export interface FactorLabel {
  role: 'first' | 'second';
  label: string;
  amr: readonly string[];
}

/** The label of the factor whose amr values hold all of `part`, the narrowest one first (a device's `swk` is not a passkey's). */
function labelOf(labels: readonly FactorLabel[], role: FactorLabel['role'], part: readonly string[]): string | undefined {
  const holding = labels.filter((entry) => entry.role === role && part.length > 0 && part.every((value) => entry.amr.includes(value)));
  return holding.sort((a, b) => a.amr.length - b.amr.length)[0]?.label;
}

/**
 * The first factor and the second of a sign-in, from its `amr` (RFC 8176 values plus our MFA
 * method names) and the factors' labels: the factors before `mfa` are the first, those after it
 * the second. A first part no one factor holds (an upstream sign-in linked by the emailed code:
 * `fed otp`) is named by its first value; a factor that counted as MFA by itself (a passkey) has
 * nothing after `mfa`. Only the factors' labels (and `session`, `none`, `other`) leave here.
 */
export function signInMethods(labels: readonly FactorLabel[], amr: readonly string[], via?: unknown): { method: string; mfa: string } {
  const at = amr.indexOf('mfa');
  const first = at < 0 ? amr : amr.slice(0, at);
  const second = at < 0 ? [] : amr.slice(at + 1);
  const method =
    via === 'session' ? 'session' : (labelOf(labels, 'first', first) ?? labelOf(labels, 'first', first.slice(0, 1)) ?? 'other');
  if (at < 0) return { method, mfa: 'none' };
  const mfa =
    second.length > 0
      ? (labelOf(labels, 'second', second) ?? labelOf(labels, 'second', second.slice(0, 1)))
      : labelOf(labels, 'second', first);
  return { method, mfa: mfa ?? 'other' };
}

/**
 * What a throttle subject of the code sends says about the limit (otp/service.ts names them:
 * `send:ip:<ip>`, `send:subnet:<net>`, `send:to:<purpose>:<key>` for the resend spacing,
 * `send:to:<key>`, `send:budget:service|application:…` for the send budgets, `send:sms-prefix:…`
 * and `send:sms-cost` for the SMS number-block limit and cost cap, otp/send-rules.ts); other
 * subjects (passkey sign-ins) are not code sends. Only the kind of limit leaves this function.
 */
export function sendLimitOf(
  subject: string,
): 'network' | 'subnet' | 'resend' | 'recipient' | 'service_budget' | 'application_budget' | 'sms_prefix' | 'sms_cost' | undefined {
  if (subject.startsWith('send:ip:')) return 'network';
  if (subject.startsWith('send:subnet:')) return 'subnet';
  if (subject.startsWith('send:budget:service:')) return 'service_budget';
  if (subject.startsWith('send:budget:application:')) return 'application_budget';
  if (subject.startsWith('send:sms-prefix:')) return 'sms_prefix';
  if (subject === 'send:sms-cost') return 'sms_cost';
  if (!subject.startsWith('send:to:')) return undefined;
  return subject.slice('send:to:'.length).includes(':') ? 'resend' : 'recipient';
}

export interface ServiceMetrics {
  /** A request answered: `route` is the matched route pattern (or `unmatched`), never the URL. */
  requestAnswered(method: string, route: string, status: number, seconds: number): void;
  /** The event log's listener: sign-ins and code sends as they are recorded. */
  eventRecorded(event: RecordedEvent): void;
  /** A succeeded sign-in whose event was written by its own statement, not through the event log's record (http/metrics.ts). */
  signedIn: (amr: readonly string[], via?: unknown) => void;
  /** The throttle's listener: a refused code send by the limit it hit; other throttles are not counted here. */
  throttled(subject: string): void;
  /** A code the transport did not accept (ERR_DELIVERY_FAILED). */
  deliveryFailed(): void;
  /**
   * The page. The event-loop delay covers the time since the previous scrape (then starts
   * over), as a quantile over the process's life would hide a recent stall; the webhook
   * backlog is left out when the database does not answer.
   */
  render(): Promise<string>;
  /** Stops the event-loop monitor. */
  close(): void;
}

export function createServiceMetrics(sources: MetricsSources): ServiceMetrics {
  const startedAt = Date.now() / 1000;
  const requests = new LabelledValues(
    'service_idp_http_requests_total',
    'counter',
    'HTTP requests answered, by method, route pattern and status.',
  );
  const requestSeconds = new LabelledValues(
    'service_idp_http_request_seconds_total',
    'counter',
    'Time spent answering, by method, route pattern and status (the latency histogram has the distribution).',
  );
  const latency = new Histogram(
    'service_idp_http_request_duration_seconds',
    'Time from receiving a request to sending its answer, by method, route pattern and status class.',
    LATENCY_BUCKETS,
  );
  const signIns = new LabelledValues(
    'service_idp_sign_ins_total',
    'counter',
    'Sign-ins by outcome (succeeded, failed) and method (succeeded: the first factor; failed: the step refused).',
  );
  const secondFactors = new LabelledValues(
    'service_idp_sign_in_second_factors_total',
    'counter',
    'Succeeded sign-ins that passed a second factor, by that factor.',
  );
  const failures = new LabelledValues('service_idp_sign_in_failures_total', 'counter', 'Refused sign-in steps, by step and error code.');
  const codesSent = new LabelledValues(
    'service_idp_codes_sent_total',
    'counter',
    'One-time codes handed to a mail or SMS transport, by channel and purpose.',
  );
  const codesRefused = new LabelledValues(
    'service_idp_codes_refused_total',
    'counter',
    'One-time code sends refused, by reason (rate_limited, delivery_failed) and, when rate limited, the limit.',
  );
  const loopDelay: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();

  const failedStep: Record<string, string> = {
    authenticate: 'start',
    email_otp: 'otp',
    device: 'device',
    mfa_initiate: 'mfa',
    mfa_verify: 'mfa',
    passkey: 'passkey',
  };

  /** A succeeded sign-in, by its factors. */
  function signedIn(amr: readonly string[], via?: unknown): void {
    const { method, mfa } = signInMethods(sources.factors, amr, via);
    signIns.add({ outcome: 'succeeded', method });
    if (mfa !== 'none' && method !== 'session') secondFactors.add({ method: mfa });
  }

  return {
    requestAnswered(method: string, route: string, status: number, seconds: number): void {
      const labels = { method, route, status: String(status) };
      requests.add(labels);
      requestSeconds.add(labels, seconds);
      latency.observe({ method, route, status_class: `${Math.floor(status / 100)}xx` }, seconds);
    },

    eventRecorded(event: RecordedEvent): void {
      const detail = event.detail ?? {};
      if (event.type === 'sign_in.succeeded') {
        signedIn(typeof detail.amr === 'string' ? detail.amr.split(' ') : [], detail.via);
      } else if (event.type === 'sign_in.failed') {
        const step = typeof detail.step === 'string' ? (STEPS[detail.step] ?? 'other') : 'other';
        signIns.add({ outcome: 'failed', method: failedStep[step] ?? 'other' });
        failures.add({ step, reason: typeof detail.reason === 'string' && REASON.test(detail.reason) ? detail.reason : 'other' });
      } else if (event.type === 'otp.sent') {
        codesSent.add({ channel: oneOf(CHANNELS, detail.channel), purpose: oneOf(PURPOSES, detail.purpose) });
      }
    },

    signedIn,

    throttled(subject: string): void {
      const limit = sendLimitOf(subject);
      if (limit) codesRefused.add({ reason: 'rate_limited', limit });
    },

    deliveryFailed(): void {
      codesRefused.add({ reason: 'delivery_failed', limit: 'none' });
    },

    async render(): Promise<string> {
      const backlog = await sources.webhookBacklog().catch(() => undefined);
      const pool = sources.poolUse();
      const delay = (ns: number) => (Number.isFinite(ns) ? ns / 1e9 : 0);
      const loop = { p50: delay(loopDelay.percentile(50)), p99: delay(loopDelay.percentile(99)), max: delay(loopDelay.max) };
      loopDelay.reset();
      const lines = [
        ...requests.render(),
        ...requestSeconds.render(),
        ...latency.render(),
        ...signIns.render(),
        ...secondFactors.render(),
        ...failures.render(),
        ...codesSent.render(),
        ...codesRefused.render(),
        ...(backlog
          ? [
              ...gaugeLines(
                'service_idp_webhook_deliveries_pending',
                'Webhook deliveries not yet delivered or given up, all nodes (read from the database).',
                [{ value: backlog.pending }],
              ),
              ...gaugeLines(
                'service_idp_webhook_oldest_pending_age_seconds',
                'Age of the oldest pending webhook delivery (0 when none), all nodes.',
                [{ value: backlog.oldestCreatedAt === null ? 0 : Math.max(0, (sources.now() - backlog.oldestCreatedAt) / 1000) }],
              ),
            ]
          : []),
        ...(pool
          ? [
              ...gaugeLines('service_idp_db_pool_connections', 'PostgreSQL pool connections of this process, by state.', [
                { labels: { state: 'active' }, value: pool.total - pool.idle },
                { labels: { state: 'idle' }, value: pool.idle },
              ]),
              ...gaugeLines('service_idp_db_pool_max_connections', 'Largest size of the PostgreSQL pool (SERVICE_IDP_DB_POOL_SIZE).', [
                { value: pool.max },
              ]),
              ...gaugeLines('service_idp_db_pool_waiting_queries', 'Queries waiting for a free PostgreSQL pool connection.', [
                { value: pool.waiting },
              ]),
            ]
          : []),
        ...gaugeLines('service_idp_event_loop_delay_p50_seconds', 'Median event-loop delay since the previous scrape.', [
          { value: loop.p50 },
        ]),
        ...gaugeLines('service_idp_event_loop_delay_p99_seconds', '99th percentile event-loop delay since the previous scrape.', [
          { value: loop.p99 },
        ]),
        ...gaugeLines('service_idp_event_loop_delay_max_seconds', 'Longest event-loop delay since the previous scrape.', [
          { value: loop.max },
        ]),
        ...gaugeLines('service_idp_process_start_time_seconds', 'Start time of this process, Unix seconds.', [{ value: startedAt }]),
        '',
      ];
      return lines.join('\n');
    },

    close(): void {
      loopDelay.disable();
    },
  };
}
