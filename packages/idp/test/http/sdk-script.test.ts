/**
 * GET /sdk/v1/service-web.js over real HTTP: the compressed representation the client asks
 * for (bytes checked by decompressing them), a strong ETag per representation answered with
 * 304, the cache lifetimes of the stable and the content-addressed path, and a source map
 * link that resolves to a map embedding its sources.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { negotiateEncoding } from '../../src/http/sdk.js';
import { rawGet, startTestService, type TestService } from '../support/helpers.js';

describe('the served browser script', () => {
  let service: TestService;
  let script: string;
  before(async () => {
    service = await startTestService();
    script = (await rawGet(service.url, '/sdk/v1/service-web.js')).body.toString('utf8');
  });
  after(() => service.close());

  it('sends the plain script to a client that accepts no encoding', async () => {
    const r = await rawGet(service.url, '/sdk/v1/service-web.js');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-encoding'], undefined);
    assert.match(String(r.headers['content-type']), /^text\/javascript/);
    assert.match(script, /globalThis\.ServiceWeb=/);
    assert.equal(r.headers.vary, 'accept-encoding');
  });

  it('sends brotli when accepted, gzip when only gzip is, and the bytes decompress to the script', async () => {
    const br = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(br.headers['content-encoding'], 'br');
    assert.equal(brotliDecompressSync(br.body).toString('utf8'), script);
    assert.ok(br.body.length < script.length / 2, `brotli ${br.body.length} bytes of ${script.length}`);

    const gzip = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'gzip, br;q=0' });
    assert.equal(gzip.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gzip.body).toString('utf8'), script);
  });

  it('gives each representation its own strong ETag and answers a matching If-None-Match with 304', async () => {
    const plain = await rawGet(service.url, '/sdk/v1/service-web.js');
    const br = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'br' });
    const etag = String(br.headers.etag);
    assert.match(etag, /^"[0-9a-f]+-br"$/, 'strong (no W/ prefix)');
    assert.notEqual(plain.headers.etag, etag);

    const again = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'br', 'if-none-match': etag });
    assert.equal(again.status, 304);
    assert.equal(again.body.length, 0);
    // The brotli tag does not validate the gzip representation.
    const other = await rawGet(service.url, '/sdk/v1/service-web.js', { 'accept-encoding': 'gzip', 'if-none-match': etag });
    assert.equal(other.status, 200);
  });

  it('caches the stable path for an hour and names a content-addressed path cached for a year', async () => {
    const stable = await rawGet(service.url, '/sdk/v1/service-web.js');
    assert.match(String(stable.headers['cache-control']), /max-age=3600\b/);
    const link = /^<(\/sdk\/v1\/service-web\.[0-9a-f]{16}\.js)>; rel="canonical"$/.exec(String(stable.headers.link));
    assert.ok(link?.[1], `Link header: ${stable.headers.link}`);
    const pinned = await rawGet(service.url, link[1]);
    assert.equal(pinned.status, 200);
    assert.equal(pinned.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(pinned.body.toString('utf8'), script);
    assert.equal((await rawGet(service.url, '/sdk/v1/service-web.0000000000000000.js')).status, 404);
  });

  it('serves the passkeys, DPoP, send challenge and device management entries beside it, each with its own pinned path and source map', async () => {
    for (const [name, global] of [
      ['service-web-passkeys', 'ServiceWebPasskeys'],
      ['service-web-dpop', 'ServiceWebDpop'],
      ['service-web-challenge', 'ServiceWebChallenge'],
      ['service-web-devices', 'ServiceWebDevices'],
    ]) {
      const r = await rawGet(service.url, `/sdk/v1/${name}.js`, { 'accept-encoding': 'br' });
      assert.equal(r.status, 200, name);
      assert.equal(r.headers['content-encoding'], 'br', name);
      const body = brotliDecompressSync(r.body).toString('utf8');
      assert.match(body, new RegExp(`globalThis\\.${global}=`), name);
      assert.doesNotMatch(body, /globalThis\.ServiceWeb=/, `${name} does not carry the core`);
      const pinned = new RegExp(`^<(/sdk/v1/${name}\\.[0-9a-f]{16}\\.js)>; rel="canonical"$`).exec(String(r.headers.link))?.[1];
      assert.ok(pinned, `${name}: ${r.headers.link}`);
      assert.equal((await rawGet(service.url, pinned)).status, 200, pinned);
      const mapLink = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(body)?.[1];
      assert.equal(mapLink, `${name}.global.js.map`, name);
      assert.equal((await rawGet(service.url, `/sdk/v1/${mapLink}`)).status, 200, `${name}'s map`);
    }
  });

  it("resolves the script's source map link to a map that embeds its sources", async () => {
    const name = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(script)?.[1];
    assert.ok(name, 'the script links its map');
    const r = await rawGet(service.url, new URL(name, `${service.url}/sdk/v1/service-web.js`).pathname);
    assert.equal(r.status, 200);
    const map = JSON.parse(r.body.toString('utf8')) as { sources: string[]; sourcesContent?: string[] };
    assert.ok(map.sources.some((source) => source.endsWith('client.ts')));
    assert.equal(map.sourcesContent?.length, map.sources.length);
    assert.ok(map.sourcesContent?.every((content) => content.length > 0));
  });
});

describe('Accept-Encoding negotiation', () => {
  it('follows q-values, refuses q=0 and reads *', () => {
    assert.equal(negotiateEncoding(undefined), 'identity');
    assert.equal(negotiateEncoding('gzip, deflate, br, zstd'), 'br');
    assert.equal(negotiateEncoding('br;q=0.5, gzip'), 'gzip');
    assert.equal(negotiateEncoding('br;q=0, gzip;q=0'), 'identity');
    assert.equal(negotiateEncoding('*'), 'br');
    assert.equal(negotiateEncoding('*;q=0, gzip'), 'gzip');
    assert.equal(negotiateEncoding('deflate'), 'identity');
    assert.equal(negotiateEncoding('GZIP;Q=1'), 'gzip');
  });
});
