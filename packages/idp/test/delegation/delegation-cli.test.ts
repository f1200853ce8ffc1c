/**
 * `service-idp clients delegation-keys` as an operator uses it: its output goes into the SP's
 * secret store and ServiceDelegationClient.fromEnv() works with it against the running service;
 * SP public keys made elsewhere can be imported instead.
 */
import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ServiceDelegationClient } from 'service-oauth-client';
import { loadConfig, type RunningService, startService } from '../../src/index.js';
import { runCli, SQLITE_SUITE_ONLY } from '../support/helpers.js';

const run = runCli;
const pem = (key: import('node:crypto').KeyObject) =>
  key.export({ format: 'pem', type: key.type === 'private' ? 'pkcs8' : 'spki' }).toString();

describe('clients delegation-keys', SQLITE_SUITE_ONLY, () => {
  let data: string;
  let service: RunningService;
  let clientId: string;
  before(async () => {
    data = mkdtempSync(join(tmpdir(), 'service-idp-delegation-'));
    service = await startService(loadConfig({ port: '0', data }, {}));
    clientId = JSON.parse(
      (await run(['clients', 'create', '--data', data, '--name', 'Shop', '--origin', 'https://shop.test', '--json'])).stdout,
    ).clientId;
  });
  after(async () => {
    await service.close();
    rmSync(data, { recursive: true, force: true });
  });

  it('prints secret-store lines that ServiceDelegationClient.fromEnv() uses against the running service', async () => {
    const text = await run(['clients', 'delegation-keys', clientId, '--data', data, '--issuer', service.url]);
    assert.equal(text.code, 0, text.stderr);
    const env = Object.fromEntries(
      text.stdout
        .split('\n')
        .filter((line) => /^[A-Z0-9_]+=/.test(line))
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    assert.deepEqual(Object.keys(env).sort(), [
      'IDP_ED25519_PUBLIC_KEY_PEM',
      'IDP_X25519_PUBLIC_KEY_PEM',
      'OAUTH_CLIENT_ID',
      'SERVICE_BASE_URL',
      'SP_ED25519_PRIVATE_KEY_PEM',
      'SP_X25519_PRIVATE_KEY_PEM',
    ]);
    assert.equal(env.SERVICE_BASE_URL, service.url);
    assert.equal(env.OAUTH_CLIENT_ID, clientId);
    const sp = ServiceDelegationClient.fromEnv(env);
    assert.deepEqual(await sp.getUserCredentials('nobody@example.com'), {
      mfa_method: 'none',
      status: 'not_enrolled',
      message: 'No MFA method is enrolled.',
    });
  });

  it('imports SP public keys made elsewhere, prints no private key, and the SP signs with its own', async () => {
    const signing = generateKeyPairSync('ed25519');
    const encryption = generateKeyPairSync('x25519');
    writeFileSync(join(data, 'sp-sign.pem'), pem(signing.publicKey));
    writeFileSync(join(data, 'sp-enc.pem'), pem(encryption.publicKey));
    const result = await run([
      'clients',
      'delegation-keys',
      clientId,
      '--data',
      data,
      '--issuer',
      service.url,
      '--json',
      '--sp-signing-key',
      join(data, 'sp-sign.pem'),
      '--sp-encryption-key',
      join(data, 'sp-enc.pem'),
    ]);
    assert.equal(result.code, 0, result.stderr);
    const env = JSON.parse(result.stdout);
    assert.equal(env.SP_ED25519_PRIVATE_KEY_PEM, undefined);
    const sp = ServiceDelegationClient.fromKeys({
      spSigningKey: pem(signing.privateKey),
      spEncryptionKey: pem(encryption.privateKey),
      idpVerifyKey: env.IDP_ED25519_PUBLIC_KEY_PEM,
      idpEncryptionKey: env.IDP_X25519_PUBLIC_KEY_PEM,
      baseUrl: service.url,
      spId: clientId,
    });
    assert.equal((await sp.getUserCredentials('nobody@example.com')).status, 'not_enrolled');
  });

  it('refuses swapped key types with a message naming the flag', async () => {
    const signing = generateKeyPairSync('ed25519');
    const encryption = generateKeyPairSync('x25519');
    writeFileSync(join(data, 'a.pem'), pem(encryption.publicKey));
    writeFileSync(join(data, 'b.pem'), pem(signing.publicKey));
    const swapped = await run([
      'clients',
      'delegation-keys',
      clientId,
      '--data',
      data,
      '--sp-signing-key',
      join(data, 'a.pem'),
      '--sp-encryption-key',
      join(data, 'b.pem'),
    ]);
    assert.notEqual(swapped.code, 0);
    assert.match(swapped.stderr, /--sp-signing-key/);
    assert.match((await run(['clients', 'delegation-keys', 'cli_nope', '--data', data])).stderr, /no client/);
  });
});
