import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { FastifyPluginAsync } from 'fastify';
import { Paths } from 'service-protocol';

/** Serves the single-file build of service-web, so a plain page can use one <script> tag. */
export const sdkRoutes: FastifyPluginAsync = async (app) => {
  const script = await readFile(createRequire(import.meta.url).resolve('service-web/global'), 'utf8').catch(() => undefined);
  app.get(Paths.sdkScript, async (_request, reply) => {
    if (!script) return reply.code(404).send({ code: 'ERR_NOT_FOUND', message: 'service-web is not built: run npm run build.' });
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').header('access-control-allow-origin', '*');
    return script;
  });
};
