/**
 * A mistyped code at the account center (export, delete, new recovery codes, a factor change)
 * shows the same code step again: the same MFA session in the form, the error announced with
 * role=alert, and the right code retyped there goes through (no new send, so no send spacing).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  accountAction,
  accountSession,
  accountSuite,
  accountUser,
  mailedCodes,
  mailedProof,
  nextMailCode,
  stepSession,
} from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';

const other = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, '0');
const alert = (html: string) => html.match(/<p role="alert">([^<]*)<\/p>/)?.[1];

describe('account center: a mistyped code re-shows the same step', () => {
  let service: TestService;
  const { clock, exists } = accountSuite((started) => {
    service = started;
  });

  it('export: the wrong code shows the code step again with the same session; the right one retyped there exports', async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const { open, code } = await mailedProof(service, session, user.email, 'export');
    const wrong = await accountAction(service, session, 'export', { session: open.sessionId, code: other(code) });
    assert.equal(wrong.status, 400);
    const html = await wrong.text();
    assert.equal(alert(html), 'That code is not right. 4 more tries.');
    assert.equal(stepSession(html), open.sessionId, 'the same MFA session, not a new one');
    assert.match(html, /action="\/account\/export"/);
    assert.match(html, /name="code"/);
    const sent = (await mailedCodes(service, user.email)).length;
    const right = await accountAction(service, session, 'export', { session: stepSession(html), code });
    assert.equal(right.status, 200);
    assert.ok((await right.text()).includes(`"${user.email}"`), 'the export of this user');
    assert.equal((await mailedCodes(service, user.email)).length, sent, 'nothing was sent again');
  });

  it('delete: the re-shown step keeps the typed address; the right code retyped deletes', async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const { open, code } = await mailedProof(service, session, user.email, 'delete', { confirm: user.email });
    const wrong = await accountAction(service, session, 'delete', { session: open.sessionId, code: other(code), confirm: user.email });
    assert.equal(wrong.status, 400);
    const html = await wrong.text();
    assert.match(alert(html) ?? '', /not right/);
    assert.equal(stepSession(html), open.sessionId);
    assert.ok(html.includes(`name="confirm" value="${user.email}"`));
    assert.equal(await exists(user.email), true);
    const right = await accountAction(service, session, 'delete', { session: stepSession(html), code, confirm: user.email });
    assert.equal(right.status, 200);
    assert.equal(await exists(user.email), false);
  });

  it('a factor change: the new method’s wrong code shows the same step again; the right code retyped enrolls it', async () => {
    const user = await accountUser(service, clock);
    const session = await accountSession(service, user, clock.now);
    const seen = await mailedCodes(service, user.email);
    const started = await accountAction(service, session, 'mfa/change', { method: 'email' });
    assert.equal(started.status, 200);
    const first = await started.text();
    const code = await nextMailCode(service, user.email, seen);
    const wrong = await accountAction(service, session, 'mfa/verify', {
      session: stepSession(first),
      code: other(code),
      step: 'new',
      method: 'email',
    });
    assert.equal(wrong.status, 400);
    const html = await wrong.text();
    assert.match(alert(html) ?? '', /not right.*4 more tries/);
    assert.equal(stepSession(html), stepSession(first));
    assert.match(html, /action="\/account\/mfa\/verify"/);
    const fields = Object.fromEntries([...html.matchAll(/name="(step|method)" value="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    assert.deepEqual(fields, { step: 'new', method: 'email' });
    const done = await accountAction(service, session, 'mfa/verify', { session: stepSession(html), code, ...fields });
    assert.equal(done.status, 200);
    assert.equal((await service.ctx.mfa.methodOf(user.userId))?.method, 'email');
  });
});
