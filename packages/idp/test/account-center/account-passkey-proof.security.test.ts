/**
 * A passkey in force proven by its ceremony on the account page (POST /account/proof/passkey for
 * request options bound to the step's MFA session, then the assertion on the action's own form),
 * attacked: an assertion replayed (on its spent session, on a fresh one), carried to another
 * session, another user's or another action's (an export's proof used to delete), made with
 * another user's passkey; refused passkeys counted before checking under the code's guess rule
 * and account lock-out; and the options endpoint called without the session's token or from
 * another origin (CSRF). Every refusal changes nothing. Runs on SQLite and, with
 * SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ACCOUNT_MAX_FAILURES, ACCOUNT_RECENT_SIGN_IN_SECONDS, MFA_MAX_ATTEMPTS } from '../../src/defaults.js';
import {
  accountAction,
  accountJson,
  accountProof,
  accountSession,
  accountSuite,
  mailedCodes,
  nextMailCode,
  stepSession,
} from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';
import { registerApp } from '../support/oidc-helpers.js';
import { hostedUserWithPasskeyMfa } from '../support/oidc-passkey-helpers.js';
import { getAssertion, type SoftCredential } from '../support/webauthn-authenticator.js';

type Session = { session: string; csrfToken: string };
type Action = 'export' | 'delete' | 'recovery-codes' | 'change';

describe('account center: a passkey proven by its ceremony, security', () => {
  let service: TestService;
  let clientId: string;
  const { clock, exists } = accountSuite(
    (started) => {
      service = started;
    },
    { env: { SERVICE_IDP_ISSUER: 'http://localhost:0' } },
  );

  const signedIn = async () => {
    clientId ??= (await registerApp(service, 'Passkey proof app')).clientId;
    clock.tick();
    const user = await hostedUserWithPasskeyMfa(service, clientId);
    return { user, session: await accountSession(service, user, clock.now) };
  };

  /** POST /account/proof/passkey as the page's script makes it; `override` replaces or (undefined) drops a header. */
  const askOptions = (who: Session, session: string, action: Action, override: Record<string, string | undefined> = {}) =>
    accountJson(service, who, 'proof/passkey', { session, action }, override);
  const optionsFor = async (who: Session, session: string, action: Action) => {
    const answer = await askOptions(who, session, action);
    assert.equal(answer.status, 200, await answer.clone().text());
    return ((await answer.json()) as { options: { challenge: string; rpId: string } }).options;
  };
  /** The assertion of `credential` for a step's options, as the page's script puts it in the form. */
  const sign = (options: unknown, credential: SoftCredential, extra: { uv?: boolean } = {}) =>
    JSON.stringify(getAssertion(options, credential, { origin: service.url, ...extra }));
  const recoveryCodeCount = async (userId: string) => (await service.ctx.users.show(userId)).recoveryCodes?.remaining;

  it('regenerates recovery codes and exports with the passkey; the step page offers the passkey (and a recovery code only where one stands in)', async () => {
    const { user, session } = await signedIn();
    const codes = await accountProof(service, session, 'recovery-codes');
    assert.equal(codes.status, 200);
    assert.match(codes.html, /id="passkey-proof" hidden/);
    assert.match(codes.html, /name="assertion"/);
    assert.doesNotMatch(codes.html, /name="code"/, 'no recovery code for new recovery codes');
    const regenerated = await accountAction(service, session, 'recovery-codes', {
      session: codes.sessionId,
      assertion: sign(await optionsFor(session, codes.sessionId, 'recovery-codes'), user.credential),
    });
    assert.equal(regenerated.status, 200);
    const shown = [...(await regenerated.text()).matchAll(/<li><code>([^<]+)<\/code><\/li>/g)].map((m) => m[1]);
    assert.equal(shown.length, await recoveryCodeCount(user.userId));

    const proof = await accountProof(service, session, 'export');
    assert.match(proof.html, /name="code"/, 'a recovery code still stands in for export');
    const exported = await accountAction(service, session, 'export', {
      session: proof.sessionId,
      assertion: sign(await optionsFor(session, proof.sessionId, 'export'), user.credential),
    });
    assert.equal(exported.status, 200);
    assert.equal(((await exported.json()) as { account: { email: string } }).account.email, user.email);
  });

  it('changes the factor with the passkey proving the current step, then the new method’s code', async () => {
    const { user, session } = await signedIn();
    clock.tick();
    const started = await accountAction(service, session, 'mfa/change', { method: 'email' });
    const html = await started.text();
    assert.equal(started.status, 200);
    assert.match(html, /id="passkey-proof" hidden[^>]*data-action="change"/);
    const sessionId = stepSession(html);
    const seen = await mailedCodes(service, user.email);
    const current = await accountAction(service, session, 'mfa/verify', {
      session: sessionId,
      assertion: sign(await optionsFor(session, sessionId, 'change'), user.credential),
      step: 'current',
      method: 'passkey',
    });
    assert.equal(current.status, 200);
    assert.match(await current.text(), /name="step" value="new"/);
    const code = await nextMailCode(service, user.email, seen);
    const done = await accountAction(service, session, 'mfa/verify', { session: sessionId, code, step: 'new', method: 'email' });
    assert.equal(done.status, 200);
    assert.equal((await service.ctx.mfa.methodOf(user.userId))?.method, 'email');
  });

  it('a replayed assertion is refused: on its spent session, and on a fresh session of the same action', async () => {
    const { user, session } = await signedIn();
    const first = await accountProof(service, session, 'export');
    const assertion = sign(await optionsFor(session, first.sessionId, 'export'), user.credential);
    assert.equal((await accountAction(service, session, 'export', { session: first.sessionId, assertion })).status, 200);
    const again = await accountAction(service, session, 'export', { session: first.sessionId, assertion });
    assert.equal(again.status, 409, 'the proof is spent');

    const second = await accountProof(service, session, 'export');
    await optionsFor(session, second.sessionId, 'export'); // armed: only the challenge can refuse it
    const moved = await accountAction(service, session, 'export', { session: second.sessionId, assertion });
    assert.equal(moved.status, 400);
    assert.match(await moved.text(), /This step has ended/);
    const fresh = sign(await optionsFor(session, second.sessionId, 'export'), user.credential);
    assert.equal((await accountAction(service, session, 'export', { session: second.sessionId, assertion: fresh })).status, 200);
  });

  it('a malformed assertion, or a code beside one, is refused at the edge: nothing spent, nothing counted', async () => {
    const { user, session } = await signedIn();
    const proof = await accountProof(service, session, 'export');
    const assertion = sign(await optionsFor(session, proof.sessionId, 'export'), user.credential);
    for (const fields of [
      { assertion: '{"id":"x"}' },
      { assertion: 'not json' },
      { assertion: JSON.stringify({ ...JSON.parse(assertion), extra: 1 }) },
      { assertion, code: '123456' },
      { code: '' },
    ]) {
      const answer = await accountAction(service, session, 'export', { session: proof.sessionId, ...fields });
      assert.equal(answer.status, 400, JSON.stringify(fields).slice(0, 60));
      assert.doesNotMatch(await answer.text(), /more tr(y|ies)/, 'no guess counted');
    }
    assert.equal((await accountAction(service, session, 'export', { session: proof.sessionId, assertion })).status, 200);
  });

  it('an export’s proof does not delete: its options, its assertion and its session are refused for a deletion', async () => {
    const { user, session } = await signedIn();
    const exportProof = await accountProof(service, session, 'export');
    assert.equal((await askOptions(session, exportProof.sessionId, 'delete')).status, 400, 'no options for another action');
    const assertion = sign(await optionsFor(session, exportProof.sessionId, 'export'), user.credential);
    const crossed = await accountAction(service, session, 'delete', { session: exportProof.sessionId, assertion, confirm: user.email });
    assert.equal(crossed.status, 400);
    const deleteProof = await accountProof(service, session, 'delete', { confirm: user.email });
    await optionsFor(session, deleteProof.sessionId, 'delete');
    const carried = await accountAction(service, session, 'delete', { session: deleteProof.sessionId, assertion, confirm: user.email });
    assert.equal(carried.status, 400);
    assert.equal(await exists(user.email), true);
    // Neither refusal spent the export's challenge or a guess: the export still goes through.
    assert.equal((await accountAction(service, session, 'export', { session: exportProof.sessionId, assertion })).status, 200);
  });

  it('another user: their session, their options and their passkey prove nothing for this user', async () => {
    const victim = await signedIn();
    const attacker = await signedIn();
    const proof = await accountProof(service, victim.session, 'delete', { confirm: victim.user.email });
    // The attacker's account session names the victim's proof: no options (its tag and its user are the victim's).
    assert.equal((await askOptions(attacker.session, proof.sessionId, 'delete')).status, 400);
    const options = await optionsFor(victim.session, proof.sessionId, 'delete');
    // The attacker's own passkey signs the victim's challenge: refused and counted.
    const foreign = await accountAction(service, victim.session, 'delete', {
      session: proof.sessionId,
      assertion: sign(options, attacker.user.credential),
      confirm: victim.user.email,
    });
    assert.equal(foreign.status, 400);
    assert.match(await foreign.text(), new RegExp(`This passkey was not accepted. ${MFA_MAX_ATTEMPTS - 1} more tries`));
    // The victim's own assertion posted through the attacker's session: another user's step.
    const stolen = sign(await optionsFor(victim.session, proof.sessionId, 'delete'), victim.user.credential);
    const viaAttacker = await accountAction(service, attacker.session, 'delete', {
      session: proof.sessionId,
      assertion: stolen,
      confirm: attacker.user.email,
    });
    assert.equal(viaAttacker.status, 400);
    assert.equal(await exists(victim.user.email), true);
    assert.equal(await exists(attacker.user.email), true);
  });

  it(`refused passkeys are counted before checking: ${MFA_MAX_ATTEMPTS} end the step, and the account locks after ${ACCOUNT_MAX_FAILURES}`, async () => {
    const { user, session } = await signedIn();
    const proof = await accountProof(service, session, 'export');
    for (let i = 1; i <= MFA_MAX_ATTEMPTS; i++) {
      const options = await optionsFor(session, proof.sessionId, 'export');
      const refused = await accountAction(service, session, 'export', {
        session: proof.sessionId,
        assertion: sign(options, user.credential, { uv: false }),
      });
      assert.equal(refused.status, 400, `attempt ${i}`);
    }
    // The right passkey now meets a spent step: the attempts were counted before any check.
    const lateOptions = await optionsFor(session, proof.sessionId, 'export');
    const late = await accountAction(service, session, 'export', {
      session: proof.sessionId,
      assertion: sign(lateOptions, user.credential),
    });
    assert.equal(late.status, 400);
    assert.match(await late.text(), /This passkey was not accepted. Start again./);

    // The account lock-out the codes share: ACCOUNT_MAX_FAILURES refused proofs, then even the right passkey is refused (423).
    for (let failures = MFA_MAX_ATTEMPTS; failures < ACCOUNT_MAX_FAILURES; ) {
      const next = await accountProof(service, session, 'export');
      for (let i = 0; i < MFA_MAX_ATTEMPTS && failures < ACCOUNT_MAX_FAILURES; i++, failures++) {
        const options = await optionsFor(session, next.sessionId, 'export');
        const answer = await accountAction(service, session, 'export', {
          session: next.sessionId,
          assertion: sign(options, user.credential, { uv: false }),
        });
        assert.equal(answer.status, 400);
      }
    }
    const locked = await accountProof(service, session, 'export');
    const options = await optionsFor(session, locked.sessionId, 'export');
    const right = await accountAction(service, session, 'export', { session: locked.sessionId, assertion: sign(options, user.credential) });
    assert.equal(right.status, 423);
  });

  it('CSRF and a stale sign-in: no options without the session’s token, with another session’s, from another site, or for an old sign-in', async () => {
    const { user, session } = await signedIn();
    const other = await signedIn();
    const proof = await accountProof(service, session, 'export');
    for (const attack of [
      { 'x-account-csrf': undefined },
      { 'x-account-csrf': other.session.csrfToken },
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const answer = await askOptions(session, proof.sessionId, 'export', attack);
      assert.equal(answer.status, 403, JSON.stringify(attack));
      assert.doesNotMatch(await answer.text(), /challenge/);
    }
    const stale = await accountSession(service, user, clock.now, ACCOUNT_RECENT_SIGN_IN_SECONDS + 5);
    const old = await askOptions(stale, proof.sessionId, 'export');
    assert.equal(old.status, 403);
    assert.match(await old.text(), /sign in again/i);
    // None of them armed or spent the step: the passkey still proves it.
    const exported = await accountAction(service, session, 'export', {
      session: proof.sessionId,
      assertion: sign(await optionsFor(session, proof.sessionId, 'export'), user.credential),
    });
    assert.equal(exported.status, 200);
  });
});
