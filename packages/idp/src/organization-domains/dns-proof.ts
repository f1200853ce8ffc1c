import { Resolver } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import { safeEqual } from '../crypto/secrets.js';

/**
 * Proof that an organization owns a domain: a TXT record, at a name under the domain that only
 * its DNS administrator can publish, carrying the claim's random token. The name is fixed and
 * derived from the domain alone, so a record elsewhere (the apex, another domain) proves nothing.
 */
export const VERIFICATION_LABEL = '_service-idp-verification';
export const recordName = (domain: string) => `${VERIFICATION_LABEL}.${domain}`;
export const recordValue = (token: string) => `service-idp-domain-verification=${token}`;

/** The TXT records at a name, each as its strings (RFC 1035 character-strings); throws when the look-up fails. */
export type TxtLookup = (name: string) => Promise<string[][]>;

/**
 * node:dns's resolver (DNS over UDP and TCP), with the operator's servers when set
 * (SERVICE_IDP_DNS_SERVERS: tests point it at their own server), and not the system's
 * getaddrinfo, which reads no TXT records.
 */
export function createTxtLookup(servers: readonly string[] | undefined, timeoutMs: number): TxtLookup {
  const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
  if (servers && servers.length > 0) resolver.setServers([...servers]);
  return (name) => resolver.resolveTxt(name);
}

/** True when the domain's verification name has a TXT record with exactly this claim's value (its strings joined). */
export async function publishesToken(lookup: TxtLookup, domain: string, token: string): Promise<boolean> {
  let records: string[][];
  try {
    records = await lookup(recordName(domain));
  } catch {
    return false;
  }
  const expected = recordValue(token);
  return records.some((strings) => safeEqual(strings.join(''), expected));
}

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * A domain as claims and addresses are compared: lower case, IDNs in punycode (so a look-alike
 * in another script is another domain), no trailing dot, two labels at least, not an IP
 * address. Undefined when it is none of these.
 */
export function normalizeDomain(raw: string): string | undefined {
  const trimmed = raw.trim().replace(/\.$/, '');
  if (trimmed.length === 0 || trimmed.length > 253) return undefined;
  // domainToASCII reads a URL's host, cutting at / ? # and taking credentials: none of those is a domain.
  if (/[\s/\\@:?#%[\]]/.test(trimmed)) return undefined;
  const ascii = domainToASCII(trimmed);
  if (!ascii || ascii.length > 253) return undefined;
  const labels = ascii.split('.');
  if (labels.length < 2 || !labels.every((label) => LABEL.test(label))) return undefined;
  // The last label of a name is never all digits (RFC 3696 2): this refuses 10.0.0.1.
  if (/^\d+$/.test(labels[labels.length - 1] as string)) return undefined;
  return ascii;
}

/** The domain of an address (already normalized by the sign-in), as normalizeDomain gives it. */
export function domainOfAddress(email: string): string | undefined {
  const at = email.lastIndexOf('@');
  return at < 0 ? undefined : normalizeDomain(email.slice(at + 1));
}
