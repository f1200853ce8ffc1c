/**
 * Threats to the client credentials grant and private_key_jwt (issue 37): a web app or a public
 * client using a machine's grant, a wrong secret, a machine client reaching for a user's
 * permissions or for an API it was not granted, and client assertions replayed (`jti`), for
 * another audience, unsigned (`alg: none`), HMAC-signed with the public key as the secret,
 * signed by a key the client never registered, made for another client, expired or too long-lived.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { JWT_BEARER_ASSERTION } from '../../src/token/client-assertion.js';
import { BILLING, clientCredentials, machineClient, NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { type TestService, uniqueEmail } from '../support/helpers.js';
import { credentials, type RelyingParty, relyingParty } from '../support/oidc-token-helpers.js';

describe('client credentials under attack', () => {
  let service: TestService;
  let rp: RelyingParty;
  let keys: Awaited<ReturnType<typeof generateKeyPair>>;
  let publicJwk: Record<string, unknown>;
  let signer: { clientId: string };
  before(async () => {
    ({ service, rp } = await startWithApis(Date.now));
    keys = await generateKeyPair('ES256');
    publicJwk = { ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256' };
    signer = await machineClient(service, { [NOTES]: ['read:notes'] }, { jwks: { keys: [publicJwk] } });
  });
  after(() => service.close());

  const nowSeconds = () => Math.floor(Date.now() / 1000);
  const assertion = (
    claims: JWTPayload = {},
    header: { alg: string; kid?: string } = { alg: 'ES256', kid: 'k1' },
    key: CryptoKey | Uint8Array = keys.privateKey,
  ) =>
    new SignJWT({ iss: signer.clientId, sub: signer.clientId, aud: service.url, jti: randomUUID(), exp: nowSeconds() + 60, ...claims })
      .setProtectedHeader(header)
      .sign(key);
  const withAssertion = (value: string) =>
    clientCredentials(service, { client_assertion_type: JWT_BEARER_ASSERTION, client_assertion: value, resource: NOTES });
  const refusedClient = (answer: { status: number; body: Record<string, string> }, why: string) =>
    assert.deepEqual([answer.status, answer.body.error, answer.body.access_token], [401, 'invalid_client', undefined], why);

  it('a web app with its secret is unauthorized_client; a public client and a wrong secret are invalid_client', async () => {
    const web = await clientCredentials(service, { ...credentials(rp), resource: NOTES });
    assert.deepEqual([web.status, web.body.error], [400, 'unauthorized_client']);
    const spa = await relyingParty(service, { public: true, redirectUri: 'https://spa.example/cb' });
    refusedClient(await clientCredentials(service, { client_id: spa.clientId, resource: NOTES }), 'a public client proves nothing');
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    refusedClient(
      await clientCredentials(service, { client_id: machine.clientId, client_secret: 'sk_wrong', resource: NOTES }),
      'wrong secret',
    );
    refusedClient(
      await clientCredentials(service, { client_id: rp.clientId, client_secret: 'sk_wrong', resource: NOTES }),
      'a web app without its secret',
    );
  });

  it('a machine client never gets a user`s permissions, nor an API or permission it was not granted', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    // A user holding write:notes changes nothing for the machine.
    await userWithRoles(service, uniqueEmail('writer'), ['reader']);
    const asked = await clientCredentials(service, {
      ...machine,
      client_id: machine.clientId,
      client_secret: machine.secretKey,
      resource: NOTES,
      scope: 'write:notes',
    });
    assert.equal(asked.status, 200);
    assert.equal(asked.body.scope, '', 'nothing granted of what it asked');
    const billing = await clientCredentials(service, { client_id: machine.clientId, client_secret: machine.secretKey, resource: BILLING });
    assert.deepEqual([billing.status, billing.body.scope], [200, ''], 'no grant on Billing: a token with no permission');
    for (const resource of ['https://unknown.example.com', [NOTES, BILLING]]) {
      const answer = await clientCredentials(service, { client_id: machine.clientId, client_secret: machine.secretKey, resource });
      assert.deepEqual([answer.status, answer.body.error], [400, 'invalid_target'], String(resource));
    }
  });

  it('a machine client cannot redeem a code or sign a user in', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    const answer = await fetch(service.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: 'made-up',
        client_id: machine.clientId,
        client_secret: machine.secretKey,
      }),
    });
    assert.equal(answer.status, 401);
    const authorize = await fetch(
      `${service.url}/authorize?client_id=${machine.clientId}&redirect_uri=https://x.example/cb&response_type=code&scope=openid`,
      {
        redirect: 'manual',
      },
    );
    assert.equal(authorize.status, 400, 'no redirect URI of its own: our page, no redirect');
  });

  it('private_key_jwt: a good assertion works once; its jti replayed is refused', async () => {
    const value = await assertion();
    assert.equal((await withAssertion(value)).status, 200);
    refusedClient(await withAssertion(value), 'replayed jti');
  });

  it('private_key_jwt: another audience, another client, no jti, expired or too long-lived is refused', async () => {
    const other = await machineClient(service, { [NOTES]: ['read:notes'] });
    for (const [claims, why] of [
      [{ aud: 'https://other-idp.example.com' }, 'wrong aud'],
      [{ iss: other.clientId, sub: other.clientId }, 'made for another client, signed with this one`s key'],
      [{ sub: other.clientId }, 'iss and sub differ'],
      [{ jti: undefined }, 'no jti'],
      [{ exp: nowSeconds() - 60 }, 'expired'],
      [{ exp: nowSeconds() + 3600 }, 'exp an hour ahead'],
    ] as const) {
      refusedClient(await withAssertion(await assertion(claims as JWTPayload)), why);
    }
  });

  it('private_key_jwt: alg none, HS256 with the public key as the secret, and a key never registered are refused', async () => {
    const unsigned = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${Buffer.from(
      JSON.stringify({ iss: signer.clientId, sub: signer.clientId, aud: service.url, jti: randomUUID(), exp: nowSeconds() + 60 }),
    ).toString('base64url')}.`;
    refusedClient(await withAssertion(unsigned), 'alg none');
    const publicAsSecret = new TextEncoder().encode(JSON.stringify(publicJwk));
    refusedClient(await withAssertion(await assertion({}, { alg: 'HS256', kid: 'k1' }, publicAsSecret)), 'HS256 keyed with the public key');
    const stranger = await generateKeyPair('ES256');
    refusedClient(await withAssertion(await assertion({}, { alg: 'ES256', kid: 'k1' }, stranger.privateKey)), 'a key never registered');
  });

  it('one client authentication method only: an assertion and a secret together is invalid_request', async () => {
    const answer = await clientCredentials(service, {
      client_assertion_type: JWT_BEARER_ASSERTION,
      client_assertion: await assertion(),
      client_secret: 'sk_x',
      client_id: signer.clientId,
      resource: NOTES,
    });
    assert.deepEqual([answer.status, answer.body.error], [400, 'invalid_request']);
  });
});
