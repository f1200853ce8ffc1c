/**
 * Passkeys through the wire protocol, with a software authenticator (webauthn-authenticator.ts):
 * registration from a signed-in device, sign-in with and without an address ending in a code
 * redeemed at the same /oauth/token, amr, the device list (synced or not), rename and revoke,
 * the application's "a passkey is not MFA" policy, and the options every ceremony sends.
 * Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeviceOps, Paths } from 'service-protocol';
import { PASSKEY_CEREMONY_TTL_SECONDS } from '../../../src/defaults.js';
import {
  APP_ORIGIN,
  claimsOf,
  deviceProof,
  type RawDevice,
  registerRawDevice,
  registerWithMfa,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../../support/helpers.js';
import { signInWithPasskey, userWithPasskey } from '../../support/webauthn-helpers.js';

const RP_ID = new URL(APP_ORIGIN).hostname;

describe('passkeys', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true });
  });
  after(() => service.close());

  it('sends creation options: this rp id, resident key and user verification required, attestation none, a 5-minute timeout', async () => {
    const { options, added } = await userWithPasskey(service);
    assert.equal(options.rp.id, RP_ID);
    assert.equal(options.rp.name, 'Test App');
    assert.deepEqual(options.authenticatorSelection, { residentKey: 'required', requireResidentKey: true, userVerification: 'required' });
    assert.equal(options.attestation, 'none');
    assert.equal(options.timeout, PASSKEY_CEREMONY_TTL_SECONDS * 1000);
    assert.ok(options.pubKeyCredParams.some((p: { alg: number }) => p.alg === -7));
    assert.equal(added.status, 'SUCCESS');
    assert.equal(added.synced, false);
    assert.match(added.deviceId, /^dev_/);
  });

  it('refuses creation options without a proof of a signed-in device (ERR_DEVICE_UNTRUSTED) or with a proof made for another operation', async () => {
    const email = uniqueEmail();
    const device = await registerRawDevice(service, email);
    const none = await service.post(Paths.passkeyRegistrationOptions, { userid: email, cryptoVersion: 'v1', deviceProof: 'x.y.z' });
    assert.equal(none.status, 401);
    assert.equal(none.body.code, 'ERR_DEVICE_UNTRUSTED');
    const other = await service.post(Paths.passkeyRegistrationOptions, {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, device, email, DeviceOps.list),
    });
    assert.equal(other.status, 401);
    assert.equal(other.body.code, 'ERR_DEVICE_UNTRUSTED');
  });

  it('signs in without an address: a code for the same /oauth/token, amr hwk user mfa, the passkey as device_id', async () => {
    const { email, credential, passkeyId } = await userWithPasskey(service);
    const options = await service.post(Paths.passkeyAuthenticationOptions, {});
    assert.deepEqual(Object.keys(options.body.options).sort(), ['challenge', 'rpId', 'timeout', 'userVerification']);
    assert.equal(options.body.options.userVerification, 'required');
    const r = await signInWithPasskey(service, credential);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.status, 'SUCCESS');
    const claims = await claimsOf(service, r.body.code);
    assert.equal(claims.email, email);
    assert.deepEqual(claims.amr, ['hwk', 'user', 'mfa']);
    assert.equal(claims.device_id, passkeyId);
  });

  it('signs in with the address, and refuses another user’s address (ERR_PASSKEY_INVALID)', async () => {
    const { email, credential } = await userWithPasskey(service);
    const ok = await signInWithPasskey(service, credential, { userid: email.toUpperCase() });
    assert.equal(ok.body.status, 'SUCCESS');
    const wrong = await signInWithPasskey(service, credential, { userid: uniqueEmail() });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.body.code, 'ERR_PASSKEY_INVALID');
  });

  it('a synced passkey is listed as synced and signs in with amr swk', async () => {
    const { email, device, credential, passkeyId } = await userWithPasskey(service, { synced: true, name: 'Phone' });
    const list = await service.post(Paths.listDevices, {
      userid: email,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, device, email, DeviceOps.list),
    });
    const passkey = list.body.devices.find((d: { id: string }) => d.id === passkeyId);
    assert.equal(passkey.kind, 'passkey');
    assert.equal(passkey.name, 'Phone');
    assert.equal(passkey.synced, true);
    assert.equal(passkey.lastUsedAt, null);
    const browser = list.body.devices.find((d: { id: string }) => d.id === device.deviceId);
    assert.equal(browser.kind, 'browser');
    const r = await signInWithPasskey(service, credential);
    assert.deepEqual((await claimsOf(service, r.body.code)).amr, ['swk', 'user', 'mfa']);
  });

  it('lists, renames and revokes a passkey with the devices; a revoked passkey no longer signs in', async () => {
    const { email, device, credential, passkeyId } = await userWithPasskey(service);
    assert.equal((await signInWithPasskey(service, credential)).body.status, 'SUCCESS');
    const call = async (path: string, op: string, extra: object) =>
      service.post(path, { userid: email, cryptoVersion: 'v1', deviceProof: await deviceProof(service, device, email, op), ...extra });
    const renamed = await call(Paths.renameDevice, DeviceOps.rename, { deviceId: passkeyId, name: 'YubiKey' });
    assert.equal(renamed.status, 200);
    const list = await call(Paths.listDevices, DeviceOps.list, {});
    const listed = list.body.devices.find((d: { id: string }) => d.id === passkeyId);
    assert.equal(listed.name, 'YubiKey');
    assert.equal(typeof listed.lastUsedAt, 'number');
    const revoked = await call(Paths.revokeDevice, DeviceOps.revoke, { deviceId: passkeyId });
    assert.equal(revoked.status, 200);
    const after = await call(Paths.listDevices, DeviceOps.list, {});
    assert.ok(!after.body.devices.some((d: { id: string }) => d.id === passkeyId));
    const refused = await signInWithPasskey(service, credential);
    assert.equal(refused.status, 401);
    assert.equal(refused.body.code, 'ERR_PASSKEY_INVALID');
    const events = await service.ctx.events.list({ type: 'passkey.revoked', limit: 100 });
    assert.ok(events.events.some((e) => e.deviceId === passkeyId));
  });

  it('records passkey.registered and sign_in.succeeded', async () => {
    const { credential, passkeyId } = await userWithPasskey(service);
    await signInWithPasskey(service, credential);
    const registered = await service.ctx.events.list({ type: 'passkey.registered', limit: 100 });
    assert.ok(registered.events.some((e) => e.deviceId === passkeyId));
    const signedIn = await service.ctx.events.list({ type: 'sign_in.succeeded', limit: 100 });
    assert.ok(signedIn.events.some((e) => e.deviceId === passkeyId && (e.detail as { amr: string }).amr === 'hwk user mfa'));
  });

  it('an application that does not count a passkey as MFA sends a user with a second factor to the MFA step', async () => {
    const email = uniqueEmail('mfa');
    const { device } = await registerWithMfa(service, email, 'email');
    await service.ctx.operations.setPasskeyMfa(service.clientId, 'no', 'test');
    try {
      const withMfa = await userWithPasskey(service, { email, device: device as RawDevice & { deviceId: string } });
      const r = await signInWithPasskey(service, withMfa.credential);
      assert.equal(r.body.status, 'MFA_REQUIRED', JSON.stringify(r.body));
      assert.equal(r.body.method, 'email');
      const plain = await userWithPasskey(service);
      const ok = await signInWithPasskey(service, plain.credential);
      assert.equal(ok.body.status, 'SUCCESS');
      assert.deepEqual((await claimsOf(service, ok.body.code)).amr, ['hwk', 'user']);
    } finally {
      await service.ctx.operations.setPasskeyMfa(service.clientId, 'yes', 'test');
    }
  });
});
