/** Cookie header → map; the first of duplicate names wins (RFC 6265 5.4 orders the most specific first). */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of header?.split(';') ?? []) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** One cookie's value from a Cookie header. */
export const cookieValue = (header: string | undefined, name: string) => parseCookies(header).get(name);
