/**
 * The service from a given build (bench/http-stack.ts compares two: BENCH_BEFORE's and this
 * checkout's), on file-backed SQLite in a temporary folder, logger off, with one client.
 * Usage: http-service-server.ts PACKAGE_DIR DATA_DIR (PACKAGE_DIR holds dist/index.js).
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveRequests } from './child.js';
import { BENCH_ORIGIN } from './flows.js';

const [packageDir, dataDir] = process.argv.slice(2);
if (!packageDir || !dataDir) throw new Error('usage: http-service-server.ts PACKAGE_DIR DATA_DIR');
const idp = (await import(pathToFileURL(join(packageDir, 'dist', 'index.js')).href)) as typeof import('service-idp');
const config = idp.loadConfig({ port: '0', host: '127.0.0.1', data: dataDir }, {});
const service = await idp.startService(config, { logger: false });
const keys = await service.ctx.clients.create({ name: 'Bench', origins: [BENCH_ORIGIN] });
serveRequests({}, () => service.close());
process.send?.({ type: 'ready', result: { url: service.url, ...keys } });
