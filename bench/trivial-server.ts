/**
 * Baseline B: the cheapest route the HTTP stack can serve. Same framework major and the same
 * logger setting (off) as the service, in its own process like the service.
 */
import Fastify from 'fastify';
import { serveRequests } from './child.js';

const app = Fastify({ logger: false });
app.get('/', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
const address = app.server.address();
if (!address || typeof address !== 'object') throw new Error('no address');
serveRequests({}, () => app.close());
process.send?.({ type: 'ready', result: { url: `http://127.0.0.1:${address.port}` } });
