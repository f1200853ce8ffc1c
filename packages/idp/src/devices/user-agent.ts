import { createRequire } from 'node:module';
import type UAParser from 'ua-parser-js';

// Loaded on the first header parsed, not with the module: CLI commands only name devices.
const require = createRequire(import.meta.url);
let parseUserAgent: typeof UAParser | undefined;

/** Longest User-Agent header parsed; real ones are under 512 characters. */
const USER_AGENT_MAX_LENGTH = 1024;
const clean = (s: string | undefined) => (s ?? '').replace(/[^\p{L}\p{N} ._()-]/gu, '').slice(0, 40);

/**
 * Browser ("Chrome 131") and OS ("macOS 10.15.7") from a User-Agent header, with ua-parser-js
 * (1.x: the MIT-licensed line; 2.x is AGPL). Null when the header says nothing we recognise.
 * Only these two strings are stored, never the header itself.
 */
export function describeUserAgent(header: string | undefined): { browser: string | null; os: string | null } {
  if (!header) return { browser: null, os: null };
  parseUserAgent ??= require('ua-parser-js') as typeof UAParser;
  const { browser, os } = parseUserAgent(header.slice(0, USER_AGENT_MAX_LENGTH));
  const b = [clean(browser.name), clean(browser.major)].filter(Boolean).join(' ');
  const o = [clean(os.name === 'Mac OS' ? 'macOS' : os.name), clean(os.version)].filter(Boolean).join(' ');
  return { browser: b || null, os: o || null };
}

/** The name shown for a device the user has not named: "Chrome 131 on macOS 10.15.7". */
export function defaultDeviceName(browser: string | null, os: string | null): string {
  if (browser && os) return `${browser} on ${os}`;
  return browser ?? os ?? 'Unknown browser';
}
