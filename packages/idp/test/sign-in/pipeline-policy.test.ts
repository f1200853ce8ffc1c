/**
 * The MFA policy every first factor goes through (sign-in/pipeline.ts `nextStep`), rule by rule:
 * a unit test of the one function the device key, the new-device email code and the passkey
 * share. Each path's end-to-end behaviour is in its own tests (sign-in-flow.test.ts,
 * factors/*).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONSOLE_CLIENT_ID } from '../../src/clients/service.js';
import type { ClientRecord } from '../../src/clients/store.js';
import type { MfaMethodRecord } from '../../src/sign-in/mfa-store.js';
import { nextStep, type PolicyFacts } from '../../src/sign-in/pipeline.js';

const client = (mfaPolicy: 'optional' | 'required') => ({ id: 'cl_1', name: 'App', mfaPolicy }) as ClientRecord;
const totp = { method: 'totp' } as MfaMethodRecord;
const email = { method: 'email' } as MfaMethodRecord;
const sms = { method: 'sms' } as MfaMethodRecord;
/** The hosted client acting for the operator console (oidc/service.ts hostedClientFor). */
const consoleClient = { ...client('required'), app: { id: CONSOLE_CLIENT_ID, name: 'Operator console' } } as ClientRecord;
const facts = (over: Partial<PolicyFacts>): PolicyFacts => ({ client: client('optional'), amr: ['swk'], method: undefined, ...over });

describe('the sign-in pipeline policy (nextStep)', () => {
  it('lets a user without MFA finish at an application that does not require it', () => {
    assert.deepEqual(nextStep(facts({})), { kind: 'finish', amr: ['swk'] });
  });

  it('sends a user with a method to the MFA step, whatever the application policy', () => {
    for (const policy of ['optional', 'required'] as const) {
      assert.deepEqual(nextStep(facts({ client: client(policy), method: totp })), { kind: 'mfa', method: totp });
    }
  });

  it('skips the step on a device remembered for the method, adding nothing to amr', () => {
    assert.deepEqual(nextStep(facts({ method: totp, remembered: true })), { kind: 'finish', amr: ['swk'] });
  });

  it('refuses a code to a user without a method at an application that requires MFA (no downgrade)', () => {
    assert.deepEqual(nextStep(facts({ client: client('required') })), { kind: 'enrollment-required' });
    assert.deepEqual(nextStep(facts({ client: client('required'), remembered: true })), { kind: 'enrollment-required' });
  });

  it('enrolls a user who chose a method, and a chosen method never bypasses the one in force', () => {
    const enroll = { method: 'email' as const, email: 'a@example.com', ip: '127.0.0.1' };
    assert.deepEqual(nextStep(facts({ client: client('required'), enroll })), { kind: 'enroll', enroll });
    assert.deepEqual(nextStep(facts({ method: totp, enroll })), { kind: 'mfa', method: totp });
  });

  it('finishes with mfa when the first factor counts as two, and only then', () => {
    assert.deepEqual(nextStep(facts({ amr: ['hwk', 'user'], satisfiesMfa: true, client: client('required') })), {
      kind: 'finish',
      amr: ['hwk', 'user', 'mfa'],
    });
    assert.deepEqual(nextStep(facts({ amr: ['hwk', 'user'], satisfiesMfa: false, method: totp })), { kind: 'mfa', method: totp });
  });

  it('does not change the amr it was given', () => {
    const amr = ['otp'];
    nextStep(facts({ amr, satisfiesMfa: true }));
    assert.deepEqual(amr, ['otp']);
  });
  it('one mailbox is one factor: email after the mailed new-device code is no second factor (finish without mfa; a strict app refuses)', () => {
    assert.deepEqual(nextStep(facts({ amr: ['otp'], method: email })), { kind: 'finish', amr: ['otp'] });
    assert.deepEqual(nextStep(facts({ amr: ['otp'], method: email, client: client('required') })), { kind: 'mfa-unavailable' });
    // After a factor that is not the mailbox (a key registered before, a passkey, an upstream identity) it is one.
    for (const amr of [['swk'], ['hwk', 'user'], ['fed'], ['fed', 'otp']])
      assert.deepEqual(nextStep(facts({ amr, method: email, client: client('required') })), { kind: 'mfa', method: email });
    // Other methods are second factors after the mailbox.
    assert.deepEqual(nextStep(facts({ amr: ['otp'], method: sms, client: client('required') })), { kind: 'mfa', method: sms });
  });

  it('one mailbox is one factor: enrolling email at a new-device registration is no way into a strict app', () => {
    const enroll = { method: 'email' as const, email: 'a@example.com', ip: '127.0.0.1' };
    assert.deepEqual(nextStep(facts({ amr: ['otp'], enroll, client: client('required') })), { kind: 'mfa-unavailable' });
    assert.deepEqual(nextStep(facts({ amr: ['otp'], enroll })), { kind: 'enroll', enroll });
  });

  it('the operator console takes only an app or a passkey: email is replaced by one, SMS refused, none enrolled first', () => {
    const enrollTotp = { method: 'totp' as const, email: 'a@example.com', ip: '127.0.0.1' };
    for (const amr of [['otp'], ['swk']]) {
      assert.deepEqual(nextStep(facts({ amr, method: email, client: consoleClient })), { kind: 'enrollment-required' });
      assert.deepEqual(nextStep(facts({ amr, method: email, enroll: enrollTotp, client: consoleClient })), {
        kind: 'enroll',
        enroll: enrollTotp,
      });
      assert.deepEqual(nextStep(facts({ amr, method: sms, client: consoleClient })), { kind: 'mfa-unavailable' });
      assert.deepEqual(nextStep(facts({ amr, method: totp, client: consoleClient })), { kind: 'mfa', method: totp });
      assert.deepEqual(nextStep(facts({ amr, client: consoleClient })), { kind: 'enrollment-required' });
    }
    assert.deepEqual(nextStep(facts({ amr: ['otp'], enroll: { ...enrollTotp, method: 'email' }, client: consoleClient })), {
      kind: 'mfa-unavailable',
    });
  });
});
