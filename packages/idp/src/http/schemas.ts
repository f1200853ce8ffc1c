import { PKCE_CHALLENGE_PATTERN } from 'service-protocol';
import { Type } from 'typebox';

export const PkceChallenge = Type.String({ pattern: PKCE_CHALLENGE_PATTERN.source });
export const Otp = Type.String({ pattern: '^[0-9]{6}$' });
export const DeviceToken = Type.String({ minLength: 10, maxLength: 100 });
