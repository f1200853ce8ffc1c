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

/** The class an `amr` list reaches. */
export function acrOf(amr: readonly string[]): Acr {
  if (amr.includes('hwk')) return ACR.phishingResistant;
  if (amr.includes('mfa')) return ACR.mfa;
  if (amr.includes('swk')) return ACR.device;
  return ACR.otp;
}
