/**
 * A username-less passkey sign-in whose assertion carries no user handle. The request named
 * no credential, so the authenticator had to pick a discoverable one and return its user handle
 * (WebAuthn L3 7.2 step 6): an assertion without one did not come from such a ceremony (a relayed
 * or rebuilt response), and is refused like any invalid assertion (401 ERR_PASSKEY_INVALID,
 * recorded as `user_handle`), with nothing signed in and the challenge spent. At an MFA step,
 * where the request lists the user's credentials, the user handle may be absent (the spec
 * allows it), but one that is not the passkey's user's is refused. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { APP_ORIGIN, loginWithDevice, startTestService, type TestService } from '../../support/helpers.js';
import { getAssertion } from '../../support/webauthn-authenticator.js';
import { passkeyMfaOptions, signInWithPasskey, userWithPasskey, userWithPasskeyMfa } from '../../support/webauthn-helpers.js';

const withoutUserHandle = (assertion: any) => {
  const { userHandle: _dropped, ...response } = assertion.response;
  return { ...assertion, response };
};

describe('passkey assertion without a user handle', () => {
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true });
  });
  after(() => service.close());

  const refusals = async (reason: string) =>
    (await service.ctx.events.list({ type: 'passkey.refused', limit: 1000 })).events.filter(
      (e) => (e.detail as { reason: string }).reason === reason,
    ).length;

  it('a username-less sign-in without the user handle is refused as an invalid passkey', async () => {
    const { credential } = await userWithPasskey(service);
    const before = await refusals('user_handle');
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    assert.equal(asked.body.options.allowCredentials, undefined, 'the request names no credential: a discoverable one answers');
    const full = getAssertion(asked.body.options, credential, { origin: APP_ORIGIN });
    const r = await service.post(Paths.passkeyAuthentication, { credential: withoutUserHandle(full) });
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.equal(r.body.code, 'ERR_PASSKEY_INVALID');
    assert.equal(r.body.authorizationCode, undefined);
    assert.equal(await refusals('user_handle'), before + 1);
    // The same assertion with its user handle: the challenge was spent by the refused attempt.
    const again = await service.post(Paths.passkeyAuthentication, { credential: full });
    assert.equal(again.status, 400);
    assert.equal(again.body.code, 'ERR_SESSION_INVALID');
    // With the user handle, the same passkey signs in.
    assert.equal((await signInWithPasskey(service, credential)).body.status, 'SUCCESS');
  });

  it('also when the page names the user (userid): the assertion still answered a request that named no credential', async () => {
    const { credential, email } = await userWithPasskey(service);
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    const assertion = withoutUserHandle(getAssertion(asked.body.options, credential, { origin: APP_ORIGIN }));
    const r = await service.post(Paths.passkeyAuthentication, { credential: assertion, userid: email });
    assert.equal(r.status, 401, JSON.stringify(r.body));
    assert.equal(r.body.code, 'ERR_PASSKEY_INVALID');
  });

  it('at an MFA step (allowCredentials lists the user’s passkeys) an absent user handle is accepted, a wrong one refused', async () => {
    const { email, credential, device } = await userWithPasskeyMfa(service);
    const wrong = await loginWithDevice(service, device, email);
    const wrongOptions = await passkeyMfaOptions(service, email, wrong.sessionId);
    assert.ok(wrongOptions.allowCredentials.length > 0);
    const forged = getAssertion(
      wrongOptions,
      { ...credential, userHandle: Buffer.from('someone else').toString('base64url') },
      { origin: APP_ORIGIN },
    );
    const refused = await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: wrong.sessionId, credential: forged });
    assert.equal(refused.status, 401, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'ERR_PASSKEY_INVALID');

    const step = await loginWithDevice(service, device, email);
    const options = await passkeyMfaOptions(service, email, step.sessionId);
    const assertion = withoutUserHandle(getAssertion(options, credential, { origin: APP_ORIGIN }));
    const ok = await service.post(Paths.passkeyMfaVerify, { userid: email, sessionId: step.sessionId, credential: assertion });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
  });
});
