/**
 * DPoP (RFC 9449) driven by a client nobody on this team wrote: openid-client's own DPoP
 * support (`getDPoPHandle`, `randomDPoPKeyPair`) runs the code grant, userinfo and the refresh
 * grant of a public client against the service, learning the server nonce from the refusals
 * as RFC 9449 8 and 9 describe; and what it got is worth nothing to a client without its key.
 * Runs on PostgreSQL too (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { type RelyingParty, relyingParty, signInForCode } from '../support/oidc-token-helpers.js';

describe('DPoP with openid-client', () => {
  let service: TestService;
  let spa: RelyingParty;
  let config: oidc.Configuration;
  before(async () => {
    service = await startTestService();
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    config = await oidc.discovery(new URL(service.url), spa.clientId, undefined, oidc.None(), {
      execute: [oidc.allowInsecureRequests], // loopback test server over http
    });
  });
  after(() => service.close());

  async function boundTokens(dpop: oidc.DPoPHandle) {
    const { location, codeVerifier } = await signInForCode(service, spa, uniqueEmail('openid-dpop'));
    return oidc.authorizationCodeGrant(
      config,
      new URL(location),
      { pkceCodeVerifier: codeVerifier, expectedState: 'st', expectedNonce: 'n-0', idTokenExpected: true },
      undefined,
      { DPoP: dpop },
    );
  }

  it('runs the code grant, userinfo and the refresh grant with DPoP', async () => {
    assert.ok(config.serverMetadata().dpop_signing_alg_values_supported?.includes('ES256'));
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());
    const tokens = await boundTokens(dpop);
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    const sub = tokens.claims()?.sub ?? '';
    const info = await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: dpop });
    assert.equal(info.sub, sub);

    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '', undefined, { DPoP: dpop });
    assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
    assert.equal((await oidc.fetchUserInfo(config, refreshed.access_token, sub, { DPoP: dpop })).sub, sub);
  });

  it('runs the code grant and userinfo with an Ed25519 key, whose proofs openid-client names Ed25519 (RFC 9864)', async () => {
    assert.ok(config.serverMetadata().dpop_signing_alg_values_supported?.includes('Ed25519'));
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair('Ed25519'));
    const tokens = await boundTokens(dpop);
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    const sub = tokens.claims()?.sub ?? '';
    assert.equal((await oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: dpop })).sub, sub);
  });

  it('gets nothing for the tokens without their key: no proof, or another client`s key', async () => {
    const dpop = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());
    const tokens = await boundTokens(dpop);
    const sub = tokens.claims()?.sub ?? '';
    const thief = oidc.getDPoPHandle(config, await oidc.randomDPoPKeyPair());

    await assert.rejects(oidc.fetchUserInfo(config, tokens.access_token, sub), (error: Error & { status?: number }) => {
      assert.equal(error.status, 401);
      return true;
    });
    await assert.rejects(oidc.fetchUserInfo(config, tokens.access_token, sub, { DPoP: thief }), (error: Error & { status?: number }) => {
      assert.equal(error.status, 401);
      return true;
    });
    for (const options of [undefined, { DPoP: thief }]) {
      await assert.rejects(
        oidc.refreshTokenGrant(config, tokens.refresh_token ?? '', undefined, options),
        (error: Error & { error?: string }) => {
          assert.equal(error.error, 'invalid_grant');
          return true;
        },
      );
    }
    // The refusals spent nothing: the holder of the key refreshes.
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token ?? '', undefined, { DPoP: dpop });
    assert.equal(refreshed.token_type.toLowerCase(), 'dpop');
  });
});
