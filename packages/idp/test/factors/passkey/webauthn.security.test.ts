/**
 * Attacks on passkey ceremonies, each refused with its code and without a change of state:
 * - a cloned authenticator: its signature counter does not move forward (WebAuthn L3 6.1.1);
 *   two assertions racing with one counter value: one wins;
 * - a replayed assertion, alone or many at once: the challenge is spent once;
 * - a credential made for another relying party id, or an assertion signed for one;
 * - an assertion from another origin (a phishing page), or a challenge issued to another page;
 * - no user verification (UV flag unset): not a passkey sign-in;
 * - a revoked passkey; another application's passkey; a user handle that is not the passkey's;
 * - an expired challenge (PASSKEY_CEREMONY_TTL_SECONDS, injected clock).
 * Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { PASSKEY_CEREMONY_TTL_SECONDS } from '../../../src/defaults.js';
import { APP_ORIGIN, startTestService, type TestService } from '../../support/helpers.js';
import { createCredential, getAssertion } from '../../support/webauthn-authenticator.js';
import { registrationOptions, signInWithPasskey, userWithPasskey } from '../../support/webauthn-helpers.js';

describe('passkey ceremonies under attack', () => {
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    service = await startTestService({ testMode: true, now: () => clock });
  });
  after(() => service.close());

  const refused = (r: { status: number; body: any }, code = 'ERR_PASSKEY_INVALID', status = 401) => {
    assert.equal(r.status, status, JSON.stringify(r.body));
    assert.equal(r.body.code, code);
  };
  const refusals = async (reason: string) =>
    (await service.ctx.events.list({ type: 'passkey.refused', limit: 1000 })).events.filter(
      (e) => (e.detail as { reason: string }).reason === reason,
    ).length;

  it('refuses a cloned credential: a counter that does not move forward, and records it', async () => {
    const { credential } = await userWithPasskey(service);
    assert.equal((await signInWithPasskey(service, credential)).body.status, 'SUCCESS'); // counter 1
    assert.equal((await signInWithPasskey(service, credential)).body.status, 'SUCCESS'); // counter 2
    const before = await refusals('counter');
    // The clone copied the key when the counter was 1: its next assertion says 2, which the original already used.
    refused(await signInWithPasskey(service, credential, { ceremony: { counter: 2 } }));
    refused(await signInWithPasskey(service, credential, { ceremony: { counter: 1 } }));
    assert.equal(await refusals('counter'), before + 2);
    assert.equal((await signInWithPasskey(service, credential)).body.status, 'SUCCESS'); // the original goes on (3)
  });

  it('of two assertions with one counter value (two copies of a key), at most one signs in', async () => {
    const { credential } = await userWithPasskey(service);
    const a = await service.post(Paths.passkeyAuthenticationOptions, {});
    const b = await service.post(Paths.passkeyAuthenticationOptions, {});
    const first = getAssertion(a.body.options, credential, { origin: APP_ORIGIN, counter: 7 });
    const second = getAssertion(b.body.options, credential, { origin: APP_ORIGIN, counter: 7 });
    const answers = await Promise.all([
      service.post(Paths.passkeyAuthentication, { credential: first }),
      service.post(Paths.passkeyAuthentication, { credential: second }),
    ]);
    assert.equal(answers.filter((r) => r.status === 200).length, 1, JSON.stringify(answers.map((r) => r.body)));
  });

  it('refuses a replayed assertion, and of ten replays sent at once accepts none', async () => {
    const { credential } = await userWithPasskey(service);
    const r = await signInWithPasskey(service, credential);
    assert.equal(r.body.status, 'SUCCESS');
    refused(await service.post(Paths.passkeyAuthentication, { credential: r.assertion }), 'ERR_SESSION_INVALID', 400);
    const fresh = await service.post(Paths.passkeyAuthenticationOptions, {});
    const once = getAssertion(fresh.body.options, credential, { origin: APP_ORIGIN });
    const answers = await Promise.all(Array.from({ length: 10 }, () => service.post(Paths.passkeyAuthentication, { credential: once })));
    assert.equal(answers.filter((a) => a.status === 200).length, 1, JSON.stringify(answers.map((a) => a.body.code ?? a.body.status)));
  });

  it('refuses an assertion signed for another relying party id', async () => {
    const { credential } = await userWithPasskey(service);
    refused(await signInWithPasskey(service, credential, { ceremony: { rpId: 'evil.test' } }));
  });

  it('refuses a passkey created for another relying party id', async () => {
    const { device, email } = await userWithPasskey(service);
    const options = await registrationOptions(service, device, email);
    const { json } = createCredential(options, { origin: APP_ORIGIN, rpId: 'other.test' });
    refused(await service.post(Paths.passkeyRegistration, { credential: json }));
  });

  it('refuses an assertion made on another origin (a phishing page relaying the challenge)', async () => {
    const { credential } = await userWithPasskey(service);
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    const phished = getAssertion(asked.body.options, credential, { origin: 'http://app-test.evil:3000' });
    refused(await service.post(Paths.passkeyAuthentication, { credential: phished }));
  });

  it('refuses an assertion without user verification, and a registration without it', async () => {
    const { credential, device, email } = await userWithPasskey(service);
    refused(await signInWithPasskey(service, credential, { ceremony: { uv: false } }));
    const { json } = createCredential(await registrationOptions(service, device, email), { origin: APP_ORIGIN, uv: false });
    refused(await service.post(Paths.passkeyRegistration, { credential: json }));
  });

  it('refuses a user handle that is not the passkey’s user’s', async () => {
    const { credential } = await userWithPasskey(service);
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    const assertion = getAssertion(
      asked.body.options,
      { ...credential, userHandle: Buffer.from('someone else').toString('base64url') },
      {
        origin: APP_ORIGIN,
      },
    );
    refused(await service.post(Paths.passkeyAuthentication, { credential: assertion }));
  });

  it('refuses another application’s passkey, and a challenge issued to another application', async () => {
    const { credential } = await userWithPasskey(service);
    const otherOrigin = 'http://other.app.test:4000';
    const other = await service.ctx.clients.create({ name: 'Other App', origins: [otherOrigin] });
    const post = async (path: string, body: unknown) => {
      const response = await fetch(service.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: otherOrigin, 'x-service-key': other.publishableKey },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    };
    const asked = await post(Paths.passkeyAuthenticationOptions, {});
    assert.equal(asked.body.options.rpId, 'other.app.test');
    // Even signed for the other app's rp id and origin, a passkey registered with Test App is not the other app's.
    const assertion = getAssertion(asked.body.options, credential, { origin: otherOrigin });
    refused(await post(Paths.passkeyAuthentication, { credential: assertion }));
    // A challenge the other app's page got is refused on Test App's.
    const crossed = getAssertion(asked.body.options, credential, { origin: APP_ORIGIN, rpId: new URL(APP_ORIGIN).hostname });
    refused(await service.post(Paths.passkeyAuthentication, { credential: crossed }), 'ERR_SESSION_INVALID', 400);
  });

  it('refuses an unknown credential with the same answer as a revoked one', async () => {
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    const { credential } = createCredential(
      { challenge: asked.body.options.challenge, rp: { id: asked.body.options.rpId }, user: { id: 'AAAA' } },
      { origin: APP_ORIGIN },
    );
    refused(
      await service.post(Paths.passkeyAuthentication, { credential: getAssertion(asked.body.options, credential, { origin: APP_ORIGIN }) }),
    );
  });

  it('refuses a challenge once PASSKEY_CEREMONY_TTL_SECONDS have passed', async () => {
    const { credential } = await userWithPasskey(service);
    const asked = await service.post(Paths.passkeyAuthenticationOptions, {});
    clock += PASSKEY_CEREMONY_TTL_SECONDS * 1000 + 1;
    const late = getAssertion(asked.body.options, credential, { origin: APP_ORIGIN });
    refused(await service.post(Paths.passkeyAuthentication, { credential: late }), 'ERR_SESSION_INVALID', 400);
  });

  it('refuses a registration attestation replayed after it was stored', async () => {
    const { device, email } = await userWithPasskey(service);
    const { json } = createCredential(await registrationOptions(service, device, email), { origin: APP_ORIGIN });
    assert.equal((await service.post(Paths.passkeyRegistration, { credential: json })).status, 200);
    refused(await service.post(Paths.passkeyRegistration, { credential: json }), 'ERR_SESSION_INVALID', 400);
  });
});
