import { canonicalEmail, PKCE_CHALLENGE_PATTERN, RECOVERY_CODE_PATTERN } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';

export const PkceChallenge = Type.String({ pattern: PKCE_CHALLENGE_PATTERN.source });
export const Otp = Type.String({ pattern: '^[0-9]{6}$' });
/** A recovery code as typed (XXXXX-XXXXX, any case; packages/protocol RECOVERY_CODE_PATTERN, whose `i` flag is spelled out here). */
export const RecoveryCode = Type.String({ pattern: RECOVERY_CODE_PATTERN.source.replaceAll('a-tv-z', 'a-tv-zA-TV-Z') });
export const DeviceToken = Type.String({ minLength: 10, maxLength: 100 });

/** The canonical mailbox a `userid` names (packages/protocol email.ts), or ERR_EMAIL_INVALID. */
export function emailOf(userid: string): string {
  const email = canonicalEmail(userid);
  if (email === null) throw new ServiceError('ERR_EMAIL_INVALID', 'That is not a valid email address.');
  return email;
}
