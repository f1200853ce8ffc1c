/**
 * An OIDC client nobody on this team wrote (openid-client) discovers the service, exchanges
 * a code from the browser library, and validates the ID token against our JWKS.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as oidc from 'openid-client';
import { exchangeCodeForClaims, JWTVerificationError } from 'service-oauth-client';
import { createPkcePair } from 'service-web';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';

describe('OIDC conformance with openid-client', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  /** The code and the issuer (RFC 9207 iss) of service-web's SUCCESS. */
  async function codeFor(email: string, codeChallenge: string): Promise<{ code: string; iss: string }> {
    const device = await service.newDevice();
    await device.authenticate(email, { rememberDevice: true, code_challenge: codeChallenge, code_challenge_method: 'S256' });
    await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    const registered = await device.verifyDevice({ userid: email });
    assert.ok(registered.status === 'SUCCESS', registered.status);
    return { code: registered.code, iss: registered.iss };
  }

  for (const [name, auth] of [
    ['client_secret_basic', (secret: string) => oidc.ClientSecretBasic(secret)],
    ['client_secret_post', (secret: string) => oidc.ClientSecretPost(secret)],
  ] as const) {
    it(`completes the code exchange with ${name} and validates the ID token`, async () => {
      const config = await oidc.discovery(new URL(service.url), service.clientId, undefined, auth(service.secretKey), {
        execute: [oidc.allowInsecureRequests], // loopback test server over http
      });
      assert.equal(config.serverMetadata().issuer, service.url);
      const email = uniqueEmail('oidc');
      const pkce = await createPkcePair();
      const { code, iss } = await codeFor(email, pkce.codeChallenge);
      assert.equal(iss, service.url, "service-web's SUCCESS names the issuer");
      // Discovery promises RFC 9207 iss on authorization responses, so openid-client wants it: the
      // browser library's code comes back in JSON, and the page passes its iss along as /authorize would.
      const callback = (withIss: boolean) =>
        new URL(`http://app.test:3000/callback?code=${encodeURIComponent(code)}${withIss ? `&iss=${encodeURIComponent(iss)}` : ''}`);
      await assert.rejects(
        oidc.authorizationCodeGrant(config, callback(false), { pkceCodeVerifier: pkce.codeVerifier, idTokenExpected: true }),
        (error: Error) => /"iss"/.test(String((error.cause as Error | undefined)?.message)),
        'without iss openid-client refuses the response',
      );
      const tokens = await oidc.authorizationCodeGrant(config, callback(true), {
        pkceCodeVerifier: pkce.codeVerifier,
        idTokenExpected: true,
      });
      const claims = tokens.claims();
      assert.ok(claims);
      assert.equal(claims.email, email);
      assert.equal(claims.aud, service.clientId);
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');

      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
      assert.equal(userinfo.email, email);
    });
  }

  it('verifies the RFC 7636 Appendix B vector through the token endpoint', async () => {
    // RFC 7636 Appendix B: this verifier hashes to this challenge.
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const { code } = await codeFor(uniqueEmail('rfc7636'), challenge);
    const response = await fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        client_id: service.clientId,
        client_secret: service.secretKey,
      }),
    });
    assert.equal(response.status, 200);
    assert.equal(typeof (await response.json()).id_token, 'string');
  });
});

describe('ID tokens signed with ES256 or EdDSA (id_token_signed_response_alg)', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService();
  });
  after(() => service.close());

  async function code(): Promise<string> {
    const email = uniqueEmail('alg');
    const device = await service.newDevice();
    await device.authenticate(email, { rememberDevice: true });
    await device.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    const registered = await device.verifyDevice({ userid: email });
    assert.equal(registered.status, 'SUCCESS');
    return registered.code as string;
  }

  for (const alg of ['ES256', 'EdDSA'] as const) {
    it(`signs the client's ID tokens with ${alg}: openid-client and exchangeCodeForClaims (algorithms) accept them, the RS256 default refuses`, async () => {
      await service.ctx.clients.setIdTokenAlg(service.clientId, alg);
      const config = await oidc.discovery(
        new URL(service.url),
        service.clientId,
        { id_token_signed_response_alg: alg },
        oidc.ClientSecretPost(service.secretKey),
        { execute: [oidc.allowInsecureRequests] },
      );
      const tokens = await oidc.authorizationCodeGrant(
        config,
        new URL(`http://app.test:3000/callback?code=${encodeURIComponent(await code())}&iss=${encodeURIComponent(service.url)}`),
        {
          idTokenExpected: true,
        },
      );
      assert.equal(JSON.parse(Buffer.from((tokens.id_token as string).split('.')[0] as string, 'base64url').toString()).alg, alg);

      const options = {
        oauthTokenUrl: service.tokenUrl,
        clientId: service.clientId,
        apiKey: service.secretKey,
        jwksUrl: service.jwksUrl,
        issuer: service.url,
      };
      const claims = await exchangeCodeForClaims({ ...options, code: await code(), algorithms: [alg] });
      assert.equal(claims.aud, service.clientId);
      await assert.rejects(exchangeCodeForClaims({ ...options, code: await code() }), (err: unknown) => {
        assert.ok(err instanceof JWTVerificationError);
        assert.equal(err.code, 'ERR_JWT_ALG_NOT_ALLOWED');
        return true;
      });
    });
  }

  it('refuses an algorithm outside RS256, ES256 and EdDSA', async () => {
    await assert.rejects(service.ctx.clients.setIdTokenAlg(service.clientId, 'HS256'), /RS256, ES256, EdDSA/);
    await assert.rejects(service.ctx.clients.setIdTokenAlg(service.clientId, 'none'), /RS256, ES256, EdDSA/);
  });
});
