import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ServiceError } from '../errors.js';
import type { ServiceMetrics } from '../metrics/service.js';

/**
 * Metrics in the Prometheus text format (version 0.0.4): the service's counters and gauges
 * (metrics/service.ts) and, from here, each request's route pattern, method, status and time.
 * Labels are route patterns (`/v1/authenticate`), never URLs, query strings, bodies or user
 * data, so the page holds nothing secret. Counters are per process: Prometheus adds up the
 * nodes. Called on the root instance, so the hooks see every route. Returns the page's
 * renderer; `listenMetrics` serves it.
 */
export function registerMetrics(app: FastifyInstance, metrics: ServiceMetrics): () => Promise<string> {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.requestAnswered(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  // The only refusal of a code that is not a throttle's: its transport did not take it (otp/service.ts).
  app.addHook('onError', (_request, _reply, error, done) => {
    if (error instanceof ServiceError && error.code === 'ERR_DELIVERY_FAILED') metrics.deliveryFailed();
    done();
  });
  const render = () => metrics.render();
  renderers.set(app, render);
  return render;
}

const renderers = new WeakMap<FastifyInstance, () => Promise<string>>();

/** The metrics page of an app built by buildApp. */
export function metricsPageOf(app: FastifyInstance): () => Promise<string> {
  const render = renderers.get(app);
  if (!render) throw new Error('registerMetrics was not called on this app');
  return render;
}

/**
 * The /metrics listener: its own server, bound to loopback unless configured otherwise, so the
 * public listener (and any proxy routing to it) never serves the page. Anything but GET
 * /metrics is a 404.
 */
export async function listenMetrics(
  render: () => Promise<string>,
  host: string,
  port: number,
): Promise<{ url: string; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const found = request.method === 'GET' && request.url?.split('?', 1)[0] === '/metrics';
    const answer = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      response.writeHead(status, { 'content-type': type, 'cache-control': 'no-store' });
      response.end(body);
    };
    if (!found) return answer(404, 'Not found\n');
    render().then(
      (page) => answer(200, page, 'text/plain; version=0.0.4; charset=utf-8'),
      () => answer(500, 'The metrics could not be read.\n'),
    );
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
