import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ISSUER_FILE } from '../config.js';
import { UsageError } from './command.js';

/** A whole-number flag within [min, max], else a usage error naming it. */
export function wholeNumber(flag: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^-?\d+$/.test(raw) || value < min || value > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, not "${raw}"`);
  return value;
}

/** Plain columns with a header row, for people; --json is for scripts. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((row) => row[i]?.length ?? 0)));
  return [header, ...rows]
    .map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join('  '))
    .join('\n');
}

/** --cursor as a list call takes it. */
export const cursor = (raw: string | undefined) => (raw === undefined ? {} : { cursor: raw });

/** An epoch-milliseconds column: ISO 8601, or '-' for never. */
export const time = (at: number | null) => (at === null ? '-' : new Date(at).toISOString());

/** --since: an ISO 8601 date or time, or a duration back from now (90m, 24h, 7d). */
export function sinceTime(raw: string | undefined, now: number, flag = '--since'): number | undefined {
  if (raw === undefined) return undefined;
  const ago = /^(\d{1,6})([mhd])$/.exec(raw);
  if (ago) return now - Number(ago[1]) * { m: 60_000, h: 3_600_000, d: 86_400_000 }[ago[2] as 'm' | 'h' | 'd'];
  const at = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`${flag} must be a date (2026-01-31, 2026-01-31T12:00:00Z) or a duration (90m, 24h, 7d), not "${raw}"`);
  return at;
}

/** The URL the service serves on this data folder: --issuer / SERVICE_IDP_ISSUER, else what the last start recorded. */
export function servedIssuer(dataDir: string, explicit: string | undefined): string {
  if (explicit) return explicit.replace(/\/+$/, '');
  try {
    return readFileSync(join(dataDir, ISSUER_FILE), 'utf8').trim();
  } catch {
    throw new UsageError(
      `cannot tell which URL the service serves: no service has started on ${dataDir} yet. Pass --issuer URL (or SERVICE_IDP_ISSUER)`,
    );
  }
}
