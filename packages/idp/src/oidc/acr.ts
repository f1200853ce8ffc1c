/**
 * Authentication Context Class References (OIDC Core 2, `acr`): one value per ID token naming
 * the strongest class the sign-in's `amr` reaches. Absolute URIs, as OIDC Core 2 asks of values
 * not registered with IANA (RFC 6711). docs/protocol.md (section 7) lists them.
 */
export const ACR = {
  /** A phishing-resistant authenticator: a hardware-bound key (RFC 8176 `hwk`, as a passkey reports). */
  phishingResistant: 'urn:service:acr:phishing-resistant',
  /** A second factor was passed (`mfa` in `amr`). */
  mfa: 'urn:service:acr:mfa',
  /** A remembered device proved possession of its key (`swk`), no second factor. */
  device: 'urn:service:acr:device',
  /** An emailed one-time code alone (`otp`): a new browser's first sign-in. */
  otp: 'urn:service:acr:otp',
} as const;

/** Strongest first; the discovery document's `acr_values_supported`. */
export const ACR_VALUES = [ACR.phishingResistant, ACR.mfa, ACR.device, ACR.otp] as const;

export type Acr = (typeof ACR_VALUES)[number];

/** The class each amr value reaches by itself, as the factors declare it (factors/index.ts acrClassesOf). */
export type AcrClasses = Readonly<Record<string, Exclude<keyof typeof ACR, 'mfa'>>>;

/** The strongest class an `amr` list reaches: `mfa` reaches ACR.mfa, a value no factor classes none (then `otp`, the weakest). */
export function acrOf(amr: readonly string[], classes: AcrClasses): Acr {
  const reached = new Set<Acr>(
    amr.flatMap((value) => (value === 'mfa' ? [ACR.mfa] : Object.hasOwn(classes, value) ? [ACR[classes[value] as keyof typeof ACR]] : [])),
  );
  return ACR_VALUES.find((acr) => reached.has(acr)) ?? ACR.otp;
}
