/**
 * RFC 8414: the OAuth authorization server metadata at /.well-known/oauth-authorization-server
 * is the document of OpenID Connect Discovery, built once (token/routes.ts): an OAuth client
 * (an MCP client, say) that knows only RFC 8414 finds the same endpoints, and the issuer it
 * fetched from (RFC 8414 3.3). Public, as discovery is: cached, any origin may read it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService } from '../support/helpers.js';

describe('RFC 8414 authorization server metadata', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  it('serves the discovery document at /.well-known/oauth-authorization-server', async () => {
    const oauth = await fetch(`${service.url}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://any.example' } });
    assert.equal(oauth.status, 200);
    assert.match(oauth.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(oauth.headers.get('cache-control'), 'public, max-age=300');
    assert.equal(oauth.headers.get('access-control-allow-origin'), '*');
    const metadata = await oauth.json();
    const discovery = await (await fetch(`${service.url}/.well-known/openid-configuration`)).json();
    assert.deepEqual(metadata, discovery);
    // RFC 8414 3.3: the issuer is the URL the document was fetched from, less the well-known path.
    assert.equal(metadata.issuer, service.url);
    assert.equal(metadata.authorization_endpoint, `${service.url}/authorize`);
    assert.equal(metadata.token_endpoint, `${service.url}/oauth/token`);
    assert.deepEqual(metadata.code_challenge_methods_supported, ['S256']);
    assert.ok(metadata.response_types_supported.includes('code'));
  });
});
