/**
 * Attack: getting a token for an organization that requires MFA (`mfaRequired`) from a sign-in
 * without a second factor: by naming it on a refresh, by picking it on the organization picker,
 * by a prompt=none request, or by naming it at /authorize. The hosted sign-in for such an
 * organization requires the factor as an app's MFA policy does; a sign-in without it is stepped
 * up (sent through the hosted sign-in again), never given the code; the token endpoint refuses
 * a code or a refresh for it without `mfa` (invalid_grant), nothing issued. Runs on SQLite and,
 * with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import * as OTPAuth from 'otpauth';
import { createPkcePair } from 'service-web';
import { ACR } from '../../src/oidc/acr.js';
import { sendClock, type TestService, uniqueEmail } from '../support/helpers.js';
import {
  authorize,
  type CookieJar,
  complete,
  hostedBrowser,
  hostedServiceClient,
  paramsOf,
  redeem,
  requestIdOf,
} from '../support/oidc-helpers.js';
import { credentials, type RelyingParty, refresh } from '../support/oidc-token-helpers.js';
import { choose, claimsOf, memberOf, pickerPage, startWithOrganizations } from './organization-helpers.js';

describe('an organization that requires MFA', () => {
  let service: TestService;
  let rp: RelyingParty;
  const clock = sendClock();
  before(async () => {
    ({ service, rp } = await startWithOrganizations({ now: clock.now }));
  });
  after(() => service.close());

  /** A user in Acme (no MFA required) and in Vault (MFA required): their ids. */
  async function memberOfBoth(label: string) {
    const email = uniqueEmail(label);
    const { userId, orgId: acme } = await memberOf(service, email, 'Acme', ['viewer']);
    const vault = await service.ctx.organizations.create({ name: 'Vault', mfaRequired: true }, 'test');
    await service.ctx.organizations.addMember(vault.id, userId, ['editor'], 'test');
    return { email, userId, acme, vault: vault.id };
  }

  /** /authorize for the relying party in this browser: where it sends the browser, and the PKCE pair. */
  async function begin(jar: CookieJar, extra: Record<string, string>) {
    const pkce = await createPkcePair();
    const begun = await authorize(
      service,
      {
        response_type: 'code',
        client_id: rp.clientId,
        redirect_uri: rp.redirectUri,
        scope: 'openid email offline_access',
        state: 'st',
        code_challenge: pkce.codeChallenge,
        code_challenge_method: 'S256',
        ...extra,
      },
      jar,
    );
    return { location: begun.location ?? '', pkce };
  }

  /**
   * The hosted sign-in at `location` on a new device of this browser (its cookies): the emailed
   * code, then the enrollment the organization requires (an authenticator app); the app's redirect.
   */
  async function signInEnrollingTotp(jar: CookieJar, location: string, email: string) {
    clock.tick();
    const client = await hostedServiceClient(service, new IDBFactory(), requestIdOf(location), jar);
    const pkce = await createPkcePair();
    const started = await client.authenticate(email, {
      rememberDevice: true,
      code_challenge: pkce.codeChallenge,
      code_challenge_method: 'S256',
    });
    assert.equal(started.status, 'OTP_NEEDED');
    await client.verifyEmailOtp({ userid: email, otp: await service.latestOtp(email) });
    assert.equal(
      (await client.verifyDevice({ userid: email })).status,
      'MFA_ENROLLMENT_NEEDED',
      'the organization requires a second factor',
    );
    const enrolling = await client.verifyDevice({ userid: email, mfaMethod: 'totp' });
    assert.equal(enrolling.status, 'FINALIZE_REGISTRATION_NEEDED');
    const secret = OTPAuth.Secret.fromBase32((enrolling as { secret: string }).secret);
    const enrolled = await client.verifyMfa({ userid: email, otp: new OTPAuth.TOTP({ secret }).generate({ timestamp: clock.now() }) });
    assert.equal(enrolled.status, 'SUCCESS');
    const done = await complete(service, jar, {
      request: requestIdOf(location),
      code: enrolled.status === 'SUCCESS' ? enrolled.code : '',
      codeVerifier: pkce.codeVerifier,
    });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    return done.location ?? '';
  }

  const tokensOf = async (location: string, codeVerifier: string) =>
    redeem(service, { code: paramsOf(location).code ?? '', redirect_uri: rp.redirectUri, code_verifier: codeVerifier, ...credentials(rp) });

  it('MFA bypassed by naming the organization on refresh: invalid_grant, no token', async () => {
    const { email, acme, vault } = await memberOfBoth('refresh');
    clock.tick();
    const browser = hostedBrowser(service);
    const { location, pkce } = await begin(browser.jar, { organization: acme });
    const signedIn = await browser.signIn(location, email);
    const tokens = await tokensOf(signedIn.location ?? '', pkce.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.ok(!claimsOf(tokens.body.id_token).amr.includes('mfa'));
    const switched = await refresh(service, { refresh_token: tokens.body.refresh_token, organization: vault, ...credentials(rp) });
    assert.equal(switched.status, 400);
    assert.equal(switched.body.error, 'invalid_grant');
    assert.equal(switched.body.access_token, undefined);
    assert.equal(switched.body.id_token, undefined);
  });

  it('MFA bypassed by picking the organization: the pick sends the user through MFA, and only then the code, amr and acr saying mfa', async () => {
    const { email, vault } = await memberOfBoth('pick');
    clock.tick();
    const browser = hostedBrowser(service);
    const { location, pkce } = await begin(browser.jar, { scope: 'openid email organization' });
    const signedIn = await browser.signIn(location, email);
    assert.match(signedIn.location ?? '', /^\/signin\/organization\?/);
    const picker = await pickerPage(service, browser.jar, signedIn.location ?? '');
    const chosen = await choose(service, browser.jar, { request: picker.requestId, csrf: picker.csrf, organization: vault });
    assert.equal(chosen.status, 303);
    assert.match(chosen.location ?? '', /^\/signin\?request=/, 'the step-up: the hosted sign-in again, no code');
    assert.equal(paramsOf(new URL(chosen.location ?? '', service.url).href).code, undefined);
    const after = await signInEnrollingTotp(browser.jar, chosen.location ?? '', email);
    const tokens = await tokensOf(after, pkce.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const id = claimsOf(tokens.body.id_token);
    assert.equal(id.org_id, vault);
    assert.ok(id.amr.includes('mfa'), `amr ${id.amr}`);
    assert.equal(id.acr, ACR.mfa);
  });

  it('MFA bypassed by a prompt=none request with a session without it: interaction_required, no code', async () => {
    const { email, vault } = await memberOfBoth('silent');
    clock.tick();
    const browser = hostedBrowser(service);
    const first = await begin(browser.jar, {});
    await browser.signIn(first.location, email);
    // Naming the organization, and picking it as the only organization of a user of Vault alone.
    const named = await begin(browser.jar, { organization: vault, prompt: 'none' });
    assert.deepEqual([paramsOf(named.location).error, paramsOf(named.location).code], ['interaction_required', undefined]);
    const only = uniqueEmail('only-vault');
    const user = await service.ctx.enabledUsers.findOrCreate(only, clock.now());
    await service.ctx.organizations.addMember(vault, user?.id as string, [], 'test');
    clock.tick();
    const other = hostedBrowser(service);
    await other.signIn((await begin(other.jar, {})).location, only);
    const picked = await begin(other.jar, { scope: 'openid email organization', prompt: 'none' });
    assert.deepEqual([paramsOf(picked.location).error, paramsOf(picked.location).code], ['interaction_required', undefined]);
    // Without prompt=none the same session is sent to the hosted sign-in for the second factor.
    const stepUp = await begin(other.jar, { scope: 'openid email organization' });
    assert.match(stepUp.location, /^\/signin\?request=/);
  });

  it('MFA bypassed by naming the organization at /authorize: the hosted sign-in requires the second factor', async () => {
    const { email, vault } = await memberOfBoth('named');
    const jar = hostedBrowser(service).jar;
    const { location, pkce } = await begin(jar, { organization: vault });
    const after = await signInEnrollingTotp(jar, location, email);
    const tokens = await tokensOf(after, pkce.codeVerifier);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    const id = claimsOf(tokens.body.id_token);
    assert.deepEqual([id.org_id, id.acr], [vault, ACR.mfa]);
  });

  it('an organization that began requiring MFA after the sign-in: its refresh is refused', async () => {
    const { email, acme } = await memberOfBoth('later');
    clock.tick();
    const browser = hostedBrowser(service);
    const { location, pkce } = await begin(browser.jar, { organization: acme });
    const tokens = await tokensOf((await browser.signIn(location, email)).location ?? '', pkce.codeVerifier);
    await service.ctx.organizations.update(acme, { mfaRequired: true }, 'test');
    try {
      const refreshed = await refresh(service, { refresh_token: tokens.body.refresh_token, ...credentials(rp) });
      assert.deepEqual([refreshed.status, refreshed.body.error, refreshed.body.access_token], [400, 'invalid_grant', undefined]);
    } finally {
      await service.ctx.organizations.update(acme, { mfaRequired: false }, 'test');
    }
  });
});
