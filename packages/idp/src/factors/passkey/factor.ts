import type { CeremonyFactor } from '../../sign-in/factor.js';

/**
 * A passkey (WebAuthn) as the MFA method: proven by its own ceremony routes (mfa-routes.ts), never
 * by a typed code; nothing is sent, and its request or creation options arm the session. amr:
 * hwk for a device-bound key or swk for a synced one, and user (user verification is required).
 */
export const passkeyFactor: CeremonyFactor = {
  name: 'passkey',
  method: 'passkey',
  first: ['hwk', 'swk', 'user'],
  second: ['hwk', 'swk', 'user'],
  // Nothing is sent: the passkey step has its own routes (service-web/passkeys verifyMfa).
  prompt: 'Nothing was sent: confirm with your passkey (service-web/passkeys verifyMfa), or enter a recovery code.',
  proof: 'ceremony',
  refusal: {
    step: 'This step needs your passkey (service-web/passkeys verifyMfa), or a recovery code.',
    change: 'The current method is a passkey: confirm with your passkey on the account page, or with a recovery code.',
  },
  prepare: () => ({ phone: null, secretSealed: null }),
  // Nothing to send: the passkey's options (enrollment or step) arm the session.
  challenge: async () => {},
};
