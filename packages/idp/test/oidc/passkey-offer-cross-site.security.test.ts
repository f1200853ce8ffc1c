/**
 * Threat: cross-site POST to the hosted pages' "Add a passkey" routes. Another site's page, in
 * a browser that holds a sign-in (its cookies go along with a top-level form or a fetch),
 * asks for creation options or posts a credential. Only our own page may (Origin must be the
 * issuer's origin, as for /signin/complete and /signin/continue): 400 ERR_REQUEST_INVALID,
 * nothing stored, the held sign-in untouched. WebAuthn itself would refuse the other origin's
 * client data too (expected origin), which the second test shows from our origin's side.
 * SQLite and, with SERVICE_TEST_DATABASE_URL, PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Paths } from 'service-protocol';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import type { TestService } from '../support/helpers.js';
import { registerApp } from '../support/oidc-helpers.js';
import { heldHostedSignIn, signInPost, startHostedPasskeyService } from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('cross-site POST to the hosted passkey offer', () => {
  let service: TestService;
  let app: { clientId: string };
  before(async () => {
    service = await startHostedPasskeyService();
    app = await registerApp(service, 'App');
  });
  after(() => service.close());

  it('refuses options and registration from another origin, or with no Origin, and changes nothing', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    for (const origin of ['https://evil.example', 'http://localhost.evil.example', '']) {
      const post = signInPost(service, held.jar, origin);
      const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
      assert.equal(asked.status, 400, origin);
      assert.equal(asked.body.code, 'ERR_REQUEST_INVALID');
      assert.equal(asked.body.options, undefined);
    }
    const own = await signInPost(service, held.jar)(Paths.signInPasskeyOptions, { request: held.requestId });
    const { json } = createCredential(own.body.options, { origin: service.url });
    const forged = await signInPost(
      service,
      held.jar,
      'https://evil.example',
    )(Paths.signInPasskey, { request: held.requestId, credential: json });
    assert.equal(forged.status, 400);
    assert.equal(forged.body.code, 'ERR_REQUEST_INVALID');
    assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, held.userId), []);
    // The refused attempts spent nothing: our page still adds it, and continues.
    assert.equal((await signInPost(service, held.jar)(Paths.signInPasskey, { request: held.requestId, credential: json })).status, 200);
    assert.equal((await signInPost(service, held.jar)(Paths.signInContinue, { request: held.requestId })).status, 200);
  });

  it('a credential whose client data names another origin is refused (ERR_PASSKEY_INVALID), and nothing is stored', async () => {
    const held = await heldHostedSignIn(service, app.clientId);
    const post = signInPost(service, held.jar);
    const asked = await post(Paths.signInPasskeyOptions, { request: held.requestId });
    const { json } = createCredential(asked.body.options, { origin: 'https://evil.example' });
    const added = await post(Paths.signInPasskey, { request: held.requestId, credential: json });
    assert.equal(added.status, 401, JSON.stringify(added.body));
    assert.equal(added.body.code, 'ERR_PASSKEY_INVALID');
    assert.deepEqual(await service.ctx.passkeys.list(HOSTED_CLIENT_ID, held.userId), []);
  });
});
