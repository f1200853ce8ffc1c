import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP, type LookupFunction } from 'node:net';

/**
 * Where a webhook may be delivered. In production (unless SERVICE_IDP_WEBHOOK_ALLOW_INTERNAL=1)
 * a delivery must not reach the service's own network: loopback, private, link-local (cloud
 * metadata at 169.254.169.254), CGNAT, multicast, unspecified. The host is checked when an
 * endpoint is created and every address a name resolves to is checked at connect time.
 */

const INTERNAL_V4: [string, number][] = [
  ['0.0.0.0', 8], // "this network"; connecting to 0.0.0.0 reaches the local host
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, and 255.255.255.255 broadcast
];

const INTERNAL = new BlockList();
for (const [network, prefix] of INTERNAL_V4) {
  INTERNAL.addSubnet(network, prefix, 'ipv4');
  // The same IPv4 address written as IPv6: IPv4-mapped (::ffff:a.b.c.d) and NAT64 (64:ff9b::a.b.c.d).
  INTERNAL.addSubnet(`::ffff:${network}`, 96 + prefix, 'ipv6');
  INTERNAL.addSubnet(`64:ff9b::${network}`, 96 + prefix, 'ipv6');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const)
  INTERNAL.addSubnet(network, prefix, 'ipv6');

/** True for an IP address the policy refuses; false for a public one and for anything that is not an address. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  return family !== 0 && INTERNAL.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/**
 * A URL's host as a resolver sees it: no IPv6 brackets and no trailing dots (`localhost.` is
 * `localhost`). WHATWG `URL` has already lower-cased it, mapped IDN to punycode and parsed IPv4
 * forms such as 0x7f.1.
 */
export function normalizeHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '');
}

/** An internal address, or a name that always means this machine (RFC 6761: localhost and under it). */
export function isInternalHost(hostname: string): boolean {
  const host = normalizeHost(hostname);
  return host === 'localhost' || host.endsWith('.localhost') || isInternalAddress(host);
}

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a name to its addresses; tests pass their own. */
export type HostResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: HostResolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** A refused target, shown as `refused address` in the endpoint's last error. */
export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError';
}

/**
 * The `lookup` of the delivery agents: one resolution per connection, and the socket connects to
 * the addresses checked here, so a name cannot pass the check and then resolve elsewhere (DNS
 * rebinding). If any address of the answer is internal the connection is refused: an attacker
 * who mixes a public and an internal address must not get the internal one tried.
 */
export function checkedLookup(resolve: HostResolver, allowInternal: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolve(hostname)
      .then((answer) => {
        const addresses = answer.filter((a) => isIP(a.address) !== 0 && (!options.family || a.family === options.family));
        if (addresses.length === 0) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
        if (!allowInternal && answer.some((a) => isInternalAddress(a.address))) throw new RefusedAddressError();
        const [first] = addresses as [ResolvedAddress];
        if (options.all)
          callback(
            null,
            addresses.map(({ address, family }) => ({ address, family })),
          );
        else callback(null, first.address, first.family);
      })
      .catch((error: NodeJS.ErrnoException) => callback(error, '', 0));
  };
}
