/**
 * A factor defined only in the test tree (test/sign-in/test-only-factor.test.ts): a code shown by
 * a companion the factor serves itself (its route), as a hardware token's display would. It is
 * what a contributor writes to add a factor (docs/architecture.md, "How to add a factor"): one module, given to
 * the composition (ContextOptions.extraFactors), and nothing else of the product changed.
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { MfaMethod } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../../src/errors.js';
import type { FactorModule } from '../../src/factors/module.js';

/** The code the companion shows; a test fixture's, so one fixed value. */
export const FIXTURE_CODE = '424242';
/** The companion's route, under the browser API's prefix. */
export const FIXTURE_PATH = '/v1/fixture-code/display';
export const FIXTURE_LABELS = { en: 'A fixture code', fr: 'Un code de test', de: 'Ein Testcode', es: 'Un código de prueba' } as const;

const same = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

const displayRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/fixture-code/display', { schema: { response: { 200: Type.Object({ code: Type.String() }) } } }, async () => ({
    code: FIXTURE_CODE,
  }));
};

export const fixtureCodeFactor: FactorModule = {
  name: 'fixture-code',
  second: ['fixture_code'],
  method: 'fixture-code',
  mfa: () => ({
    name: 'fixture-code',
    // The wire's MfaMethod is the built-ins' union; a plug-in's method is a string the service's schemas then enumerate.
    method: 'fixture-code' as MfaMethod,
    second: ['fixture_code'],
    prompt: 'Enter the code the fixture displays.',
    proof: 'code',
    prepare: () => ({ phone: null, secretSealed: null }),
    async challenge(target) {
      if (!(await target.arm(null, null))) throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended.');
    },
    live: () => true,
    verify: async (_session, code) => (same(code, FIXTURE_CODE) ? { kind: 'match', amr: ['fixture_code'] } : { kind: 'wrong' }),
  }),
  metrics: { second: 'fixture_code' },
  tables: [],
  enrollment: { label: 'hosted.method.fixture-code', userEnrollable: true, onAccountPage: true },
  messages: {
    en: { 'hosted.method.fixture-code': FIXTURE_LABELS.en },
    fr: { 'hosted.method.fixture-code': FIXTURE_LABELS.fr },
    de: { 'hosted.method.fixture-code': FIXTURE_LABELS.de },
    es: { 'hosted.method.fixture-code': FIXTURE_LABELS.es },
  },
  routes: { browser: displayRoutes },
};
