/**
 * One trivial JSON route (`GET /` → `{"status":"ok"}`) with one of the per-request pieces the
 * service's HTTP stack adds (bench/http-stack.ts measures each against `bare`). Usage:
 * http-piece-server.ts PIECE, PIECE one of PIECES below.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { createWriteStream } from 'node:fs';
import helmetPlugin from '@fastify/helmet';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import { serveRequests } from './child.js';

const HELMET_OPTIONS = { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } } as const;
const Health = { response: { 200: { type: 'object', properties: { status: { type: 'string', enum: ['ok'] } }, required: ['status'] } } };

/** Each piece as the service had it before this change (or, `*-now`, as it has it now). */
const PIECES: Record<string, { logger?: boolean; add(app: FastifyInstance): Promise<void> | void }> = {
  bare: { add() {} },
  'response-schema': { add() {} },
  // @fastify/helmet 13 runs helmet(options) (parsing them, building 12 middlewares) on every request, in two hooks.
  'helmet-plugin': {
    async add(app) {
      await app.register(helmetPlugin, HELMET_OPTIONS);
    },
  },
  'helmet-headers-once': {
    async add(app) {
      const { securityHeaders } = await import('../packages/idp/src/http/security-headers.js');
      securityHeaders(app);
    },
  },
  'onSend-async-cache-control': {
    add(app) {
      app.addHook('onSend', async (_request, reply) => {
        if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
      });
    },
  },
  'onRequest-async-noop': {
    add(app) {
      app.addHook('onRequest', async () => {});
    },
  },
  'onRequest-callback-noop': {
    add(app) {
      app.addHook('onRequest', (_request, _reply, done) => done());
    },
  },
  'async-local-storage': {
    add(app) {
      const storage = new AsyncLocalStorage<{ ip: string; userAgent: string | null }>();
      app.addHook('onRequest', (request, _reply, done) => {
        storage.run({ ip: request.ip, userAgent: request.headers['user-agent']?.slice(0, 200) ?? null }, done);
      });
    },
  },
  'metrics-onResponse-async': {
    add(app) {
      const requests = new Map<string, { count: number; seconds: number }>();
      app.addHook('onResponse', async (request, reply) => {
        const route = request.routeOptions.url ?? 'unmatched';
        const key = `method="${request.method}",route="${route.replace(/["\\\n]/g, '_')}",status="${reply.statusCode}"`;
        const entry = requests.get(key) ?? { count: 0, seconds: 0 };
        entry.count += 1;
        entry.seconds += reply.elapsedTime / 1000;
        requests.set(key, entry);
      });
    },
  },
  // Request logging at info (one line per request, as the service's OneLineRequestLog), to /dev/null.
  'logger-info': { logger: true, add() {} },
};

const piece = process.argv[2] ?? 'bare';
const chosen = PIECES[piece];
if (!chosen) throw new Error(`unknown piece ${piece}; one of ${Object.keys(PIECES).join(', ')}`);
/** The service's request log: one line per request (app.ts OneLineRequestLog). */
class OneLineRequestLog extends LogController {
  override incomingRequest(): void {}
  override requestCompleted(_error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const path = request.url.split('?', 1)[0];
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    reply.log.info(
      { method: request.method, path, statusCode: reply.statusCode, ms },
      `${request.method} ${path} ${reply.statusCode} ${ms} ms`,
    );
  }
}
const app = Fastify(
  chosen.logger
    ? { logger: { level: 'info', stream: createWriteStream('/dev/null') }, logController: new OneLineRequestLog() }
    : { logger: false },
);
await chosen.add(app);
app.get('/', piece === 'response-schema' ? { schema: Health } : {}, async () => ({ status: 'ok' }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (!address || typeof address !== 'object') throw new Error('no address');
serveRequests({}, () => app.close());
process.send?.({ type: 'ready', result: { url: `http://127.0.0.1:${address.port}`, pieces: Object.keys(PIECES).join(',') } });
