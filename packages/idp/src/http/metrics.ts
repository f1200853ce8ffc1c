import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Metrics in the Prometheus text format (version 0.0.4): requests and their time by
 * route pattern, method and status. Labels are route patterns (`/v1/authenticate`), never
 * URLs, query strings, bodies or user data, so the page holds nothing secret. Counters are
 * per process: Prometheus adds up the nodes. Called on the root instance, so the hook sees
 * every route. Returns the page's renderer; `listenMetrics` serves it.
 */
export function registerMetrics(app: FastifyInstance): () => string {
  const render = countRequests(app);
  renderers.set(app, render);
  return render;
}

const renderers = new WeakMap<FastifyInstance, () => string>();

/** The metrics page of an app built by buildApp. */
export function metricsPageOf(app: FastifyInstance): () => string {
  const render = renderers.get(app);
  if (!render) throw new Error('registerMetrics was not called on this app');
  return render;
}

function countRequests(app: FastifyInstance): () => string {
  const startedAt = Date.now() / 1000;
  const requests = new Map<string, { count: number; seconds: number }>();

  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `method="${request.method}",route="${route.replace(/["\\\n]/g, '_')}",status="${reply.statusCode}"`;
    const entry = requests.get(key) ?? { count: 0, seconds: 0 };
    entry.count += 1;
    entry.seconds += reply.elapsedTime / 1000;
    requests.set(key, entry);
    done();
  });

  return () =>
    [
      '# HELP service_idp_http_requests_total HTTP requests answered, by method, route pattern and status.',
      '# TYPE service_idp_http_requests_total counter',
      ...[...requests].map(([labels, e]) => `service_idp_http_requests_total{${labels}} ${e.count}`),
      '# HELP service_idp_http_request_seconds_total Time spent answering, by method, route pattern and status.',
      '# TYPE service_idp_http_request_seconds_total counter',
      ...[...requests].map(([labels, e]) => `service_idp_http_request_seconds_total{${labels}} ${e.seconds.toFixed(6)}`),
      '# HELP service_idp_process_start_time_seconds Start time of this process, Unix seconds.',
      '# TYPE service_idp_process_start_time_seconds gauge',
      `service_idp_process_start_time_seconds ${startedAt.toFixed(3)}`,
      '',
    ].join('\n');
}

/**
 * The /metrics listener: its own server, bound to loopback unless configured otherwise, so the
 * public listener (and any proxy routing to it) never serves the page. Anything but GET
 * /metrics is a 404.
 */
export async function listenMetrics(render: () => string, host: string, port: number): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const found = request.method === 'GET' && request.url?.split('?', 1)[0] === '/metrics';
    response.writeHead(found ? 200 : 404, {
      'content-type': found ? 'text/plain; version=0.0.4; charset=utf-8' : 'text/plain; charset=utf-8',
      'cache-control': 'no-store',
    });
    response.end(found ? render() : 'Not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/metrics`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
