/**
 * The metrics page as Prometheus scrapes it (docs/operations.md, "Metrics"): a service signs
 * people in (an email code, a remembered device), refuses a code (a resend too soon) and fails
 * to deliver one, queues a webhook delivery nobody takes, and then every documented family is
 * on its metrics listener with the expected values, in a well-formed exposition: HELP and TYPE
 * before each family's samples, histogram buckets cumulative and ending with `+Inf`, `_count`
 * equal to the `+Inf` bucket, and no label value that carries user data.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FACTORS, metricLabelsOf } from '../../src/factors/index.js';
import type { Mailer } from '../../src/mail/mailer.js';
import { signInMethods } from '../../src/metrics/service.js';
import {
  freePort,
  loginWithDevice,
  registerRawDevice,
  startTestService,
  TEST_DATABASE_URL,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Family {
  help: string;
  type: string;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy;

/** Parses a text-format page, failing on anything out of place: a sample before its family's HELP and TYPE, a bad line. */
function parse(page: string): Map<string, Family> {
  const families = new Map<string, Family>();
  let current: { name: string; help?: string; type?: string } | undefined;
  assert.ok(page.endsWith('\n'), 'the page ends with a line feed');
  for (const line of page.slice(0, -1).split('\n')) {
    const comment = line.match(/^# (HELP|TYPE) (\S+) (.+)$/);
    if (comment) {
      const [, kind, name, text] = comment as unknown as [string, string, string, string];
      if (current?.name !== name) {
        assert.ok(!families.has(name), `${name} appears once`);
        current = { name };
      }
      if (kind === 'HELP') current.help = text;
      else current.type = text;
      if (current.help !== undefined && current.type !== undefined)
        families.set(name, { help: current.help, type: current.type, samples: [] });
      continue;
    }
    const match = line.match(SAMPLE);
    assert.ok(match, `a sample line: ${line}`);
    const [, name, labelText = '', value] = match as unknown as [string, string, string | undefined, string];
    assert.ok(current, `${line} comes after a family header`);
    const family = families.get(current.name);
    assert.ok(family, `${current.name} has HELP and TYPE before its samples`);
    const base = family.type === 'histogram' ? name.replace(/_(bucket|sum|count)$/, '') : name;
    assert.equal(base, current.name, `${line} belongs to ${current.name}`);
    const labels: Record<string, string> = {};
    LABEL.lastIndex = 0;
    let consumed = 0;
    for (let m = LABEL.exec(labelText); m; m = LABEL.exec(labelText)) {
      labels[m[1] as string] = (m[2] as string).replace(/\\(.)/g, (_s, c: string) => (c === 'n' ? '\n' : c));
      consumed = LABEL.lastIndex;
    }
    assert.equal(consumed, labelText.length, `labels of ${line}`);
    const number = value === '+Inf' ? Number.POSITIVE_INFINITY : Number(value);
    assert.ok(!Number.isNaN(number), `${line}: a number`);
    family.samples.push({ name, labels, value: number });
  }
  return families;
}

const matches = (labels: Record<string, string>, want: Record<string, string>) => Object.entries(want).every(([k, v]) => labels[k] === v);

function sampleValue(families: Map<string, Family>, name: string, want: Record<string, string> = {}): number | undefined {
  const family = families.get(name) ?? families.get(name.replace(/_(bucket|sum|count)$/, ''));
  return family?.samples.find((s) => s.name === name && matches(s.labels, want))?.value;
}

/** Every histogram series: buckets ascending and cumulative, the last `+Inf`, `_count` equal to it. */
function checkHistogram(family: Family, name: string): number {
  const series = new Map<string, Sample[]>();
  for (const sample of family.samples) {
    const { le, ...rest } = sample.labels;
    const key = JSON.stringify(rest);
    series.set(key, [...(series.get(key) ?? []), sample]);
  }
  for (const [key, samples] of series) {
    const buckets = samples.filter((s) => s.name === `${name}_bucket`);
    assert.ok(buckets.length > 1, `${key} has buckets`);
    assert.equal(buckets.at(-1)?.labels.le, '+Inf', `${key}: the last bucket is +Inf`);
    for (let i = 1; i < buckets.length; i++) {
      const [a, b] = [buckets[i - 1] as Sample, buckets[i] as Sample];
      assert.ok(Number(a.labels.le) < (b.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(b.labels.le)), `${key}: le ascending`);
      assert.ok(a.value <= b.value, `${key}: buckets cumulative`);
    }
    const count = samples.find((s) => s.name === `${name}_count`);
    const sum = samples.find((s) => s.name === `${name}_sum`);
    assert.equal(count?.value, buckets.at(-1)?.value, `${key}: _count equals the +Inf bucket`);
    assert.ok(sum && sum.value >= 0, `${key}: a _sum`);
  }
  return series.size;
}

describe('the metrics page', () => {
  let service: TestService;
  let page: string;
  let families: Map<string, Family>;
  const signedIn = uniqueEmail('metrics-signed-in');
  const undeliverable = uniqueEmail('metrics-undeliverable');
  const secrets: string[] = [signedIn, undeliverable];

  before(async () => {
    // Mail to one address fails as an SMTP server that refuses it would; the rest is kept.
    const mailer: Mailer = {
      async send(mail) {
        if (mail.to === undeliverable) throw new Error('550 mailbox unavailable');
      },
      describe: () => 'test mailer',
      close() {},
    };
    service = await startTestService({ testMode: true, mailer, env: { SERVICE_IDP_METRICS_PORT: '0' } });
    // An endpoint nobody listens on: the delivery fails and waits for its retry, pending.
    const hook = await service.ctx.webhooks.create({ url: `http://127.0.0.1:${await freePort()}/hooks`, events: ['all'] }, 'test');
    secrets.push(hook.id, hook.secret, service.publishableKey, service.secretKey, service.clientId);

    const device = await registerRawDevice(service, signedIn); // an email code, then a device: sign_in.succeeded (otp)
    secrets.push(device.deviceId);
    assert.equal((await loginWithDevice(service, device, signedIn)).status, 'SUCCESS'); // a remembered device (swk)
    // A second code moments later: refused by the resend spacing, a failed sign-in step.
    assert.equal((await service.post('/v1/authenticate', { userid: signedIn, cryptoVersion: 'v1' })).status, 429);
    assert.equal((await service.post('/v1/authenticate', { userid: undeliverable, cryptoVersion: 'v1' })).status, 503);
    const user = await service.ctx.users.show(signedIn);
    secrets.push(user.id);

    const response = await fetch(service.metricsUrl as string);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    page = await response.text();
    families = parse(page);
  });

  after(() => service?.close());

  it('is a well-formed exposition: every family has HELP and a known TYPE, counters end in _total, units are base units', () => {
    assert.ok(families.size >= (TEST_DATABASE_URL ? 17 : 14), [...families.keys()].join(', '));
    for (const [name, family] of families) {
      assert.match(name, /^service_idp_[a-z0-9_]+$/, 'one prefix, snake case');
      assert.ok(['counter', 'gauge', 'histogram'].includes(family.type), `${name}: ${family.type}`);
      assert.ok(family.help.length > 10, `${name} explains itself`);
      if (family.type === 'counter') assert.match(name, /_total$/, `${name}: a counter ends in _total`);
      else assert.doesNotMatch(name, /_total$/, `${name}: only counters end in _total`);
      assert.doesNotMatch(name, /_(ms|milliseconds|minutes|hours|bytes_kb)(_|$)/, `${name}: base units`);
    }
  });

  it('times requests in a histogram by route pattern, method and status class', () => {
    const name = 'service_idp_http_request_duration_seconds';
    const family = families.get(name);
    assert.equal(family?.type, 'histogram');
    assert.ok(checkHistogram(family, name) >= 3);
    const count = (labels: Record<string, string>) => sampleValue(families, `${name}_count`, labels);
    assert.equal(count({ method: 'POST', route: '/v1/authenticate', status_class: '2xx' }), 2);
    assert.equal(count({ method: 'POST', route: '/v1/authenticate', status_class: '4xx' }), 1);
    assert.equal(count({ method: 'POST', route: '/v1/authenticate', status_class: '5xx' }), 1);
    assert.equal(count({ method: 'POST', route: '/v1/email-otp/verify', status_class: '2xx' }), 1);
    // The counters that were there before stay, by exact status.
    assert.equal(sampleValue(families, 'service_idp_http_requests_total', { route: '/v1/authenticate', status: '429' }), 1);
    assert.ok((sampleValue(families, 'service_idp_http_request_seconds_total', { route: '/v1/authenticate', status: '200' }) ?? 0) > 0);
  });

  it('counts sign-ins by outcome and method, second factors, and failures by step and reason', () => {
    assert.equal(sampleValue(families, 'service_idp_sign_ins_total', { outcome: 'succeeded', method: 'otp' }), 1);
    assert.equal(sampleValue(families, 'service_idp_sign_ins_total', { outcome: 'succeeded', method: 'device' }), 1);
    assert.equal(sampleValue(families, 'service_idp_sign_ins_total', { outcome: 'failed', method: 'start' }), 2);
    assert.equal(sampleValue(families, 'service_idp_sign_in_failures_total', { step: 'authenticate', reason: 'ERR_RATE_LIMITED' }), 1);
    assert.equal(sampleValue(families, 'service_idp_sign_in_failures_total', { step: 'authenticate', reason: 'ERR_DELIVERY_FAILED' }), 1);
    assert.equal(families.get('service_idp_sign_in_second_factors_total')?.type, 'counter');
  });

  it('counts codes sent by channel and purpose, and refused ones by reason and limit', () => {
    assert.equal(sampleValue(families, 'service_idp_codes_sent_total', { channel: 'email', purpose: 'sign-in' }), 1);
    assert.equal(sampleValue(families, 'service_idp_codes_refused_total', { reason: 'rate_limited', limit: 'resend' }), 1);
    assert.equal(sampleValue(families, 'service_idp_codes_refused_total', { reason: 'delivery_failed', limit: 'none' }), 1);
  });

  it('reads the webhook backlog and its oldest pending age from the database at scrape time', () => {
    assert.ok((sampleValue(families, 'service_idp_webhook_deliveries_pending') ?? 0) >= 1);
    const age = sampleValue(families, 'service_idp_webhook_oldest_pending_age_seconds');
    assert.ok(age !== undefined && age >= 0 && age < 60, String(age));
  });

  it('shows the PostgreSQL pool on PostgreSQL only, and the event-loop delay', () => {
    if (TEST_DATABASE_URL) {
      const active = sampleValue(families, 'service_idp_db_pool_connections', { state: 'active' });
      const idle = sampleValue(families, 'service_idp_db_pool_connections', { state: 'idle' });
      assert.ok(active !== undefined && idle !== undefined && active + idle >= 1, `${active} + ${idle}`);
      assert.ok((sampleValue(families, 'service_idp_db_pool_max_connections') ?? 0) >= 1);
      assert.equal(sampleValue(families, 'service_idp_db_pool_waiting_queries'), 0);
    } else {
      for (const name of ['service_idp_db_pool_connections', 'service_idp_db_pool_max_connections', 'service_idp_db_pool_waiting_queries'])
        assert.ok(!families.has(name), `${name}: SQLite has no pool`);
    }
    for (const name of ['p50', 'p99', 'max']) {
      const value = sampleValue(families, `service_idp_event_loop_delay_${name}_seconds`);
      assert.ok(value !== undefined && value >= 0 && value < 10, `${name}: ${value}`);
    }
    assert.ok((sampleValue(families, 'service_idp_process_start_time_seconds') ?? 0) > 1.7e9);
  });

  it('carries no user data: no address, id, key or secret, and every label value from a bounded set', () => {
    for (const secret of secrets) assert.ok(!page.includes(secret), `${secret.slice(0, 8)}… is not on the page`);
    assert.ok(!page.includes('@'), 'no address at all');
    for (const family of families.values())
      for (const { labels } of family.samples)
        for (const [label, value] of Object.entries(labels)) {
          if (label === 'route') assert.match(value, /^(\/[a-zA-Z0-9._:*-]*)+$|^unmatched$/, 'a route pattern');
          else assert.match(value, /^[A-Za-z0-9_.+-]{1,40}$/, `${label}="${value}"`);
        }
  });
});

describe('signInMethods (the factors of an amr)', () => {
  const LABELS = metricLabelsOf(FACTORS);
  it('names the first factor and the second', () => {
    assert.deepEqual(signInMethods(LABELS, ['otp']), { method: 'otp', mfa: 'none' });
    assert.deepEqual(signInMethods(LABELS, ['swk']), { method: 'device', mfa: 'none' });
    assert.deepEqual(signInMethods(LABELS, ['hwk', 'user']), { method: 'passkey', mfa: 'none' });
    assert.deepEqual(signInMethods(LABELS, ['swk', 'user', 'mfa']), { method: 'passkey', mfa: 'passkey' }, 'a passkey counted as MFA');
    assert.deepEqual(signInMethods(LABELS, ['otp', 'mfa', 'totp']), { method: 'otp', mfa: 'totp' });
    assert.deepEqual(signInMethods(LABELS, ['swk', 'mfa', 'recovery_code']), { method: 'device', mfa: 'recovery_code' });
    assert.deepEqual(
      signInMethods(LABELS, ['swk', 'mfa', 'user']),
      { method: 'device', mfa: 'passkey' },
      'a device, then a synced passkey',
    );
    assert.deepEqual(signInMethods(LABELS, ['otp', 'mfa', 'hwk', 'user']), { method: 'otp', mfa: 'passkey' });
    assert.deepEqual(signInMethods(LABELS, ['otp'], 'session'), { method: 'session', mfa: 'none' });
    assert.deepEqual(signInMethods(LABELS, ['fed']), { method: 'upstream', mfa: 'none' }, 'an upstream sign-in has its own label');
    assert.deepEqual(
      signInMethods(LABELS, ['fed', 'otp', 'mfa', 'totp']),
      { method: 'upstream', mfa: 'totp' },
      'linked by the emailed code',
    );
    assert.deepEqual(signInMethods(LABELS, ['someone@example.com']), { method: 'other', mfa: 'none' }, 'nothing unknown passes');
  });
});
