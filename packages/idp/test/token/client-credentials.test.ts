/**
 * Machine clients (issue 37): the client credentials grant (RFC 6749 4.4) run by openid-client,
 * a client nobody here wrote, authenticated by client_secret_basic, client_secret_post and
 * private_key_jwt (RFC 7523, keys inline or at a jwks_uri), with and without DPoP; the token is
 * an RFC 9068 JWT for the one API named, `sub` the client, carrying the permissions granted
 * to the client and asked for, and nothing of a user's (no ID token, no refresh token).
 * On SQLite, and on PostgreSQL when SERVICE_TEST_DATABASE_URL is set.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { calculateJwkThumbprint, createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify, SignJWT } from 'jose';
import * as oidc from 'openid-client';
import { ACCESS_TOKEN_TTL_SECONDS } from '../../src/defaults.js';
import { BILLING, clientCredentials, machineClient, NOTES, startWithApis } from '../support/api-helpers.js';
import type { TestService } from '../support/helpers.js';
import { introspect, revoke, userinfoStatus } from '../support/oidc-token-helpers.js';

describe('client credentials for machine clients', () => {
  let service: TestService;
  let jwks: ReturnType<typeof createRemoteJWKSet>;
  let keyServer: Server;
  const served: { keys: object[] } = { keys: [] };
  before(async () => {
    ({ service } = await startWithApis(Date.now));
    jwks = createRemoteJWKSet(new URL(`${service.url}/.well-known/jwks.json`));
    keyServer = createServer((_request, response) => response.setHeader('content-type', 'application/json').end(JSON.stringify(served)));
    await new Promise<void>((resolve) => keyServer.listen(0, '127.0.0.1', resolve));
  });
  after(async () => {
    keyServer.close();
    await service.close();
  });

  const verify = (token: string, audience = NOTES) => jwtVerify(token, jwks, { issuer: service.url, audience, typ: 'at+jwt' });
  const configFor = (clientId: string, auth: oidc.ClientAuth) =>
    oidc.discovery(new URL(service.url), clientId, undefined, auth, { execute: [oidc.allowInsecureRequests] });

  it('discovery says so: client_credentials, private_key_jwt and its algorithms', async () => {
    const meta = (await configFor('any', oidc.None())).serverMetadata();
    assert.ok(meta.grant_types_supported?.includes('client_credentials'));
    assert.ok(meta.token_endpoint_auth_methods_supported?.includes('private_key_jwt'));
    assert.ok(meta.token_endpoint_auth_signing_alg_values_supported?.includes('ES256'));
    assert.ok(!meta.token_endpoint_auth_signing_alg_values_supported?.includes('HS256'));
  });

  it('client_secret_basic and client_secret_post: an RFC 9068 token for the API, sub the client, only what was granted', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'], [BILLING]: ['read:invoices'] });
    for (const auth of [oidc.ClientSecretBasic(machine.secretKey), oidc.ClientSecretPost(machine.secretKey)]) {
      const tokens = await oidc.clientCredentialsGrant(await configFor(machine.clientId, auth), {
        resource: NOTES,
        scope: 'read:notes write:notes',
      });
      assert.equal(tokens.token_type.toLowerCase(), 'bearer');
      assert.equal(tokens.scope, 'read:notes', 'write:notes was never granted to the client');
      assert.equal(tokens.id_token, undefined);
      assert.equal(tokens.refresh_token, undefined);
      assert.equal(tokens.expires_in, ACCESS_TOKEN_TTL_SECONDS);
      const { payload } = await verify(tokens.access_token);
      assert.deepEqual(
        [payload.sub, payload.client_id, payload.scope, payload.aud],
        [machine.clientId, machine.clientId, 'read:notes', NOTES],
      );
      assert.equal(payload.amr, undefined, 'no user signed in');
    }
    const billing = await clientCredentials(service, { client_id: machine.clientId, client_secret: machine.secretKey, resource: BILLING });
    assert.equal(billing.status, 200, JSON.stringify(billing.body));
    assert.equal(
      (await verify(billing.body.access_token ?? '', BILLING)).payload.scope,
      'read:invoices',
      'no scope: all granted on that API',
    );
  });

  it('private_key_jwt with the keys registered inline, and at a jwks_uri', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'ES256' };
    const inline = await machineClient(service, { [NOTES]: ['read:notes', 'write:notes'] }, { jwks: { keys: [jwk] } });
    const tokens = await oidc.clientCredentialsGrant(await configFor(inline.clientId, oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' })), {
      resource: NOTES,
      scope: 'write:notes',
    });
    assert.equal((await verify(tokens.access_token)).payload.scope, 'write:notes');

    served.keys = [jwk];
    const remote = await machineClient(
      service,
      { [NOTES]: ['read:notes'] },
      { jwksUri: `http://127.0.0.1:${(keyServer.address() as AddressInfo).port}/jwks.json` },
    );
    const fromUri = await oidc.clientCredentialsGrant(
      await configFor(remote.clientId, oidc.PrivateKeyJwt({ key: privateKey, kid: 'k1' })),
      {
        resource: NOTES,
      },
    );
    assert.equal((await verify(fromUri.access_token)).payload.sub, remote.clientId);
  });

  it('DPoP-bound when the client sends a proof: the token names its key, and is no userinfo token', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    const config = await configFor(machine.clientId, oidc.ClientSecretBasic(machine.secretKey));
    const keyPair = await oidc.randomDPoPKeyPair();
    const tokens = await oidc.clientCredentialsGrant(config, { resource: NOTES }, { DPoP: oidc.getDPoPHandle(config, keyPair) });
    assert.equal(tokens.token_type.toLowerCase(), 'dpop');
    const { payload } = await verify(tokens.access_token);
    assert.deepEqual(payload.cnf, { jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) });
    assert.equal(await userinfoStatus(service, tokens.access_token), 401);
  });

  it('a machine client as the API`s resource server introspects the API`s tokens with private_key_jwt', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256');
    const jwk = { ...(await exportJWK(publicKey)), kid: 'rs', alg: 'ES256' };
    const server = await machineClient(service, {}, { jwks: { keys: [jwk] } });
    await service.ctx.apis.updateApi(NOTES, { resourceServerClientId: server.clientId }, 'test');
    const caller = await machineClient(service, { [NOTES]: ['read:notes'] });
    const issued = await clientCredentials(service, { client_id: caller.clientId, client_secret: caller.secretKey, resource: NOTES });
    const assertion = await new SignJWT({ jti: randomUUID() })
      .setProtectedHeader({ alg: 'ES256', kid: 'rs' })
      .setIssuer(server.clientId)
      .setSubject(server.clientId)
      .setAudience(service.url)
      .setExpirationTime('1m')
      .sign(privateKey);
    const answer = await introspect(service, {
      token: issued.body.access_token ?? '',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: assertion,
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.deepEqual([answer.body.active, answer.body.sub, answer.body.scope], [true, caller.clientId, 'read:notes']);
  });

  it('a machine client revokes its own access token (RFC 7009): introspection then says inactive', async () => {
    const machine = await machineClient(service, { [NOTES]: ['read:notes'] });
    const issued = await clientCredentials(service, { client_id: machine.clientId, client_secret: machine.secretKey, resource: NOTES });
    const creds = { client_id: machine.clientId, client_secret: machine.secretKey };
    assert.equal((await introspect(service, { token: issued.body.access_token ?? '', ...creds })).body.active, true);
    assert.equal((await revoke(service, { token: issued.body.access_token ?? '', ...creds })).status, 200);
    assert.deepEqual((await introspect(service, { token: issued.body.access_token ?? '', ...creds })).body, { active: false });
  });
});
