import { isIPv4, isIPv6 } from 'node:net';
import type { Limit } from '../throttle/service.js';

/** A code's channel, as budgets count it. */
export type BudgetChannel = 'email' | 'sms';

/** Send budgets per channel: the whole service's, and each application's (defaults.ts MAIL_BUDGET_SERVICE …). */
export type SendBudgets = Record<BudgetChannel, { service: readonly Limit[]; application: readonly Limit[] }>;

const UNITS: Record<string, number> = { minute: 60, hour: 60 * 60, day: 24 * 60 * 60 };

/**
 * An operator's budget setting: `600/minute,10000/hour,100000/day` (any of the three units, each
 * at most once). Throws with the reason; the caller names the setting.
 */
export function parseBudget(text: string): Limit[] {
  const limits = text.split(',').map((part) => {
    const match = /^\s*(\d{1,9})\s*\/\s*(minute|hour|day)\s*$/.exec(part);
    if (!match) throw new Error(`"${part.trim()}" is not N/minute, N/hour or N/day`);
    const max = Number(match[1]);
    if (max < 1) throw new Error('a budget is at least 1 (a channel nobody may use is turned off, not budgeted)');
    return { max, windowSeconds: UNITS[match[2] as string] as number };
  });
  if (new Set(limits.map((limit) => limit.windowSeconds)).size !== limits.length) throw new Error('each unit at most once');
  return limits.sort((a, b) => a.windowSeconds - b.windowSeconds);
}

/** An IPv6 address's eight groups, written out (`::` expanded; an embedded IPv4 tail as two groups). */
function ipv6Groups(ip: string): string[] {
  const [head = '', tail] = ip.toLowerCase().split('%')[0]?.split('::') ?? [];
  const groupsOf = (part: string) =>
    part === ''
      ? []
      : part.split(':').flatMap((group) => {
          if (!group.includes('.')) return [group.padStart(4, '0')];
          const [a = 0, b = 0, c = 0, d = 0] = group.split('.').map(Number);
          return [((a << 8) | b).toString(16).padStart(4, '0'), ((c << 8) | d).toString(16).padStart(4, '0')];
        });
  const front = groupsOf(head);
  const back = tail === undefined ? [] : groupsOf(tail);
  return [...front, ...Array(8 - front.length - back.length).fill('0000'), ...back];
}

/**
 * The network a client address counts in for SEND_PER_SUBNET: an IPv4 address's /24, an IPv6
 * address's /48 (a site's usual allocation, RFC 6177). An IPv4-mapped IPv6 address
 * (`::ffff:192.0.2.7`, a dual-stack socket's) is its IPv4 address.
 */
export function subnetOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)?.[1];
  const v4 = mapped ?? ip;
  if (isIPv4(v4)) return `${v4.split('.').slice(0, 3).join('.')}.0/24`;
  if (isIPv6(ip)) return `${ipv6Groups(ip).slice(0, 3).join(':')}::/48`;
  return ip;
}
