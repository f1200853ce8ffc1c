import type { MfaMethod } from 'service-protocol';
import type { OtpChannel, OtpService } from '../otp/service.js';
import type { CodeFactor, FactorChallenge, FactorName } from '../sign-in/factor.js';

export interface SentCodeDeps {
  /** The one code sender and guess rule of the service (otp/): every code of every flow goes through it. */
  otp: OtpService;
  now: () => number;
}

/**
 * A code drawn and sent through otp/ (by email or SMS), kept on the MFA session only as an HMAC
 * bound to it, live until it expires; the factors email-code and sms-code are this, each with
 * its channel.
 */
export function sentCodeFactor(
  deps: SentCodeDeps,
  factor: {
    name: FactorName;
    method: Extract<MfaMethod, 'email' | 'sms'>;
    first?: readonly string[];
    prompt: string;
    /** Where the code goes. */
    channel: (target: FactorChallenge) => Promise<OtpChannel>;
    /** The phone the method keeps (SMS), from the one asked for. */
    keeps: (phone: string | null) => string | null;
  },
): CodeFactor {
  const { otp, now } = deps;
  return {
    name: factor.name,
    method: factor.method,
    ...(factor.first ? { first: factor.first } : {}),
    second: [factor.method],
    prompt: factor.prompt,
    proof: 'code',
    prepare: ({ phone }) => ({ phone: factor.keeps(phone), secretSealed: null }),
    async challenge(target) {
      await otp.send({
        challengeId: target.sessionId,
        purpose: target.purpose,
        channel: await factor.channel(target),
        ip: target.ip,
        clientId: target.clientId,
        clientName: target.clientName,
        arm: (otpHash, expiresAt) => target.arm(otpHash, expiresAt),
        disarm: target.disarm,
      });
    },
    live: (session) => session.otp_hash !== null && Number(session.otp_expires_at) > now(),
    async verify(session, code) {
      const live = Number(session.otp_expires_at) > now();
      return live && otp.matchesStored(session.id, session.otp_hash, code) ? { kind: 'match', amr: [factor.method] } : { kind: 'wrong' };
    },
  };
}
