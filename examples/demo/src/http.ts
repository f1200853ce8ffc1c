/**
 * What the demo's two applications (server.ts, oidc-app.ts) share as web servers: HTML
 * escaping, the security headers of every answer, and listening on one or more addresses.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const escapeHtml = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

/** The headers every answer carries: the page's own CSP, no sniffing, no framing, no referrer, no caching. */
export const securityHeaders = (csp: string): Record<string, string> => ({
  'content-security-policy': csp,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
});

export interface Listening {
  /** The first address's URL. */
  url: string;
  close(): Promise<void>;
}

/** Serves `handler` on `port` at each of `hosts` (default loopback only); resolves once it listens. */
export async function listen(handler: RequestListener, port: number, hosts = ['127.0.0.1']): Promise<Listening> {
  const servers: Server[] = [];
  for (const host of hosts) {
    const server = createServer(handler);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      servers.push(server);
    } catch (error) {
      // An extra address (say ::1 on a host without IPv6) is optional; the first is not.
      if (servers.length === 0) throw error;
    }
  }
  const address = servers[0]?.address() as AddressInfo;
  return {
    url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
    async close() {
      await Promise.all(
        servers.map(
          (server) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
    },
  };
}
