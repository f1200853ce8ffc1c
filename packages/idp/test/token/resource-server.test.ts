/**
 * A resource server against the real service (issue 37): a small API on loopback, protected by
 * service-oauth-client's `verifyAccessToken` and its Fastify adapter (the workspace package, as
 * an integrator installs it), takes the access tokens the service issues: a user's from a real
 * sign-in naming the API with `resource`, a DPoP-bound one with a fresh proof, a machine
 * client's from client_credentials; it refuses a user without the role (403
 * insufficient_scope), a replayed proof, a bound token sent as Bearer and a token for another
 * API. Plain jose (`jwtVerify` with `createRemoteJWKSet`) verifies the same tokens.
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { accessTokenPreHandler, type VerifiedAccessToken, verifyAccessToken } from 'service-oauth-client';
import { BILLING, clientCredentials, machineClient, NOTES, startWithApis, userWithRoles } from '../support/api-helpers.js';
import { currentNonce, type DpopKey, dpopKey, dpopProof } from '../support/dpop-helpers.js';
import { freePort, type TestService, uniqueEmail } from '../support/helpers.js';
import { type RelyingParty, signIn } from '../support/oidc-token-helpers.js';

describe('a resource server protected by verifyAccessToken, on tokens of the real service', () => {
  let service: TestService;
  let rp: RelyingParty;
  let api: FastifyInstance;
  let apiOrigin: string;
  let jwks: ReturnType<typeof createRemoteJWKSet>;

  before(async () => {
    ({ service, rp } = await startWithApis(Date.now));
    jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    const port = await freePort();
    apiOrigin = `http://127.0.0.1:${port}`;
    api = Fastify();
    // Proofs name the API's public origin, never one read from the request's Host.
    const settings = { issuer: service.url, audience: NOTES, origin: apiOrigin };
    api.decorateRequest('auth');
    api.get('/notes', { preHandler: accessTokenPreHandler({ ...settings, requiredScopes: ['read:notes'] }) }, async (request) => {
      const { claims, scopes, jkt } = (request as unknown as { auth: VerifiedAccessToken }).auth;
      return { sub: claims.sub, clientId: claims.client_id, scopes, jkt: jkt ?? null };
    });
    await api.listen({ port, host: '127.0.0.1' });
  });
  after(async () => {
    await api?.close();
    await service?.close();
  });

  const callApi = async (authorization: string, proof?: string) => {
    const response = await fetch(`${apiOrigin}/notes`, { headers: { authorization, ...(proof ? { dpop: proof } : {}) } });
    return { status: response.status, challenge: response.headers.get('www-authenticate') ?? '', body: await response.json() };
  };
  const joseVerify = (token: string, audience = NOTES) =>
    jwtVerify(token, jwks, { issuer: service.url, audience, typ: 'at+jwt', algorithms: ['RS256', 'ES256', 'EdDSA'] });

  it('a user with the role: 200 with the token of a real sign-in naming the API, and jose agrees', async () => {
    const email = uniqueEmail('rs-reader');
    const userId = await userWithRoles(service, email, ['reader']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:notes', extra: { resource: NOTES } });
    const token = tokens.access_token ?? '';

    const answer = await callApi(`Bearer ${token}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, { sub: userId, clientId: rp.clientId, scopes: ['read:notes'], jkt: null });

    const direct = await verifyAccessToken(token, { issuer: service.url, audience: NOTES, requiredScopes: ['read:notes'] });
    assert.equal(direct.claims.sub, userId);
    const { payload } = await joseVerify(token);
    assert.equal(payload.sub, userId);
    assert.equal(payload.scope, 'read:notes');
  });

  it('a user without the role: 403 insufficient_scope, naming the scope needed', async () => {
    const { tokens } = await signIn(service, rp, uniqueEmail('rs-no-role'), {
      scope: 'openid email read:notes',
      extra: { resource: NOTES },
    });
    const answer = await callApi(`Bearer ${tokens.access_token}`);
    assert.equal(answer.status, 403, JSON.stringify(answer.body));
    assert.equal(answer.body.error, 'insufficient_scope');
    assert.match(answer.challenge, /^Bearer error="insufficient_scope".*scope="read:notes"/);
    // The token itself is sound: jose accepts it, with an empty scope.
    assert.equal((await joseVerify(tokens.access_token ?? '')).payload.scope, '');
  });

  describe('a DPoP-bound token', () => {
    let key: DpopKey;
    let token: string;
    before(async () => {
      const email = uniqueEmail('rs-dpop');
      await userWithRoles(service, email, ['reader']);
      key = await dpopKey();
      const { tokens } = await signIn(service, rp, email, {
        scope: 'openid email read:notes',
        extra: { resource: NOTES },
        redeemHeaders: async () => ({
          dpop: await dpopProof(key, { htm: 'POST', htu: service.tokenUrl, nonce: await currentNonce(service.url) }),
        }),
      });
      assert.equal(tokens.token_type, 'DPoP');
      token = tokens.access_token ?? '';
    });

    it('is accepted with a fresh proof, and jose sees its key (cnf.jkt)', async () => {
      const proof = await dpopProof(key, { htm: 'GET', htu: `${apiOrigin}/notes`, accessToken: token });
      const answer = await callApi(`DPoP ${token}`, proof);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.equal(answer.body.jkt, key.jkt);
      assert.deepEqual((await joseVerify(token)).payload.cnf, { jkt: key.jkt });
    });

    it('is refused when its proof is replayed', async () => {
      const proof = await dpopProof(key, { htm: 'GET', htu: `${apiOrigin}/notes`, accessToken: token });
      assert.equal((await callApi(`DPoP ${token}`, proof)).status, 200);
      const replayed = await callApi(`DPoP ${token}`, proof);
      assert.equal(replayed.status, 401);
      assert.equal(replayed.body.error, 'invalid_dpop_proof');
    });

    it('is refused when sent as a bearer token, with or without a proof', async () => {
      const asBearer = await callApi(`Bearer ${token}`);
      assert.equal(asBearer.status, 401, JSON.stringify(asBearer.body));
      assert.equal(asBearer.body.error, 'invalid_token');
      const proof = await dpopProof(key, { htm: 'GET', htu: `${apiOrigin}/notes`, accessToken: token });
      assert.equal((await callApi(`Bearer ${token}`, proof)).status, 401);
    });

    it('is refused with a proof made for another request (htu)', async () => {
      const proof = await dpopProof(key, { htm: 'GET', htu: `${apiOrigin}/other`, accessToken: token });
      assert.equal((await callApi(`DPoP ${token}`, proof)).status, 401);
    });
  });

  it('a machine client`s client_credentials token is accepted, sub the client', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    const granted = await clientCredentials(service, {
      client_id: machine.clientId,
      client_secret: machine.secretKey,
      resource: NOTES,
      scope: 'read:notes',
    });
    assert.equal(granted.status, 200, JSON.stringify(granted.body));
    const answer = await callApi(`Bearer ${granted.body.access_token}`);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual(answer.body, { sub: machine.clientId, clientId: machine.clientId, scopes: ['read:notes'], jkt: null });
    assert.equal((await joseVerify(granted.body.access_token ?? '')).payload.sub, machine.clientId);
  });

  it('a token for another API is refused (401 invalid_token), by the adapter and by jose', async () => {
    const email = uniqueEmail('rs-billing');
    await userWithRoles(service, email, ['reader', 'accountant']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email read:invoices', extra: { resource: BILLING } });
    const token = tokens.access_token ?? '';
    assert.equal((await joseVerify(token, BILLING)).payload.scope, 'read:invoices', 'a sound token, for Billing');

    const answer = await callApi(`Bearer ${token}`);
    assert.equal(answer.status, 401, JSON.stringify(answer.body));
    assert.equal(answer.body.error, 'invalid_token');
    await assert.rejects(verifyAccessToken(token, { issuer: service.url, audience: NOTES }), { code: 'ERR_ACCESS_TOKEN_INVALID' });
    await assert.rejects(joseVerify(token, NOTES), { code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
  });

  it('an ID token or the userinfo token is no access token for the API', async () => {
    const email = uniqueEmail('rs-confusion');
    await userWithRoles(service, email, ['reader']);
    const { tokens } = await signIn(service, rp, email, { scope: 'openid email' });
    for (const token of [tokens.id_token, tokens.access_token]) assert.equal((await callApi(`Bearer ${token}`)).status, 401);
  });
});
