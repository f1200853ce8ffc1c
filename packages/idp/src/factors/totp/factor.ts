import type { Sealer } from '../../crypto/seal.js';
import { ServiceError } from '../../errors.js';
import type { CodeFactor } from '../../sign-in/factor.js';
import type { MfaStore } from '../../sign-in/mfa-store.js';
import { base32Encode, generateTotpSecret, matchTotp, otpauthUri } from './totp.js';

export interface TotpFactorDeps {
  /** Seals TOTP secrets at rest. */
  sealer: Sealer;
  /** The user's method (its sealed secret) and the replay barrier kept with it. */
  methods: Pick<MfaStore, 'findMethod' | 'advanceTotpStep'>;
  now: () => number;
  /** Shown in authenticator apps as the account's issuer. */
  issuerName: string;
}

/**
 * An authenticator app's code (RFC 6238). Nothing is sent: the step only arms the session. A
 * new method is checked against the secret its session holds (sealed), the method in force
 * against the user's, and never twice for one time step: the step a code matched moves the
 * replay barrier forward atomically, so of two parallel right codes one passes and the other
 * is `used` (its guess given back).
 */
export function createTotpFactor(deps: TotpFactorDeps): CodeFactor {
  const { sealer, methods, now } = deps;
  const open = (sealed: string) => Buffer.from(sealer.open(sealed), 'base64url');
  return {
    name: 'totp',
    method: 'totp',
    second: ['totp'],
    prompt: 'Enter the current code from your authenticator app.',
    proof: 'code',
    prepare({ email }) {
      const secret = generateTotpSecret();
      return {
        phone: null,
        secretSealed: sealer.seal(secret.toString('base64url')),
        shown: { secret: base32Encode(secret), otpauthUri: otpauthUri({ secret, account: email, issuer: deps.issuerName }) },
      };
    },
    async challenge(target) {
      if (!(await target.arm(null, null))) throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended.');
    },
    live: () => true,
    async verify(session, code) {
      // A new method (enrollment, or a change's second step) is checked against its own secret;
      // the factor in force (login, or a change's first step) against the user's, never twice a step.
      if (session.purpose === 'enroll' || session.purpose === 'change') {
        const step = matchTotp(open(session.totp_secret_sealed as string), code, now());
        return step === undefined ? { kind: 'wrong' } : { kind: 'match', amr: ['totp'], replayMark: step };
      }
      const method = await methods.findMethod(session.user_id);
      if (!method?.totpSecretSealed) return { kind: 'wrong' };
      const secret = open(method.totpSecretSealed);
      const step = matchTotp(secret, code, now(), { lastStep: method.lastTotpStep ?? undefined });
      // Two parallel right codes for the same step: only one advances the step; the other was used.
      if (step !== undefined)
        return (await methods.advanceTotpStep(session.user_id, method.version, step))
          ? { kind: 'match', amr: ['totp'], replayMark: step }
          : { kind: 'used' };
      return matchTotp(secret, code, now()) === undefined ? { kind: 'wrong' } : { kind: 'used' };
    },
  };
}
