/**
 * Flooding the unauthenticated passkey sign-in routes from one network. Anyone may ask for
 * sign-in options and post assertions: each assertion costs a signature check and database
 * reads, and may write a spent challenge. An attacker scripting them (to load the service, or to
 * try stolen or guessed credentials at volume) is held to PASSKEY_OPTIONS_PER_IP and
 * PASSKEY_SIGN_IN_PER_IP per client IP, counted through the shared throttle (rate_counters), so
 * every node sees the same count. Past the budget: 429 ERR_RATE_LIMITED with Retry-After, before
 * any work; a forged X-Forwarded-For (no trusted proxy) does not reset it; the window ends and
 * the user signs in. Runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { PASSKEY_OPTIONS_PER_IP, PASSKEY_SIGN_IN_PER_IP } from '../../../src/defaults.js';
import { APP_ORIGIN, startTestService, type TestService } from '../../support/helpers.js';
import { createCredential, getAssertion } from '../../support/webauthn-authenticator.js';
import { signInWithPasskey, userWithPasskey } from '../../support/webauthn-helpers.js';

describe('passkey sign-in flood from one IP', () => {
  const clock = { at: Date.now(), now: () => clock.at };
  let service: TestService;
  before(async () => {
    service = await startTestService({ testMode: true, now: clock.now });
  });
  after(() => service.close());

  const post = async (path: string, body: unknown, forwardedFor?: string) => {
    const answer = await service.post(path, body, APP_ORIGIN, forwardedFor ? { 'x-forwarded-for': forwardedFor } : {});
    return { ...answer, retryAfter: answer.headers.get('retry-after') };
  };
  const limited = (r: { status: number; retryAfter: string | null; body: any }, windowSeconds: number) => {
    assert.equal(r.status, 429, JSON.stringify(r.body));
    assert.equal(r.body.code, 'ERR_RATE_LIMITED');
    assert.ok(Number(r.retryAfter) >= 1 && Number(r.retryAfter) <= windowSeconds, `Retry-After ${r.retryAfter}`);
  };
  const [optionsMinute] = PASSKEY_OPTIONS_PER_IP;
  const [signInMinute] = PASSKEY_SIGN_IN_PER_IP;

  it(`refuses sign-in options past ${optionsMinute.max} per ${optionsMinute.windowSeconds} s, forged X-Forwarded-For or not, until the window ends`, async () => {
    clock.at += 2 * 60 * 60 * 1000; // fresh windows
    for (let i = 0; i < optionsMinute.max; i++) assert.equal((await post(Paths.passkeyAuthenticationOptions, {})).status, 200);
    limited(await post(Paths.passkeyAuthenticationOptions, {}), optionsMinute.windowSeconds);
    limited(await post(Paths.passkeyAuthenticationOptions, {}, '203.0.113.9'), optionsMinute.windowSeconds);
    clock.at += optionsMinute.windowSeconds * 1000;
    assert.equal((await post(Paths.passkeyAuthenticationOptions, {})).status, 200);
  });

  it(`refuses sign-in attempts past ${signInMinute.max} per ${signInMinute.windowSeconds} s, before checking the passkey; it signs in once the window ends`, async () => {
    clock.at += 2 * 60 * 60 * 1000;
    const { credential } = await userWithPasskey(service);
    const options = (await post(Paths.passkeyAuthenticationOptions, {})).body.options;
    // A credential the service never saw, as an attacker trying keys would post.
    const stranger = createCredential(
      {
        rp: { id: options.rpId, name: 'x' },
        user: { id: 'c3RyYW5nZXI', name: 'stranger', displayName: 'stranger' },
        challenge: options.challenge,
        pubKeyCredParams: [{ type: 'public-key', alg: -7 }],
        timeout: 1,
        excludeCredentials: [],
        authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
        attestation: 'none',
      },
      { origin: APP_ORIGIN },
    ).credential;
    for (let i = 0; i < signInMinute.max; i++) {
      const fresh = (await post(Paths.passkeyAuthenticationOptions, {})).body.options;
      const tried = await post(Paths.passkeyAuthentication, { credential: getAssertion(fresh, stranger, { origin: APP_ORIGIN }) });
      assert.equal(tried.status, 401, JSON.stringify(tried.body));
      assert.equal(tried.body.code, 'ERR_PASSKEY_INVALID');
    }
    const refusalsBefore = (await service.ctx.events.list({ type: 'passkey.refused', limit: 1000 })).events.length;
    const fresh = (await post(Paths.passkeyAuthenticationOptions, {})).body.options;
    limited(
      await post(Paths.passkeyAuthentication, { credential: getAssertion(fresh, credential, { origin: APP_ORIGIN }) }),
      signInMinute.windowSeconds,
    );
    limited(
      await post(Paths.passkeyAuthentication, { credential: getAssertion(fresh, stranger, { origin: APP_ORIGIN }) }, '198.51.100.4'),
      signInMinute.windowSeconds,
    );
    assert.equal(
      (await service.ctx.events.list({ type: 'passkey.refused', limit: 1000 })).events.length,
      refusalsBefore,
      'refused before any check: nothing recorded',
    );
    clock.at += signInMinute.windowSeconds * 1000;
    const signedIn = await signInWithPasskey(service, credential);
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    assert.equal(signedIn.body.status, 'SUCCESS');
  });
});
