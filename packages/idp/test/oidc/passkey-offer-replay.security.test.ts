/**
 * Threat: a replayed passkey registration on the hosted pages' offer. Someone who saw the
 * page's registration on the wire (a proxy log, a HAR file) sends it again: for the same held
 * sign-in (its challenge is spent, single-use, even when the first attempt failed), or after
 * the sign-in continued to the app (the pending request is consumed: no options, no
 * registration), or to add a second passkey on one hold (the offer is for users without one).
 * Each is refused (ERR_SESSION_INVALID) and stores nothing more. SQLite and, with
 * SERVICE_TEST_DATABASE_URL, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import type { TestService } from '../support/helpers.js';
import { registerApp } from '../support/oidc-helpers.js';
import { addOfferedPasskey, heldHostedSignIn, signInPost, startHostedPasskeyService } from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('replayed registration on the hosted passkey offer', () => {
  let service: TestService;
  let app: { clientId: string };
  before(async () => {
    service = await startHostedPasskeyService();
    app = await registerApp(service, 'App');
  });
  after(() => service.close());

  const count = async (userId: string) => (await service.ctx.passkeys.list(HOSTED_CLIENT_ID, userId)).length;

  it('the same registration twice: the second is refused (the challenge is spent), one passkey stored', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const first = await addOfferedPasskey(service, held.jar, held.requestId);
    assert.equal(first.status, 200);
    const replayed = await signInPost(service, held.jar)(Paths.signInPasskey, { request: held.requestId, credential: first.json });
    assert.equal(replayed.status, 400);
    assert.equal(replayed.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await count(held.userId), 1);
  });

  it('a challenge whose first attempt failed is spent too: a corrected credential with it is refused', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    const failed = await post(Paths.signInPasskey, {
      request: held.requestId,
      credential: createCredential(asked.body.options, { origin: service.url, uv: false }).json,
    });
    assert.equal(failed.status, 401);
    const retried = await post(Paths.signInPasskey, {
      request: held.requestId,
      credential: createCredential(asked.body.options, { origin: service.url }).json,
    });
    assert.equal(retried.status, 400);
    assert.equal(retried.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await count(held.userId), 0);
  });

  it('after the sign-in continued to the app: no options, and a registration made before is refused', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    const { json } = createCredential(asked.body.options, { origin: service.url });
    assert.equal((await post(Paths.signInContinue, { request: held.requestId })).status, 200);
    const late = await post(Paths.signInPasskey, { request: held.requestId, credential: json });
    assert.equal(late.status, 400);
    assert.equal(late.body.code, 'ERR_SESSION_INVALID');
    const options = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    assert.equal(options.status, 400);
    assert.equal(options.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await count(held.userId), 0);
  });

  it('a second passkey on one held sign-in: the offer ends with the first', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    // Two option calls before either registration (two tabs, or a replayed options call).
    const [a, b] = await Promise.all([
      post(Paths.signInPasskeyOptions, { request: held.requestId }),
      post(Paths.signInPasskeyOptions, { request: held.requestId }),
    ]);
    assert.equal(
      (
        await post(Paths.signInPasskey, {
          request: held.requestId,
          credential: createCredential(a.body.options, { origin: service.url }).json,
        })
      ).status,
      200,
    );
    const second = await post(Paths.signInPasskey, {
      request: held.requestId,
      credential: createCredential(b.body.options, { origin: service.url }).json,
    });
    assert.equal(second.status, 400);
    assert.equal(second.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await count(held.userId), 1);
  });
});
