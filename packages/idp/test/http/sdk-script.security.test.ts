/**
 * Attacks on the static script routes (/sdk/v1/service-web.js, its content-addressed copy and
 * its source map), which read files from disk at start-up:
 *   - path traversal: a crafted path under /sdk/v1/ that makes the service read and return
 *     another file (the server secret, the database, package.json);
 *   - guessing: any name but the exact published ones is a 404, so nothing else is reachable;
 *   - cache confusion: a shared cache that stores the brotli answer must not hand it to a client
 *     that cannot decode it (Vary: Accept-Encoding, on 200 and 304 alike), and a validator of
 *     one encoding must not revalidate another;
 *   - credentialed reads: the public script is CORS `*` and never with credentials.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { rawGet, startTestService, type TestService } from '../support/helpers.js';

describe('script routes under attack', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('reads no other file through traversal or guessed names', async () => {
    const attempts = [
      '/sdk/v1/../../package.json',
      '/sdk/v1/..%2f..%2fpackage.json',
      '/sdk/v1/%2e%2e/%2e%2e/package.json',
      '/sdk/v1/service-web.global.js.map/../../../../package.json',
      '/sdk/v1/server-secret',
      '/sdk/v1/service.db',
      '/sdk/v1/service-web.global.js',
      '/sdk/v1/index.js',
      '/sdk/v1/service-web.js.map',
      '/sdk/v1/service-web..js',
      '/sdk/v1/service-web.%2e%2e%2fpackage.js',
    ];
    for (const path of attempts) {
      const r = await rawGet(service.url, path);
      assert.ok(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
      assert.doesNotMatch(r.body.toString('latin1'), /"dependencies"|SQLite format|ServiceWeb/, path);
    }
  });

  it('varies every answer on Accept-Encoding and keeps validators per encoding', async () => {
    const br = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'br' });
    assert.equal(br.headers.vary, 'accept-encoding');
    const notModified = await rawGet(service.url, '/sdk/v1/service-web.js', {
      'accept-encoding': 'br',
      'if-none-match': String(br.headers.etag),
    });
    assert.equal(notModified.status, 304);
    assert.equal(notModified.headers.vary, 'accept-encoding');
    // The brotli validator sent by a client that now accepts nothing encoded gets the plain script.
    const plain = await rawGet(service.url, '/sdk/v1/service-web.js', { 'if-none-match': String(br.headers.etag) });
    assert.equal(plain.status, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.match(plain.body.toString('utf8'), /ServiceWeb/);
  });

  it('never allows credentialed cross-origin reads of the script or its map', async () => {
    for (const path of ['/sdk/v1/service-web.js', '/sdk/v1/service-web.global.js.map']) {
      const r = await rawGet(service.url, path, { origin: 'https://evil.test', cookie: 'session=1' });
      assert.equal(r.status, 200, path);
      assert.equal(r.headers['access-control-allow-origin'], '*', path);
      assert.equal(r.headers['access-control-allow-credentials'], undefined, path);
      assert.equal(r.headers['set-cookie'], undefined, path);
    }
  });
});
