/**
 * Threats of Client ID Metadata Documents (issue 39, clients/metadata-document.ts): whoever
 * sends a URL as client_id chooses where the service makes a request, and what the document
 * there says. Each test is one threat, against real HTTP servers on loopback (development lets
 * the service fetch from them; the production tests resolve names through the webhooks' test
 * resolver and count TCP connections, so "never reached" means no connection at all).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HostResolver } from '../../src/webhooks/target.js';
import { startTestService, type TestService } from '../support/helpers.js';
import { startDocumentServer } from '../support/metadata-document-server.js';
import { authorize } from '../support/oidc-helpers.js';

const ON = { SERVICE_IDP_CLIENT_ID_METADATA_DOCUMENTS: 'on' };
const LOOPBACK_REDIRECT = 'http://127.0.0.1/callback';

/** /authorize for `clientId` and `redirectUri` (PKCE, openid): 303 to the sign-in when the client is taken, else our 400 page. */
const authorizeFor = (service: TestService, clientId: string, redirectUri = 'http://127.0.0.1:4000/callback') =>
  authorize(service, {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    scope: 'openid',
    state: 'st',
    code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    code_challenge_method: 'S256',
  });

const taken = (answer: { status: number; location: string | null }) =>
  answer.status === 303 && (answer.location ?? '').startsWith('/signin?request=');

describe('client ID metadata documents: what a document server may try', () => {
  let time = Date.now();
  let service: TestService;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  const released: Array<() => void> = [];
  before(async () => {
    service = await startTestService({ env: ON, now: () => time, clientMetadataTimeoutMs: 500 });
    documents = await startDocumentServer();
  });
  after(async () => {
    for (const release of released) release();
    await service.close();
    await documents.close();
  });

  const document = (path: string, extra: Record<string, unknown> = {}) => ({
    client_id: documents.url(path),
    client_name: 'Agent',
    redirect_uris: [LOOPBACK_REDIRECT],
    ...extra,
  });

  it('a document that redirects is refused: the redirect is not followed', async () => {
    documents.publish('/elsewhere.json', document('/redirecting.json'));
    documents.on('/redirecting.json', (_request, response) =>
      response.writeHead(302, { location: documents.url('/elsewhere.json') }).end(),
    );
    const answer = await authorizeFor(service, documents.url('/redirecting.json'));
    assert.equal(answer.status, 400);
    assert.match(answer.body, /not registered/);
    assert.equal(documents.requests('/redirecting.json'), 1);
    assert.equal(documents.requests('/elsewhere.json'), 0, 'the redirect target was never fetched');
  });

  it('a refused document is not fetched again at every request (the service as a reflector towards its host)', async () => {
    const path = '/flood.json';
    documents.on(path, (_request, response) => response.writeHead(302, { location: documents.url('/elsewhere.json') }).end());
    for (let i = 0; i < 5; i++) assert.equal((await authorizeFor(service, documents.url(path))).status, 400);
    assert.equal(documents.requests(path), 1, 'five requests, one fetch');
    time += 31_000;
    documents.publish(path, document(path));
    assert.ok(taken(await authorizeFor(service, documents.url(path))), 'fetched again after 30 s, fixed');
    assert.equal(documents.requests(path), 2);
  });

  it('a huge document is refused, whether it says its length or streams without one', async () => {
    const padding = 'x'.repeat(6 * 1024);
    documents.publish('/huge.json', document('/huge.json', { padding }));
    assert.equal(taken(await authorizeFor(service, documents.url('/huge.json'))), false, 'Content-Length over 5 kB');
    // Chunked, no length: 64 MB of padding (more than any socket buffers hold), written as fast as it is read.
    const STREAM = 64 * 1024 * 1024;
    const closed = new Promise<boolean>((resolve) => {
      documents.on('/streaming.json', (_request, response) => {
        response.on('close', () => resolve(response.writableFinished));
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write(JSON.stringify(document('/streaming.json')).slice(0, -1));
        let written = 0;
        const more = () => {
          while (written < STREAM && !response.destroyed) {
            written += 65536;
            if (!response.write(` ${'y'.repeat(65535)}`)) return void response.once('drain', more);
          }
          response.end('}');
        };
        more();
      });
    });
    const answer = await authorizeFor(service, documents.url('/streaming.json'));
    assert.equal(answer.status, 400);
    assert.equal(await closed, false, 'the service hung up long before the end');
  });

  it('a slow document is refused at the time limit: a server that never answers, and one that sends its body forever', async () => {
    documents.on('/silent.json', (_request, response) => {
      released.push(() => response.destroy());
    });
    documents.on('/trickle.json', (_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"client_id":');
      released.push(() => response.destroy());
    });
    for (const path of ['/silent.json', '/trickle.json']) {
      const started = performance.now();
      const answer = await authorizeFor(service, documents.url(path));
      assert.equal(answer.status, 400, path);
      assert.ok(performance.now() - started < 3000, `${path}: refused at the (test's 500 ms) limit, not waiting on the server`);
    }
  });

  it("a document whose client_id is not exactly its URL is refused (another client's document, a near spelling)", async () => {
    documents.publish('/mine.json', document('/mine.json'));
    documents.publish('/copied.json', document('/mine.json'));
    documents.publish('/slash.json', { ...document('/slash.json'), client_id: `${documents.url('/slash.json')}/` });
    documents.publish('/upper.json', { ...document('/upper.json'), client_id: documents.url('/UPPER.json') });
    assert.ok(taken(await authorizeFor(service, documents.url('/mine.json'))), 'the genuine document is taken');
    for (const path of ['/copied.json', '/slash.json', '/upper.json'])
      assert.equal((await authorizeFor(service, documents.url(path))).status, 400, path);
  });

  it('a client_id URL not in the canonical form the draft allows is not even fetched (dot segments, fragment, query, credentials)', async () => {
    documents.publish('/canonical.json', document('/canonical.json'));
    for (const clientId of [
      `${documents.origin}/x/../canonical.json`,
      `${documents.origin}/./canonical.json`,
      `${documents.url('/canonical.json')}#f`,
      `${documents.url('/canonical.json')}?q=1`,
      `http://user:pass@127.0.0.1:${documents.port}/canonical.json`,
      documents.origin,
    ])
      assert.equal((await authorizeFor(service, clientId)).status, 400, clientId);
    assert.equal(documents.requests('/canonical.json'), 0);
  });

  it('a redirect_uri the document does not list is refused on our page, never redirected to', async () => {
    documents.publish('/listed.json', document('/listed.json', { redirect_uris: [LOOPBACK_REDIRECT, `${documents.origin}/cb`] }));
    const clientId = documents.url('/listed.json');
    assert.ok(taken(await authorizeFor(service, clientId, `${documents.origin}/cb`)));
    for (const uri of ['https://evil.example/cb', `${documents.origin}/cb/more`, 'http://127.0.0.1:4000/other']) {
      const answer = await authorizeFor(service, clientId, uri);
      assert.equal(answer.status, 400, uri);
      assert.equal(answer.location, null, `${uri}: no redirect`);
      assert.match(answer.body, /not one Agent registered/);
    }
  });

  it('a document listing a javascript:, private-use scheme or other-host redirect_uri is refused whole', async () => {
    const bad = [
      'javascript:alert(1)',
      'https://evil.example/cb',
      'com.example.agent:/cb',
      'data:text/html,hi',
      `${documents.origin}/cb#frag`,
    ];
    for (const [index, uri] of bad.entries()) {
      const path = `/bad-${index}.json`;
      documents.publish(path, document(path, { redirect_uris: [LOOPBACK_REDIRECT, uri] }));
      // The good loopback URI does not save it: the document is refused, so no redirect URI of it counts.
      const answer = await authorizeFor(service, documents.url(path));
      assert.equal(answer.status, 400, uri);
      assert.match(answer.body, /not registered/, uri);
    }
  });

  it('a document that holds a client secret, or asks for another authentication method, is refused', async () => {
    const bad = [
      { client_secret: 's3cret' },
      { token_endpoint_auth_method: 'client_secret_basic' },
      { grant_types: ['client_credentials'] },
    ];
    for (const [index, extra] of bad.entries()) {
      const path = `/secret-${index}.json`;
      documents.publish(path, document(path, extra));
      assert.equal((await authorizeFor(service, documents.url(path))).status, 400, JSON.stringify(extra));
    }
  });

  it('a document changed between fetches takes effect only when the cached copy expires (its max-age, within bounds)', async () => {
    const path = '/changing.json';
    const clientId = documents.url(path);
    const first = `${documents.origin}/first`;
    const second = `${documents.origin}/second`;
    documents.publish(path, document(path, { redirect_uris: [first] }), 'max-age=120');
    assert.ok(taken(await authorizeFor(service, clientId, first)));
    documents.publish(path, document(path, { redirect_uris: [second] }), 'max-age=120');
    time += 119_000;
    assert.ok(taken(await authorizeFor(service, clientId, first)), 'the cached copy is still enforced');
    assert.equal((await authorizeFor(service, clientId, second)).status, 400, 'the new URI not yet');
    assert.equal(documents.requests(path), 1);
    time += 2000;
    assert.equal((await authorizeFor(service, clientId, first)).status, 400, 'expired: fetched again, the old URI is gone');
    assert.ok(taken(await authorizeFor(service, clientId, second)));
    assert.equal(documents.requests(path), 2);

    // no-store is held for the minimum (60 s), not fetched at every request; a year's max-age for the maximum (a day).
    documents.publish(path, document(path, { redirect_uris: [first] }), 'no-store');
    time += 121_000;
    await authorizeFor(service, clientId, first);
    await authorizeFor(service, clientId, first);
    assert.equal(documents.requests(path), 3);
    documents.publish(path, document(path, { redirect_uris: [second] }), 'max-age=31536000');
    time += 61_000;
    assert.ok(taken(await authorizeFor(service, clientId, second)));
    documents.publish(path, document(path, { redirect_uris: [first] }), 'max-age=31536000');
    time += 24 * 60 * 60 * 1000 + 1000;
    assert.ok(taken(await authorizeFor(service, clientId, first)), 'a day later, fetched again');
  });
});

describe('client ID metadata documents in production: the address guard', () => {
  let service: TestService;
  let documents: Awaited<ReturnType<typeof startDocumentServer>>;
  const answers = new Map<string, string>();
  const resolve: HostResolver = async (hostname) => {
    const address = answers.get(hostname);
    if (!address) throw Object.assign(new Error(`no test answer for ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };
  before(async () => {
    service = await startTestService({
      env: { ...ON, NODE_ENV: 'production', SMTP_URL: 'smtp://127.0.0.1:1', SERVICE_IDP_ISSUER: 'https://id.example:0' },
      webhookResolve: resolve,
    });
    documents = await startDocumentServer();
  });
  after(async () => {
    await service.close();
    await documents.close();
  });

  it('a document on a private or loopback address is refused by the SSRF guard: no connection is made', async () => {
    answers.set('inward.example', '127.0.0.1');
    answers.set('private.example', '10.0.0.7');
    answers.set('metadata.example', '169.254.169.254');
    const port = documents.port;
    for (const clientId of [
      `https://inward.example:${port}/agent.json`,
      `https://private.example:${port}/agent.json`,
      `https://metadata.example:${port}/agent.json`,
      `https://127.0.0.1:${port}/agent.json`,
      `https://localhost.:${port}/agent.json`,
      `http://127.0.0.1:${port}/agent.json`,
    ])
      assert.equal(await service.ctx.clients.findById(clientId), undefined, clientId);
    assert.equal(documents.connections(), 0, 'the document server was never reached');
  });
});
