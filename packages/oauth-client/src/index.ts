/**
 * service-oauth-client: exchange an authorization code for verified claims, and verify JWTs.
 *
 * @packageDocumentation
 */

export type {
  InvalidPublicKeyErrorCode,
  JWTVerificationErrorCode,
  OAuthExchangeErrorCode,
  ServiceOAuthErrorCode,
} from './errors.js';
export { InvalidPublicKeyError, JWTVerificationError, OAuthExchangeError, ServiceOAuthError } from './errors.js';
export type { Claims, ExchangeCodeForClaimsOptions } from './exchange.js';
export { exchangeCodeForClaims } from './exchange.js';
export type { PublicKeyInput } from './keys.js';
export type { JwtPayload, VerifyJwtOptions } from './verify-jwt.js';
export { verifyJwt } from './verify-jwt.js';
