import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { SDK_PINNED_SCRIPT_MAX_AGE_SECONDS, SDK_SCRIPT_MAX_AGE_SECONDS, SDK_SCRIPT_STALE_WHILE_REVALIDATE_SECONDS } from '../defaults.js';
import { errorResponses, rawResponse } from './schemas.js';

const SDK_DIR = dirname(Paths.sdkScript);
const STABLE_CACHE = `public, max-age=${SDK_SCRIPT_MAX_AGE_SECONDS}, stale-while-revalidate=${SDK_SCRIPT_STALE_WHILE_REVALIDATE_SECONDS}`;
const PINNED_CACHE = `public, max-age=${SDK_PINNED_SCRIPT_MAX_AGE_SECONDS}, immutable`;

/**
 * The <script> builds of service-web served here: the core (window.ServiceWeb) and the four
 * opt-in entries a plain page adds beside it, each as packages/web builds it (its `*\/global`
 * export). The stable path is `/sdk/v1/<name>.js`; the file's name is what its source map link names.
 */
export const SDK_SCRIPTS = [
  { name: 'service-web', file: 'service-web.global.js', what: 'service-web for a <script> tag: window.ServiceWeb' },
  { name: 'service-web-passkeys', file: 'service-web-passkeys.global.js', what: 'the passkeys entry for a <script> tag' },
  { name: 'service-web-dpop', file: 'service-web-dpop.global.js', what: 'the DPoP entry for a <script> tag' },
  { name: 'service-web-challenge', file: 'service-web-challenge.global.js', what: 'the send challenge solver for a <script> tag' },
  { name: 'service-web-devices', file: 'service-web-devices.global.js', what: 'the device management entry for a <script> tag' },
] as const;

/** The document's view of a stable script (the same whether or not service-web is built). */
const scriptSchema = (what: string) => ({
  response: {
    200: rawResponse('text/javascript', what),
    304: { description: 'Not Modified: the If-None-Match tag is current' },
    ...errorResponses(404),
  },
});
/** The pinned copy's path holds the script's hash, which changes with every build: left out of the document, named by the Link header. */
const PINNED_SCHEMA = { hide: true };

type Encoding = 'br' | 'gzip' | 'identity';
interface Representation {
  body: Buffer;
  etag: string;
}

/**
 * Serves the single-file builds of service-web, so a plain page can use <script> tags: each
 * precompressed once at start-up (gzip and brotli, chosen by Accept-Encoding), a strong ETag
 * per encoding, and its source map (sources embedded) where the script's link points. Each is
 * also at /sdk/v1/<name>.<hash>.js, cacheable for a year; the stable path names it in a
 * `Link: <...>; rel="canonical"` header. Policy: docs/operations.md ("The browser script").
 */
export const sdkRoutes: FastifyPluginAsync = async (app) => {
  for (const script of SDK_SCRIPTS) await serveScript(app, script);
};

async function serveScript(app: Parameters<FastifyPluginAsync>[0], { name, file, what }: (typeof SDK_SCRIPTS)[number]): Promise<void> {
  const stablePath = `${SDK_DIR}/${name}.js`;
  const [script, map] = await Promise.all([readBuilt(file), readBuilt(`${file}.map`)]);
  if (!script) {
    app.get(stablePath, { schema: scriptSchema(what) }, async (_request, reply) =>
      reply.code(404).send({ code: 'ERR_NOT_FOUND', message: 'service-web is not built: run npm run build.' }),
    );
    return;
  }
  // Without its map, the link would be a 404 in every browser's developer tools: drop it.
  const body = map ? script : Buffer.from(script.toString('utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n'));
  const hash = createHash('sha256').update(body).digest('hex');
  const pinnedPath = `${SDK_DIR}/${name}.${hash.slice(0, 16)}.js`;
  const tag = (suffix: string) => `"${hash.slice(0, 32)}${suffix}"`;
  // A strong ETag names one representation, so each encoding has its own (RFC 9110 8.8.3).
  const representations: Record<Encoding, Representation> = {
    identity: { body, etag: tag('') },
    gzip: { body: gzipSync(body, { level: 9 }), etag: tag('-gzip') },
    br: { body: brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }), etag: tag('-br') },
  };

  const serve = (cacheControl: string) => async (request: FastifyRequest, reply: FastifyReply) => {
    const encoding = negotiateEncoding(request.headers['accept-encoding']);
    const chosen = representations[encoding];
    reply
      .header('cache-control', cacheControl)
      .header('etag', chosen.etag)
      .header('vary', 'accept-encoding')
      .header('access-control-allow-origin', '*');
    if (cacheControl === STABLE_CACHE) reply.header('link', `<${pinnedPath}>; rel="canonical"`);
    if (matchesIfNoneMatch(request.headers['if-none-match'], chosen.etag)) return reply.code(304).send();
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.type('text/javascript; charset=utf-8').send(chosen.body);
  };
  app.get(stablePath, { schema: scriptSchema(what) }, serve(STABLE_CACHE));
  app.get(pinnedPath, { schema: PINNED_SCHEMA }, serve(PINNED_CACHE));
  if (map) {
    app.get(
      `${SDK_DIR}/${file}.map`,
      { schema: { response: { 200: rawResponse('application/json', 'the source map, sources embedded') } } },
      async (_request, reply) =>
        reply.header('cache-control', STABLE_CACHE).header('access-control-allow-origin', '*').type('application/json').send(map),
    );
  }
}

/**
 * The published service carries a copy of the script in dist/ (tsdown.config.ts), one folder up
 * from dist/http/; in the workspace, the source runs and service-web is a linked package.
 */
async function readBuilt(file: string): Promise<Buffer | undefined> {
  const candidates = [fileURLToPath(new URL(`../${file}`, import.meta.url))];
  try {
    candidates.push(`${dirname(createRequire(import.meta.url).resolve('service-web/global'))}/${file}`);
  } catch {
    // not in the workspace: only the bundled copy can exist
  }
  for (const path of candidates) {
    const content = await readFile(path).catch(() => undefined);
    if (content) return content;
  }
  return undefined;
}

/**
 * The best encoding the client accepts (RFC 9110 12.5.3): brotli before gzip at equal weight,
 * `q=0` refuses, `*` stands for any encoding not named. Our own few lines: the three
 * representations are fixed at start-up, which per-request compression plugins do not model.
 */
export function negotiateEncoding(header: string | undefined): Encoding {
  if (!header) return 'identity';
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name = '', ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (name) weights.set(name, Number.isFinite(weight) ? weight : 0);
  }
  const weight = (name: string) => weights.get(name) ?? weights.get('*') ?? 0;
  const best = (['br', 'gzip'] as const).reduce<Encoding>(
    (chosen, name) => (weight(name) > 0 && (chosen === 'identity' || weight(name) > weight(chosen)) ? name : chosen),
    'identity',
  );
  return best;
}

function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((candidate) => {
    const value = candidate.trim();
    return value === '*' || value.replace(/^W\//, '') === etag;
  });
}
