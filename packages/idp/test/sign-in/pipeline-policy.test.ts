/**
 * The MFA policy every first factor goes through (sign-in/pipeline.ts `nextStep`), rule by rule:
 * a unit test of the one function the device key, the new-device email code and the passkey
 * share. Each path's end-to-end behaviour is in its own tests (identify/, factors/*).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClientRecord } from '../../src/clients/store.js';
import type { MfaMethodRecord } from '../../src/sign-in/mfa-store.js';
import { nextStep, type PolicyFacts } from '../../src/sign-in/pipeline.js';

const client = (mfaPolicy: 'optional' | 'required') => ({ id: 'cl_1', name: 'App', mfaPolicy }) as ClientRecord;
const totp = { method: 'totp' } as MfaMethodRecord;
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
});
