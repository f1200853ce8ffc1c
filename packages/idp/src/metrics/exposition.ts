/**
 * The Prometheus text format (version 0.0.4), just what this service exports: counters and
 * gauges with labels, and histograms with fixed buckets. Label values come from bounded sets
 * chosen by the callers (route patterns, reason codes), never from requests.
 */

export type Labels = Readonly<Record<string, string>>;

const escapeLabel = (value: string) => value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
const escapeHelp = (text: string) => text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function labelText(labels: Labels, extra?: [string, string]): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabel(value)}"`);
  if (extra) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

/** A number as Prometheus reads it: integers as they are, others to microseconds, infinities spelled out. */
function sample(value: number): string {
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  if (Number.isNaN(value)) return 'NaN';
  return Number.isInteger(value) ? String(value) : value.toFixed(6);
}

function header(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): string[] {
  return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
}

/** A counter (or a gauge set by the caller) keyed by its label values. */
export class LabelledValues {
  private readonly series = new Map<string, { labels: Labels; value: number }>();

  constructor(
    readonly name: string,
    readonly type: 'counter' | 'gauge',
    readonly help: string,
  ) {}

  add(labels: Labels, by = 1): void {
    const key = labelText(labels);
    const entry = this.series.get(key);
    if (entry) entry.value += by;
    else this.series.set(key, { labels, value: by });
  }

  render(): string[] {
    return [
      ...header(this.name, this.type, this.help),
      ...[...this.series.values()].map((s) => `${this.name}${labelText(s.labels)} ${sample(s.value)}`),
    ];
  }
}

/** One family of gauges read at scrape time. */
export function gaugeLines(name: string, help: string, values: readonly { labels?: Labels; value: number }[]): string[] {
  return [...header(name, 'gauge', help), ...values.map((v) => `${name}${labelText(v.labels ?? {})} ${sample(v.value)}`)];
}

/** A histogram: cumulative `_bucket{le=…}` lines ending with `+Inf`, then `_sum` and `_count`, per label set. */
export class Histogram {
  private readonly series = new Map<string, { labels: Labels; counts: number[]; sum: number; count: number }>();

  constructor(
    readonly name: string,
    readonly help: string,
    /** Upper bounds, ascending; `+Inf` is added. */
    readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelText(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
      this.series.set(key, entry);
    }
    const index = this.buckets.findIndex((bound) => value <= bound);
    if (index >= 0) entry.counts[index] = (entry.counts[index] ?? 0) + 1;
    entry.sum += value;
    entry.count += 1;
  }

  render(): string[] {
    const lines = header(this.name, 'histogram', this.help);
    for (const { labels, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        lines.push(`${this.name}_bucket${labelText(labels, ['le', String(bound)])} ${cumulative}`);
      });
      lines.push(`${this.name}_bucket${labelText(labels, ['le', '+Inf'])} ${count}`);
      lines.push(`${this.name}_sum${labelText(labels)} ${sample(sum)}`);
      lines.push(`${this.name}_count${labelText(labels)} ${count}`);
    }
    return lines;
  }
}
