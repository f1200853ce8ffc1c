import type { SecretHasher } from '../../crypto/secrets.js';
import { createSignedTokens } from '../../crypto/signed-token.js';

/** What a passkey challenge is bound to: the ceremony, the application, the page's origin and relying party id, and (registration) the user. */
export interface CeremonyBinding {
  /** `mfa-*`: a passkey as the second factor, bound to one MFA session (`session`). */
  ceremony: 'registration' | 'authentication' | 'mfa-registration' | 'mfa-authentication';
  clientId: string;
  origin: string;
  rpId: string;
  /** Registration only: the signed-in user the passkey will belong to. */
  userId?: string;
  /** `mfa-*` only: the keyed hash of the MFA session's id, so that a challenge serves that session alone. */
  session?: string;
  /**
   * The hosted pages only: the pending authorization request the sign-in serves (a keyed hash of
   * its id), so an assertion made for one request is spent on no other.
   */
  context?: string;
}

/**
 * Passkey challenges are stateless signed tokens (crypto/signed-token.ts), like device
 * challenges (factors/device-key/challenge.ts): the challenge the authenticator signs is the UTF-8 text
 * `ceremony.user.expiry.nonce.mac` (the ceremony as one letter, the user empty but for a
 * registration), where the MAC binds the random nonce to everything in CeremonyBinding and to
 * the expiry. Issuing one writes nothing, so the anonymous options endpoint cannot fill the
 * database; a challenge is recorded only when a ceremony spends it (spent-tokens/, purpose
 * `passkey-challenge`), which refuses its replay. WebAuthn L3 13.4.3 asks for at least 16
 * random bytes: the nonce has 16.
 */
export function createCeremonyChallenges(hash: SecretHasher) {
  const tokens = createSignedTokens(hash, { purpose: 'passkey-challenge', visibleFields: 2, maxLength: 256 });
  // The MFA session and the hosted request are bound only when there is one (each marked, so one
  // cannot stand for the other).
  const bound = (b: Omit<CeremonyBinding, 'userId'>) => [
    b.ceremony,
    b.clientId,
    b.origin,
    b.rpId,
    ...(b.session ? [`session:${b.session}`] : []),
    ...(b.context ? [`context:${b.context}`] : []),
  ];
  const TAGS = { registration: 'r', authentication: 'a', 'mfa-registration': 'e', 'mfa-authentication': 'm' } as const;
  const tag = (ceremony: CeremonyBinding['ceremony']) => TAGS[ceremony];

  return {
    /** The challenge's text (the authenticator signs its UTF-8 bytes). */
    issue(binding: CeremonyBinding, expiresAt: number): string {
      return tokens.issue({ visible: [tag(binding.ceremony), binding.userId ?? ''], bound: bound(binding) }, expiresAt);
    },

    /**
     * The challenge's expiry and user when it was issued for this ceremony, application, origin
     * and relying party id and is still live; undefined otherwise.
     */
    check(
      challenge: string,
      binding: Omit<CeremonyBinding, 'userId'>,
      now: number,
    ): { expiresAt: number; userId: string | undefined } | undefined {
      const checked = tokens.check(challenge, ([ceremony]) => (ceremony === tag(binding.ceremony) ? bound(binding) : undefined), now);
      if (!checked.ok) return undefined;
      return { expiresAt: checked.expiresAt, userId: checked.visible[1] || undefined };
    },
  };
}

/** The challenge text inside a ceremony's clientDataJSON (base64url JSON), or undefined when unreadable. */
export function challengeOfClientData(clientDataJson: unknown): string | undefined {
  if (typeof clientDataJson !== 'string') return undefined;
  try {
    const data: unknown = JSON.parse(Buffer.from(clientDataJson, 'base64url').toString('utf8'));
    const challenge = (data as { challenge?: unknown } | null)?.challenge;
    return typeof challenge === 'string' ? Buffer.from(challenge, 'base64url').toString('utf8') : undefined;
  } catch {
    return undefined;
  }
}
