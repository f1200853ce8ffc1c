import type { ServiceConfig } from '../config.js';
import type { MfaFactor } from '../sign-in/factor.js';
import { deviceKeyModule } from './device-key/module.js';
import { emailCodeModule } from './email-code/module.js';
import type { FactorMessages, FactorModule, MfaFactorDeps } from './module.js';
import { passkeyModule } from './passkey/module.js';
import { recoveryCodeModule } from './recovery-code/module.js';
import { smsCodeModule } from './sms-code/module.js';
import { totpModule } from './totp/module.js';
import { upstreamModule } from './upstream/module.js';

/**
 * THE list of the service's factors, one module per folder (docs/architecture.md, "How to add a factor"). Every
 * other list derives from it: the MFA methods offered (in this order: the first is the hosted
 * enrollment's default), the MFA step's dispatch, the metrics' labels, the labels of the hosted
 * enrollment and the account page, the routes the app mounts. The composition adds its caller's
 * (ContextOptions.extraFactors) after these.
 */
export const FACTORS: readonly FactorModule[] = [
  deviceKeyModule,
  emailCodeModule,
  smsCodeModule,
  totpModule,
  passkeyModule,
  upstreamModule,
  recoveryCodeModule,
];

/** The factors of a service: the registry's, then its caller's; two of one name, or of one MFA method, are refused. */
export function factorList(extra: readonly FactorModule[] = []): readonly FactorModule[] {
  const list = [...FACTORS, ...extra];
  const names = list.map((f) => f.name);
  const methods = mfaMethodsOf(list);
  for (const seen of [names, methods]) {
    const twice = seen.find((value, i) => seen.indexOf(value) !== i);
    if (twice !== undefined) throw new Error(`two factors are registered as ${twice}`);
  }
  // The hosted page names a method by this key (packages/hosted enroll.ts): no other key would be read.
  const misnamed = list.find((f) => f.enrollment && f.enrollment.label !== `hosted.method.${f.method}`);
  if (misnamed) throw new Error(`the factor ${misnamed.name} must be labelled hosted.method.${misnamed.method}`);
  return list;
}

/** The MFA halves the MFA step dispatches to by the session's method (sign-in/mfa-step.ts). */
export const mfaFactorsOf = (factors: readonly FactorModule[], deps: MfaFactorDeps): MfaFactor[] =>
  factors.flatMap((factor) => (factor.mfa ? [factor.mfa(deps)] : []));

/** Every MFA method of the factors (the wire's enumeration), in the registry's order. */
export const mfaMethodsOf = (factors: readonly FactorModule[]): string[] =>
  factors.flatMap((factor) => (factor.method ? [factor.method] : []));

/**
 * The MFA methods a user may choose here, in the registry's order (the first is the hosted
 * enrollment's default): at an enrollment, or (`accountPage`) on the account page's change form.
 */
export function enrollableMethods(factors: readonly FactorModule[], config: ServiceConfig, accountPage = false): string[] {
  return factors.flatMap(({ method, enrollment }) =>
    method && enrollment?.userEnrollable && (enrollment.offered?.(config) ?? true) && (!accountPage || enrollment.onAccountPage)
      ? [method]
      : [],
  );
}

/** The factors' metric labels, per role, with the amr values that tell them apart (metrics/service.ts signInMethods). */
export const metricLabelsOf = (factors: readonly FactorModule[]) =>
  factors.flatMap(({ first, second, metrics }) => [
    ...(first && metrics.first ? [{ role: 'first' as const, label: metrics.first, amr: first }] : []),
    ...(second && metrics.second ? [{ role: 'second' as const, label: metrics.second, amr: second }] : []),
  ]);

/** The acr class of each amr value the factors class (oidc/acr.ts acrOf); two factors classing one value alike, or refused. */
export function acrClassesOf(factors: readonly FactorModule[]): Record<string, 'phishingResistant' | 'device' | 'otp'> {
  const classes: Record<string, 'phishingResistant' | 'device' | 'otp'> = {};
  for (const factor of factors)
    for (const [value, acr] of Object.entries(factor.acr ?? {})) {
      if (classes[value] !== undefined && classes[value] !== acr) throw new Error(`the factor ${factor.name} classes amr ${value} apart`);
      classes[value] = acr;
    }
  return classes;
}

/** The messages the factors bring beside the catalogues, per language (i18n/locales.ts loadLocales). */
export const factorMessagesOf = (factors: readonly FactorModule[]): Record<string, Record<string, string>> => {
  const merged: Record<string, Record<string, string>> = {};
  for (const messages of factors.flatMap((factor): FactorMessages[] => (factor.messages ? [factor.messages] : [])))
    for (const [tag, entries] of Object.entries(messages)) merged[tag] = { ...merged[tag], ...entries };
  return merged;
};
