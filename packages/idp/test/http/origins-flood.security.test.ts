/**
 * Attack: flooding the browser API with preflights from made-up origins, so that every one
 * makes the node read every client's origins again. A preflight carries no key, so its Origin is
 * checked against a per-node cache of all clients' origins; an unknown origin has to reload it,
 * and reloads run at most once per ORIGINS_RELOAD_INTERVAL_MS. The other side of that limit: an
 * application registered a moment ago (by the CLI, the admin API or another node) must not be
 * refused while the node has not reloaded yet, as happened when `clients create` came back
 * within a second of a reload.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ORIGINS_RELOAD_INTERVAL_MS } from '../../src/defaults.js';
import { startTestService, type TestService } from '../support/helpers.js';

describe('registered origins under a flood of unknown ones', () => {
  let service: TestService;
  let reads = 0;
  before(async () => {
    service = await startTestService();
    const list = service.ctx.clients.list.bind(service.ctx.clients);
    service.ctx.clients.list = () => {
      reads += 1;
      return list();
    };
  });
  after(() => service.close());

  const preflight = (origin: string) =>
    fetch(`${service.url}/v1/authenticate`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,x-service-key' },
    });

  it('reads the clients at most once per interval however many made-up origins ask, and refuses them all', async () => {
    const started = Date.now();
    const before = reads;
    const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => preflight(`https://made-up-${i}.test`)));
    const intervals = Math.ceil((Date.now() - started) / ORIGINS_RELOAD_INTERVAL_MS);
    for (const answer of answers) assert.equal(answer.headers.get('access-control-allow-origin'), null);
    assert.ok(reads - before <= intervals + 1, `${reads - before} reads for 40 origins in ${intervals} interval(s)`);
  });

  it('answers an application registered right after a reload, without waiting for the client to retry', async () => {
    await preflight('https://made-up-again.test'); // a reload has just run
    const origin = 'https://registered-just-now.test';
    await service.ctx.clients.create({ name: 'Just registered', origins: [origin] });
    const answer = await preflight(origin);
    assert.equal(answer.headers.get('access-control-allow-origin'), origin);
  });
});
