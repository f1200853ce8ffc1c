/**
 * Downgrading a passkey second factor. An application's backend (or someone holding its
 * delegation keys) tries to move a user to a passkey it could fake, or away from the user's
 * passkey with a code it can get; anyone with a signed-in device or the backend revokes the
 * user's last passkey to get the weaker factor quietly. Delegation refuses `mfaMethod: passkey`
 * (checked at the service, not only by the library); a change away from a passkey needs a
 * recovery code; losing the last passkey moves the user to email MFA only with a mail to the
 * user and a recorded event. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { openEnvelope, requestClaims, sealEnvelope } from 'service-oauth-client/delegation';
import { claimsOf, delegationFor, startTestService, type TestService } from '../../support/helpers.js';
import { userWithPasskeyMfa } from '../../support/webauthn-helpers.js';

describe('passkey MFA: downgrades through delegation and revocation', () => {
  let service: TestService;
  let delegation: Awaited<ReturnType<typeof delegationFor>>;
  before(async () => {
    service = await startTestService({ testMode: true });
    delegation = await delegationFor(service, service.clientId);
  });
  after(() => service.close());

  /** One delegation request as the library would send it, but with a body the library refuses to build. */
  async function rawDelegation(op: 'initiate_mfa_change', body: Record<string, unknown>) {
    const { keys } = delegation;
    const jwe = await sealEnvelope({
      claims: requestClaims({ iss: service.clientId, aud: service.url, op, body: body as never, ttlSeconds: 60 }) as never,
      signingKey: createPrivateKey(keys.sp?.signingPrivatePem as string),
      encryptionKey: createPublicKey(keys.idp.encryptionPublicPem),
    });
    const response = await fetch(`${service.url}/v1/delegation`, {
      method: 'POST',
      headers: { 'content-type': 'application/jose' },
      body: jwe,
    });
    assert.equal(response.status, 200);
    const claims = await openEnvelope(await response.text(), {
      decryptionKey: createPrivateKey(keys.sp?.encryptionPrivatePem as string),
      verifyKey: createPublicKey(keys.idp.verifyPublicPem),
      audience: service.clientId,
    });
    return (claims as unknown as { result: Record<string, unknown> }).result;
  }

  it('the service itself refuses initiate_mfa_change to a passkey, for a user with or without MFA, and nothing changes', async () => {
    const { email, enrolled } = await userWithPasskeyMfa(service);
    await claimsOf(service, enrolled.code);
    const result = await rawDelegation('initiate_mfa_change', { userid: email, mfaMethod: 'passkey' });
    assert.equal(result.status, 'failed');
    assert.match(String(result.message), /browser/);
    assert.equal((await delegation.client.getUserCredentials(email)).mfa_method, 'passkey');
  });

  it('a change away from a passkey sends nothing and takes no 6-digit code: only a recovery code proves the user', async () => {
    const { email, enrolled } = await userWithPasskeyMfa(service);
    await claimsOf(service, enrolled.code);
    const mailsBefore = (await service.ctx.mailbox.list(50, email)).length;
    const started = await delegation.client.initiateMfaChange({ userid: email, mfaMethod: 'email' });
    assert.equal(started.current_method, 'passkey');
    assert.equal((await service.ctx.mailbox.list(50, email)).length, mailsBefore, 'no code was sent anywhere');
    for (const otp of ['000000', '123456', '999999']) {
      const r = await delegation.client.verifyMfaChange({ userid: email, sessionId: started.session_id, otp });
      assert.equal(r.status, 'failed');
    }
    assert.equal((await delegation.client.getUserCredentials(email)).mfa_method, 'passkey');
  });

  it("the backend revoking the user's last passkey moves MFA to email with a mail to the user and an event, never silently", async () => {
    const { email, enrolled } = await userWithPasskeyMfa(service);
    await claimsOf(service, enrolled.code);
    const [passkey] = (await delegation.client.listDevices(email)).devices.filter((d) => d.name === 'Passkey');
    assert.ok(passkey, 'the passkey is in the device list');
    assert.equal((await delegation.client.revokeDevice(email, passkey.id)).status, 'success');
    assert.equal((await delegation.client.getUserCredentials(email)).mfa_method, 'email');
    const mails = await service.ctx.mailbox.list(50, email);
    assert.ok(
      mails.some((m) => /now asks for a code by email/.test(m.subject)),
      'the user is told',
    );
    const userId = (await service.ctx.enabledUsers.findByEmail(email))?.id as string;
    const events = (await service.ctx.events.list({ userId, type: 'mfa.changed', limit: 5 })).events;
    assert.equal(events.length, 1);
    assert.equal(events[0]?.clientId, service.clientId);
  });
});
