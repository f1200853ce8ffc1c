/**
 * Attacks on the account center's second factor and proven actions: another site's page posts
 * an enrollment, a change, a proof, new recovery codes or a rename (CSRF); a session whose
 * sign-in is old does them; a user carries another user's MFA session or device id; a stolen
 * session (cookie and page) tries to move the factor, export, delete or mint recovery codes
 * without the factor in force, guesses codes past the limit, or replays a spent proof. Every
 * refusal changes nothing; the factor in force (or a recovery code, except for new recovery
 * codes) is the only way through.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { ACCOUNT_RECENT_SIGN_IN_SECONDS, MFA_MAX_ATTEMPTS } from '../../src/defaults.js';
import {
  accountAction,
  accountProof,
  accountSession,
  accountSuite,
  accountUser,
  mailedCodes,
  mailedProof,
  nextMailCode,
  stepSession,
} from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

const secretOf = (html: string) => html.match(/<code data-secret>([A-Z2-7]+)<\/code>/)?.[1] ?? '';
const codesOf = (html: string) => [...html.matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1] as string);

describe('account center: second factor, recovery codes, proofs, rename', () => {
  let service: TestService;
  const { clock } = accountSuite((started) => {
    service = started;
  });

  const totp = (secret: string, steps = 0) =>
    new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: clock.now() + steps * 30_000 });
  const methodOf = async (userId: string) => (await service.ctx.mfa.methodOf(userId))?.method;
  const exists = async (email: string) =>
    service.ctx.users.find(email).then(
      () => true,
      () => false,
    );
  type Session = Awaited<ReturnType<typeof accountSession>>;

  /** A signed-in user who enrolls in TOTP on the account page; returns the secret and the first recovery codes. */
  async function totpUser(devices = 1) {
    const user = await accountUser(service, clock, devices);
    const session = await accountSession(service, user, clock.now);
    const started = await accountAction(service, session, 'mfa/change', { method: 'totp' });
    assert.equal(started.status, 200);
    const html = await started.text();
    const secret = secretOf(html);
    assert.match(secret, /^[A-Z2-7]{16,}$/, 'the enrollment shows the key');
    assert.match(html, /href="otpauth:\/\/totp\//, 'and the otpauth link');
    const done = await accountAction(service, session, 'mfa/verify', { session: stepSession(html), code: totp(secret) });
    assert.equal(done.status, 200);
    const codes = codesOf(await done.text());
    assert.ok(codes.length >= 8, 'the first recovery codes are shown once');
    assert.equal(await methodOf(user.userId), 'totp');
    return { user, session, secret, codes };
  }

  it('enroll TOTP: the key and a code confirm it; the page then offers the change and recovery codes', async () => {
    const { session } = await totpUser();
    const page = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } })).text();
    assert.match(page, /action="\/account\/mfa\/change"/);
    assert.match(page, /name="action" value="recovery-codes"/);
  });

  it('CSRF: every new action without its token or from another origin is 403 and changes nothing', async () => {
    const { user, session, secret } = await totpUser(2);
    const open = await accountProof(service, session, 'recovery-codes');
    const fields: [string, Record<string, string>][] = [
      ['mfa/change', { method: 'email' }],
      ['mfa/verify', { session: open.sessionId, code: totp(secret) }],
      ['proof', { action: 'export' }],
      ['recovery-codes', { session: open.sessionId, code: totp(secret) }],
      ['devices/rename', { device: user.deviceId, name: 'Evil' }],
    ];
    for (const [action, body] of fields)
      for (const override of [
        { csrf: undefined },
        { csrf: 'x'.repeat(43) },
        { origin: 'https://evil.example' },
        { 'sec-fetch-site': 'cross-site' },
      ]) {
        const answer = await accountAction(service, session, action, body, override);
        assert.equal(answer.status, 403, `${action} ${JSON.stringify(override)}`);
      }
    assert.equal(await methodOf(user.userId), 'totp');
    const device = (await service.ctx.users.devices(user.userId)).find((d) => d.id === user.deviceId);
    assert.notEqual(device?.name, 'Evil');
    // The proof opened above was not spent by the refused posts (the next TOTP step: the enrollment's code is spent).
    clock.tick();
    const codes = await accountAction(service, session, 'recovery-codes', { session: open.sessionId, code: totp(secret) });
    assert.equal(codes.status, 200);
  });

  it('a stale session: enrolling, changing, proving and new recovery codes answer 403 (sign in again) and change nothing', async () => {
    const user = await accountUser(service, clock, 1);
    const stale = await accountSession(service, user, clock.now, ACCOUNT_RECENT_SIGN_IN_SECONDS + 5);
    const mails = await mailedCodes(service, user.email);
    for (const [action, body] of [
      ['mfa/change', { method: 'totp' }],
      ['mfa/verify', { session: 'mfa_unknown', code: '123456' }],
      ['proof', { action: 'export' }],
      ['recovery-codes', { session: 'mfa_unknown', code: '123456' }],
    ] as const) {
      const answer = await accountAction(service, stale, action, body);
      assert.equal(answer.status, 403, action);
      assert.match(await answer.text(), /sign in again/i);
    }
    assert.equal(await methodOf(user.userId), undefined);
    assert.deepEqual(await mailedCodes(service, user.email), mails, 'no code was sent');
  });

  it('change: the factor in force proves it first; wrong codes count and end the step; a recovery code stands in for a lost factor', async () => {
    const { user, session, secret, codes } = await totpUser();
    clock.tick();
    // A stolen session alone cannot move the factor: the first step asks for the TOTP code and hands out nothing new.
    const first = await accountAction(service, session, 'mfa/change', { method: 'email' });
    const html = await first.text();
    assert.equal(secretOf(html), '');
    for (let i = 0; i < MFA_MAX_ATTEMPTS; i++) {
      const guess = await accountAction(service, session, 'mfa/verify', { session: stepSession(html), code: String(100000 + i) });
      assert.ok([400, 423].includes(guess.status), `guess ${i}: ${guess.status}`);
    }
    const late = await accountAction(service, session, 'mfa/verify', { session: stepSession(html), code: totp(secret) });
    assert.notEqual(late.status, 200, 'the right code after the limit is refused: attempts are counted before checking');
    assert.equal(await methodOf(user.userId), 'totp');

    // A lost authenticator: a recovery code proves the change, then the new method's own code confirms it.
    clock.tick();
    const again = await (await accountAction(service, session, 'mfa/change', { method: 'email' })).text();
    const seen = await mailedCodes(service, user.email);
    const proven = await accountAction(service, session, 'mfa/verify', { session: stepSession(again), code: codes[0] as string });
    assert.equal(proven.status, 200);
    const next = await proven.text();
    const code = await nextMailCode(service, user.email, seen);
    const recoveryAsNew = await accountAction(service, session, 'mfa/verify', { session: stepSession(next), code: codes[1] as string });
    assert.equal(recoveryAsNew.status, 400, 'the new method is confirmed by its own code, never a recovery code');
    const done = await accountAction(service, session, 'mfa/verify', { session: stepSession(next), code });
    assert.equal(done.status, 200);
    assert.equal(await methodOf(user.userId), 'email');
    // The spent recovery code does not prove again.
    clock.tick();
    const third = await (await accountAction(service, session, 'mfa/change', { method: 'totp' })).text();
    assert.equal(
      (await accountAction(service, session, 'mfa/verify', { session: stepSession(third), code: codes[0] as string })).status,
      400,
    );
  });

  it('new recovery codes need the factor in force (not a recovery code); shown once; the old set stops working; a proof is spent once', async () => {
    const { user, session, secret, codes } = await totpUser();
    const open = await accountProof(service, session, 'recovery-codes');
    assert.equal(open.status, 200);
    assert.doesNotMatch(open.html, /or one of your recovery codes/, 'no recovery code is offered for this proof');
    const byRecovery = await accountAction(service, session, 'recovery-codes', { session: open.sessionId, code: codes[0] as string });
    assert.equal(byRecovery.status, 400);
    clock.tick(); // the next TOTP step: the enrollment's code is spent
    const fresh = await accountAction(service, session, 'recovery-codes', { session: open.sessionId, code: totp(secret) });
    assert.equal(fresh.status, 200);
    const renewed = codesOf(await fresh.text());
    assert.equal(renewed.length, codes.length);
    assert.equal(renewed.filter((c) => codes.includes(c)).length, 0);
    const replay = await accountAction(service, session, 'recovery-codes', { session: open.sessionId, code: totp(secret) });
    assert.notEqual(replay.status, 200, 'a spent proof does not mint another set');
    // The old set no longer proves anything; the new one does (for an export).
    clock.tick();
    const exportProof = await accountProof(service, session, 'export');
    assert.equal(
      (await accountAction(service, session, 'export', { session: exportProof.sessionId, code: codes[2] as string })).status,
      400,
    );
    const exported = await accountAction(service, session, 'export', { session: exportProof.sessionId, code: renewed[0] as string });
    assert.equal(exported.status, 200);
    assert.equal((await exported.json()).account.email, user.email);
    // A user without a second factor has no recovery codes to renew.
    const plain = await accountSession(service, await accountUser(service, clock), clock.now);
    assert.equal((await accountProof(service, plain, 'recovery-codes')).status, 400);
  });

  it("export and delete: another user's proof, a wrong or replayed one are refused; the factor in force lets them through", async () => {
    const alice = await totpUser();
    const mallory = await totpUser();
    clock.tick(); // the next TOTP step: the enrollments' codes are spent
    const theirs = await accountProof(service, mallory.session, 'export');
    const crossed = await accountAction(service, alice.session, 'export', { session: theirs.sessionId, code: totp(mallory.secret) });
    assert.equal(crossed.status, 400, "another user's proof session proves nothing here");
    assert.doesNotMatch(await crossed.text(), /"account"/);

    const open = await accountProof(service, alice.session, 'delete', { confirm: alice.user.email });
    const wrong = await accountAction(service, alice.session, 'delete', {
      confirm: alice.user.email,
      session: open.sessionId,
      code: totp(alice.secret, 10),
    });
    assert.equal(wrong.status, 400);
    assert.match(await wrong.text(), /That code is not right\. 4 more tries\./);
    assert.equal(await exists(alice.user.email), true);
    const deleted = await accountAction(service, alice.session, 'delete', {
      confirm: alice.user.email,
      session: open.sessionId,
      code: totp(alice.secret),
    });
    assert.equal(deleted.status, 200);
    assert.equal(await exists(alice.user.email), false);

    const exportOpen = await accountProof(service, mallory.session, 'export');
    const code = totp(mallory.secret);
    assert.equal((await accountAction(service, mallory.session, 'export', { session: exportOpen.sessionId, code })).status, 200);
    assert.notEqual(
      (await accountAction(service, mallory.session, 'export', { session: exportOpen.sessionId, code })).status,
      200,
      'a proof serves one action',
    );
  });

  it("another user's change step: its session id proves nothing for this user, and neither factor moves", async () => {
    const alice = await totpUser();
    const mallory = await totpUser();
    clock.tick();
    const theirs = await (await accountAction(service, mallory.session, 'mfa/change', { method: 'email' })).text();
    const crossed = await accountAction(service, alice.session, 'mfa/verify', { session: stepSession(theirs), code: totp(mallory.secret) });
    assert.equal(crossed.status, 400);
    assert.equal(await methodOf(alice.user.userId), 'totp');
    assert.equal(await methodOf(mallory.user.userId), 'totp');
    // Mallory's own step is untouched by the crossed attempt: her code still proves it.
    assert.equal(
      (await accountAction(service, mallory.session, 'mfa/verify', { session: stepSession(theirs), code: totp(mallory.secret) })).status,
      200,
    );
  });

  it('no second factor: a fresh code mailed to the address stands in; a recovery code or a wrong code does not', async () => {
    const user = await accountUser(service, clock, 1);
    const session = await accountSession(service, user, clock.now);
    const { open, code } = await mailedProof(service, session, user.email, 'export');
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    assert.equal((await accountAction(service, session, 'export', { session: open.sessionId, code: wrong })).status, 400);
    assert.equal((await accountAction(service, session, 'export', { session: open.sessionId, code: 'ABCD-EFGH-JKLM' })).status, 400);
    const right = await accountAction(service, session, 'export', { session: open.sessionId, code });
    assert.equal(right.status, 200, (await right.text()).match(/role="alert">[^<]*/)?.[0]);
  });

  it("rename: one's own device only, the name validated at the edge (400, unchanged); another user's id is 404", async () => {
    const user = await accountUser(service, clock, 1);
    const other = await accountUser(service, clock, 1);
    const session: Session = await accountSession(service, user, clock.now);
    const nameOf = async (userId: string, id: string) => (await service.ctx.users.devices(userId)).find((d) => d.id === id)?.name ?? null;
    for (const name of ['', ' ', 'a'.repeat(65), 'evil\u202Egnp', 'tab\there', 'line\nbreak'])
      assert.equal(
        (await accountAction(service, session, 'devices/rename', { device: user.deviceId, name })).status,
        400,
        JSON.stringify(name),
      );
    assert.equal(await nameOf(user.userId, user.deviceId), null);
    assert.equal((await accountAction(service, session, 'devices/rename', { device: other.deviceId, name: 'Mine now' })).status, 404);
    assert.equal(await nameOf(other.userId, other.deviceId), null);
    const renamed = await accountAction(service, session, 'devices/rename', { device: user.deviceId, name: 'Work laptop' });
    assert.equal(renamed.status, 303);
    assert.equal(await nameOf(user.userId, user.deviceId), 'Work laptop');
    const page = await (await fetch(`${service.url}/account`, { headers: { cookie: `service_account=${session.session}` } })).text();
    assert.match(page, /<strong>Work laptop<\/strong>/);
    assert.match(page, /data-seen>Chrome 130 on Linux</, 'the browser and OS ua-parser-js reads, not the raw header');
    assert.doesNotMatch(page, /Mozilla\/5\.0/);
  });
});
