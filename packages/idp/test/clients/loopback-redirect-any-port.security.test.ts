/**
 * Threat: the loopback port rule of native apps (RFC 8252 7.3) stretched to send a code
 * elsewhere. A public client registers `http://127.0.0.1/callback` or `http://[::1]/callback`
 * and, at run time, listens on whatever port the system gives it: /authorize accepts the
 * registered URI on any port, and the token endpoint redeems the code only with the exact URI
 * of its request. Nothing else loosens: `localhost` (a name that may resolve elsewhere, RFC
 * 8252 8.3) stays exact, and so do a look-alike host (`127.0.0.1.evil.example`,
 * `localhost.evil.example`), user info (`http://127.0.0.1@evil.example`), another path or
 * query, https for http, and a confidential client's loopback URI. A refused URI is never
 * redirected to (our own page answers, RFC 6749 4.1.2.1). Runs on SQLite and PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, redeem } from '../support/oidc-helpers.js';
import { credentials, relyingParty, signInForCode } from '../support/oidc-token-helpers.js';

const V4 = 'http://127.0.0.1/callback';
const V6 = 'http://[::1]/callback';
const NAMED = 'http://localhost/callback';

/** The request of `clientId` for `redirectUri`: an unsupported response_type, so an accepted URI gets its error redirect. */
const probe = (clientId: string, redirectUri: string) => ({
  client_id: clientId,
  redirect_uri: redirectUri,
  response_type: 'token',
  state: 's',
});

describe('loopback redirect URIs on any port (RFC 8252 7.3)', () => {
  let service: TestService;
  let native: string;
  let confidential: string;
  before(async () => {
    service = await startTestService();
    native = (await service.ctx.clients.create({ name: 'CLI', origins: [], redirectUris: [V4, V6, NAMED], public: true })).clientId;
    confidential = (await service.ctx.clients.create({ name: 'Web', origins: [], redirectUris: [V4] })).clientId;
  });
  after(() => service.close());

  const redirectsTo = async (clientId: string, uri: string) => {
    const answer = await authorize(service, probe(clientId, uri));
    return answer.status === 303 && (answer.location?.startsWith(`${uri}?error=`) ?? false);
  };
  const refused = async (clientId: string, uri: string) => {
    const answer = await authorize(service, probe(clientId, uri));
    return answer.status === 400 && answer.location === null && /return address is not one/.test(answer.body);
  };

  it('a public client’s 127.0.0.1 and [::1] URIs match on any port, and with none', async () => {
    for (const uri of [V4, 'http://127.0.0.1:49152/callback', 'http://127.0.0.1:1/callback', V6, 'http://[::1]:65535/callback'])
      assert.ok(await redirectsTo(native, uri), uri);
  });

  it('the token endpoint redeems the code with the exact URI of its request, not another port', async () => {
    const rp = { clientId: native, redirectUri: 'http://127.0.0.1:51004/callback' };
    const { code, codeVerifier } = await signInForCode(service, rp, uniqueEmail('loopback'));
    const otherPort = await redeem(service, {
      code,
      redirect_uri: 'http://127.0.0.1:51005/callback',
      code_verifier: codeVerifier,
      ...credentials(rp),
    });
    assert.equal(otherPort.status, 400, JSON.stringify(otherPort.body));
    assert.equal(otherPort.body.error, 'invalid_grant');
    const second = await signInForCode(service, rp, uniqueEmail('loopback'));
    const tokens = await redeem(service, {
      code: second.code,
      redirect_uri: rp.redirectUri,
      code_verifier: second.codeVerifier,
      ...credentials(rp),
    });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  });

  const LOOK_ALIKES: Array<[string, string]> = [
    ['http://localhost:8080/callback', 'localhost stays exact'],
    ['http://localhost.evil.example/callback', 'a host that begins with localhost'],
    ['http://127.0.0.1.evil.example/callback', 'a host that begins with 127.0.0.1'],
    ['http://127.0.0.1.evil.example:8080/callback', 'the same with a port'],
    ['http://127.0.0.1@evil.example/callback', 'user info: the host is evil.example'],
    ['http://127.0.0.1:8080@evil.example/callback', 'user info with a port-looking password'],
    ['http://evil.example@127.0.0.1:8080/callback', 'user info before the loopback host'],
    ['http://127.0.0.1:8080\\@evil.example/callback', 'a backslash a browser reads as a slash'],
    ['http://127.0.0.1:8080/other', 'another path'],
    ['http://127.0.0.1:8080/callback/../other', 'a dot segment'],
    ['http://127.0.0.1:8080/callback?x=1', 'an added query'],
    ['http://127.0.0.1:8080/callback#frag', 'a fragment'],
    ['https://127.0.0.1:8080/callback', 'https for http'],
    ['http://127.0.0.2:8080/callback', 'another loopback address'],
    ['http://127.0.0.1:0/callback', 'port 0'],
    ['http://127.0.0.1:65536/callback', 'a port out of range'],
    ['http://127.0.0.1:/callback', 'an empty port'],
    ['http://[::1].evil.example:8080/callback', 'an IPv6 look-alike'],
    ['http://[0:0:0:0:0:0:0:1]:8080/callback', '::1 spelled otherwise'],
    ['http://2130706433:8080/callback', '127.0.0.1 as a number'],
  ];
  for (const [uri, why] of LOOK_ALIKES) {
    it(`refuses ${why}: our page answers, no redirect`, async () => {
      assert.ok(await refused(native, uri), uri);
    });
  }

  it('a confidential client’s loopback URI stays exact', async () => {
    assert.ok(await redirectsTo(confidential, V4));
    assert.ok(await refused(confidential, 'http://127.0.0.1:8080/callback'));
  });

  it('a public client’s https redirect URI stays exact', async () => {
    const spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    assert.ok(await refused(spa.clientId, 'https://spa.example:8443/cb'));
  });
});
