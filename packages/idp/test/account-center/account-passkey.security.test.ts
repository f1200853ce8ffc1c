/**
 * Attacks on "Add a passkey" at the account center (POST /account/passkeys/options, the
 * registration grant, and POST /account/passkeys): another site's page makes the user's browser
 * ask for a grant or spend one (CSRF: no token, another session's, a foreign Origin or
 * Sec-Fetch-Site); a session whose sign-in is old; a user spends another user's grant; a grant
 * (its creation challenge) is replayed. Every refusal adds no passkey.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ACCOUNT_RECENT_SIGN_IN_SECONDS } from '../../src/defaults.js';
import { accountJson, accountSession, accountUser } from '../support/account-helpers.js';
import { sendClock, type TestService } from '../support/helpers.js';
import { startHostedPasskeyService } from '../support/oidc-passkey-helpers.js';
import { createCredential } from '../support/webauthn-authenticator.js';

describe('account center: add a passkey, security', () => {
  let service: TestService;
  const clock = sendClock();
  before(async () => {
    service = await startHostedPasskeyService({ now: clock.now });
  });
  after(() => service.close());

  type Session = { session: string; csrfToken: string };
  /** A JSON call as the account page's script makes it; `override` replaces or (undefined) drops a header. */
  const post = (who: Session, path: string, body: unknown, override: Record<string, string | undefined> = {}) =>
    accountJson(service, who, path, body, override);
  const passkeysOf = async (userId: string) =>
    (await service.ctx.users.devices(userId)).filter((d) => d.kind === 'passkey' && d.removedAt === null).map((d) => d.id);
  const signedIn = async () => {
    const user = await accountUser(service, clock);
    return { user, session: await accountSession(service, user, clock.now) };
  };
  const grant = async (who: Session) => {
    const answer = await post(who, 'passkeys/options', {});
    assert.equal(answer.status, 200);
    return ((await answer.json()) as { options: { challenge: string } }).options;
  };
  const attest = (options: unknown) => createCredential(options, { origin: service.url }).json;

  it('adds a passkey for the session’s user: listed on the page, and the user is mailed', async () => {
    const { user, session } = await signedIn();
    const options = await grant(session);
    const added = await post(session, 'passkeys', { credential: attest(options), name: 'My laptop' });
    assert.equal(added.status, 200);
    const { deviceId } = (await added.json()) as { deviceId: string };
    assert.deepEqual(await passkeysOf(user.userId), [deviceId]);
    const page = await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } });
    assert.ok((await page.text()).includes(`data-device="${deviceId}"`));
    const mails = await service.ctx.mailbox.list(100, user.email);
    assert.ok(mails.some((m) => m.subject === 'A passkey was added to your account'));
  });

  it('CSRF: no grant and no passkey without the session’s token, with another session’s, or from another origin', async () => {
    const { user, session } = await signedIn();
    const other = (await signedIn()).session;
    const attacks: Record<string, string | undefined>[] = [
      { 'x-account-csrf': undefined },
      { 'x-account-csrf': other.csrfToken },
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    const options = await grant(session);
    for (const attack of attacks) {
      assert.equal((await post(session, 'passkeys/options', {}, attack)).status, 403, JSON.stringify(attack));
      assert.equal((await post(session, 'passkeys', { credential: attest(options) }, attack)).status, 403, JSON.stringify(attack));
    }
    assert.deepEqual(await passkeysOf(user.userId), []);
  });

  it('a stale session: no grant, and a grant taken while recent is not spent once the sign-in is old', async () => {
    const user = await accountUser(service, clock);
    const stale = await accountSession(service, user, clock.now, ACCOUNT_RECENT_SIGN_IN_SECONDS + 60);
    assert.equal((await post(stale, 'passkeys/options', {})).status, 403);
    const fresh = await accountSession(service, user, clock.now);
    const options = await grant(fresh);
    clock.at += (ACCOUNT_RECENT_SIGN_IN_SECONDS + 1) * 1000;
    assert.equal((await post(fresh, 'passkeys', { credential: attest(options) })).status, 403);
    assert.deepEqual(await passkeysOf(user.userId), []);
  });

  it('another user’s grant: a passkey made with it and posted by another session is refused for both users', async () => {
    const victim = await signedIn();
    const attacker = await signedIn();
    const options = await grant(victim.session);
    const refused = await post(attacker.session, 'passkeys', { credential: attest(options) });
    assert.equal(refused.status, 400);
    assert.equal(((await refused.json()) as { code: string }).code, 'ERR_SESSION_INVALID');
    assert.deepEqual(await passkeysOf(victim.user.userId), []);
    assert.deepEqual(await passkeysOf(attacker.user.userId), []);
  });

  it('a replayed grant: its challenge is spent by the first passkey; a second one made with it is refused', async () => {
    const { user, session } = await signedIn();
    const options = await grant(session);
    assert.equal((await post(session, 'passkeys', { credential: attest(options) })).status, 200);
    const replay = await post(session, 'passkeys', { credential: attest(options) });
    assert.equal(replay.status, 400);
    assert.equal(((await replay.json()) as { code: string }).code, 'ERR_SESSION_INVALID');
    assert.equal((await passkeysOf(user.userId)).length, 1);
  });
});
