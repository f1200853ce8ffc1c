import type { FastifyInstance } from 'fastify';

/**
 * GET /metrics in the Prometheus text format (version 0.0.4): requests and their time by
 * route pattern, method and status. Labels are route patterns (`/v1/authenticate`), never
 * URLs, query strings, bodies or user data, so the page holds nothing secret. Counters are
 * per process: Prometheus adds up the nodes. Called on the root instance, so the hook sees
 * every route.
 */
export function registerMetrics(app: FastifyInstance): void {
  const startedAt = Date.now() / 1000;
  const requests = new Map<string, { count: number; seconds: number }>();

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const key = `method="${request.method}",route="${route.replace(/["\\\n]/g, '_')}",status="${reply.statusCode}"`;
    const entry = requests.get(key) ?? { count: 0, seconds: 0 };
    entry.count += 1;
    entry.seconds += reply.elapsedTime / 1000;
    requests.set(key, entry);
  });

  app.get('/metrics', async (_request, reply) => {
    const lines = [
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
    ];
    reply.type('text/plain; version=0.0.4; charset=utf-8').header('cache-control', 'no-store');
    return lines.join('\n');
  });
}
