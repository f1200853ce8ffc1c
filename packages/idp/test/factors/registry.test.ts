/**
 * The factor registry (src/factors/index.ts) is the only list of factors: what it declares holds
 * where it is read. The wire's method type (service-protocol MfaMethod) cannot import the service,
 * so it is held equal here; each module's MFA half is the method it declares; every table a
 * factor owns exists; every enrollable method is labelled in every shipped language.
 */
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MfaMethod } from 'service-protocol';
import { loadConfig } from '../../src/config.js';
import {
  acrClassesOf,
  enrollableMethods,
  FACTORS,
  factorList,
  metricLabelsOf,
  mfaFactorsOf,
  mfaMethodsOf,
} from '../../src/factors/index.js';
import type { MfaFactorDeps } from '../../src/factors/module.js';
import { BUILT_IN_CATALOGUES, loadLocales } from '../../src/i18n/locales.js';
import { migrate } from '../../src/storage/migrations.js';
import { fixtureCodeFactor } from '../support/fixture-factor.js';
import { openTestDatabase } from '../support/helpers.js';

/** Nothing here is called: the MFA halves are made to read what they declare. */
const unused = {} as MfaFactorDeps;

describe('the factor registry', () => {
  it('holds every folder of factors/, each exporting exactly one module, under its folder’s name', async () => {
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'src', 'factors');
    const folders = readdirSync(root, { withFileTypes: true }).filter((entry) => entry.isDirectory());
    for (const { name } of folders) {
      const exported = Object.values(await import(join(root, name, 'module.ts')));
      assert.equal(exported.length, 1, `factors/${name}/module.ts exports one thing`);
      assert.ok(FACTORS.includes(exported[0] as (typeof FACTORS)[number]), `factors/${name}'s module is registered`);
      assert.equal((exported[0] as (typeof FACTORS)[number]).name, name);
    }
    assert.equal(folders.length, FACTORS.length);
  });

  it('lists the MFA methods service-protocol types, in its order', () => {
    assert.deepEqual(mfaMethodsOf(FACTORS), Object.values(MfaMethod));
  });

  it('every factor is one folder’s module, once; every MFA half is the method its module declares', () => {
    assert.deepEqual(
      FACTORS.map((f) => f.name),
      ['device-key', 'email-code', 'sms-code', 'totp', 'passkey', 'upstream', 'recovery-code'],
    );
    for (const factor of FACTORS.filter((f) => f.mfa)) {
      const [half] = mfaFactorsOf([factor], unused);
      assert.equal(half?.name, factor.name);
      assert.equal(half?.method, factor.method);
      assert.deepEqual(half?.second, factor.second, `${factor.name}: the amr its step adds`);
    }
    assert.throws(() => factorList([{ ...fixtureCodeFactor, name: 'totp' }]), /two factors are registered as totp/);
    assert.throws(() => factorList([{ ...fixtureCodeFactor, method: 'sms' }]), /two factors are registered as sms/);
  });

  it('gives every factor’s sign-ins a label of its own, per role (an upstream sign-in is no longer "other")', () => {
    const labels = metricLabelsOf(FACTORS).map(({ role, label }) => `${role}:${label}`);
    assert.deepEqual(labels, [...new Set(labels)]);
    assert.ok(labels.includes('first:upstream'));
  });

  it('classes each amr value once for the ID token’s acr (oidc/acr.ts)', () => {
    assert.deepEqual(acrClassesOf(FACTORS), { swk: 'device', otp: 'otp', hwk: 'phishingResistant', fed: 'otp' });
    assert.throws(() => acrClassesOf([...FACTORS, { ...fixtureCodeFactor, acr: { swk: 'otp' } }]), /classes amr swk apart/);
  });

  it('offers SMS only where a code can reach a phone', () => {
    const config = loadConfig({ data: '/tmp' }, {});
    const outbox = { ...config, production: true, sms: { ...config.sms, transport: 'outbox' as const } };
    assert.deepEqual(enrollableMethods(FACTORS, outbox), ['email', 'totp', 'passkey']);
    assert.deepEqual(enrollableMethods(FACTORS, { ...outbox, production: false }), ['email', 'sms', 'totp', 'passkey']);
    assert.deepEqual(
      enrollableMethods(FACTORS, { ...outbox, production: false }, true),
      ['email', 'sms', 'totp'],
      'a passkey is a device there',
    );
  });

  it('labels every enrollable method in every shipped language', () => {
    const locales = loadLocales();
    for (const factor of FACTORS.filter((f) => f.enrollment))
      for (const tag of Object.keys(BUILT_IN_CATALOGUES)) {
        const label = locales.messages(tag, 'hosted.method.')[factor.enrollment?.label as string];
        assert.ok(label && label !== factor.enrollment?.label, `${factor.name} in ${tag}`);
      }
  });

  it('owns tables that exist', async () => {
    const { db, drop } = await openTestDatabase();
    try {
      await migrate(db);
      const tables = new Set((await db.introspection.getTables()).map((t) => t.name));
      for (const factor of FACTORS) for (const { name } of factor.tables) assert.ok(tables.has(name), `${factor.name}: ${name}`);
    } finally {
      await db.destroy();
      await drop();
    }
  });
});
