/**
 * A proof opened for one account action carried to another: the proof session opened for an
 * export (its code step, its code) is refused for a deletion or new recovery codes, and a tag
 * forged, swapped or stripped is refused too, before any guess is counted. Nothing changes; the
 * proof still serves the action it was opened for.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountAction, accountSession, accountSuite, accountUser, mailedProof } from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

describe('a proof for another action', () => {
  let service: TestService;
  const { clock, exists } = accountSuite((started) => {
    service = started;
  });

  it('a proof opened for export does not delete the account; forged or stripped tags are refused; export still works', async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const { open, code } = await mailedProof(service, session, user.email, 'export');
    assert.match(open.sessionId, /^mfa_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/, 'the form carries the session and its action tag');
    const [raw = '', tag = ''] = open.sessionId.split('.');

    const crossed = await accountAction(service, session, 'delete', { session: open.sessionId, code, confirm: user.email });
    assert.equal(crossed.status, 400);
    assert.match(await crossed.text(), /This step has ended/);
    assert.equal(await exists(user.email), true, 'the export proof deleted nothing');

    for (const forged of [raw, `${raw}.${tag.slice(1)}A`, `${raw}.`, `${raw}x.${tag}`]) {
      const answer = await accountAction(service, session, 'export', { session: forged, code });
      assert.notEqual(answer.status, 200, forged);
      assert.doesNotMatch(await answer.text(), new RegExp(user.email.replace(/[.+]/g, '\\$&')), forged);
    }

    const right = await accountAction(service, session, 'export', { session: open.sessionId, code });
    assert.equal(right.status, 200, 'the refusals spent no guess and left the proof for its own action');
  });

  it("a proof opened for export does not mint recovery codes, and another action's proof for delete does not export", async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const { open, code } = await mailedProof(service, session, user.email, 'delete', { confirm: user.email });
    const exported = await accountAction(service, session, 'export', { session: open.sessionId, code });
    assert.equal(exported.status, 400);
    assert.ok(!(await exported.text()).includes(`"${user.email}"`), 'no export');
    const codes = await accountAction(service, session, 'recovery-codes', { session: open.sessionId, code });
    assert.equal(codes.status, 400);
    const deleted = await accountAction(service, session, 'delete', { session: open.sessionId, code, confirm: user.email });
    assert.equal(deleted.status, 200);
    assert.equal(await exists(user.email), false);
  });
});
