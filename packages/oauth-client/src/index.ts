// Its public types use node:crypto and Buffer: pull in @types/node (a dependency) for consumers.
/// <reference types="node" preserve="true" />
/**
 * service-oauth-client: exchange an authorization code for verified claims, verify JWTs, verify
 * the service's access tokens in your API (verifyAccessToken and its adapters), and
 * delegate MFA changes (ServiceDelegationClient; the envelope is also at
 * `service-oauth-client/delegation`).
 *
 * @packageDocumentation
 */

export type {
  AccessTokenClaims,
  AccessTokenDpopOptions,
  VerifiedAccessToken,
  VerifyAccessTokenOptions,
} from './access-token.js';
export { verifyAccessToken } from './access-token.js';
export type {
  DelegationClientOptions,
  DelegationConfigErrorCode,
  DelegationDevice,
  DelegationEnvelopeErrorCode,
  DelegationErrorCode,
  DelegationRequestErrorCode,
  DelegationResponseErrorCode,
  DeviceList,
  InitiateMfaChangeOptions,
  MfaChangeResult,
  RevokeAllDevicesResult,
  RevokeDeviceResult,
  UserCredentials,
  VerifyMfaChangeOptions,
  VerifyMfaChangeResult,
} from './delegation/index.js';
export {
  DelegationConfigError,
  DelegationEnvelopeError,
  DelegationRequestError,
  DelegationResponseError,
  MfaMethod,
  ServiceDelegationClient,
} from './delegation/index.js';
export type { VerifiedDpopRequest, VerifyDpopRequestOptions } from './dpop.js';
export { verifyDpopRequest } from './dpop.js';
export type {
  AccessTokenErrorCode,
  DPoPVerificationErrorCode,
  InvalidPublicKeyErrorCode,
  JWTVerificationErrorCode,
  OAuthExchangeErrorCode,
  ServiceOAuthErrorCode,
} from './errors.js';
export {
  AccessTokenError,
  DPoPVerificationError,
  InvalidPublicKeyError,
  JWTVerificationError,
  OAuthExchangeError,
  ServiceOAuthError,
} from './errors.js';
export type { Claims, ExchangeCodeForClaimsOptions, ExchangedTokens } from './exchange.js';
export { exchangeCodeForClaims, exchangeCodeForTokens } from './exchange.js';
export type { PublicKeyInput } from './keys.js';
export type {
  AccessTokenRefusal,
  AccessTokenRequest,
  AccessTokenRequestOptions,
  ExpressLikeResponse,
  FastifyLikeReply,
} from './resource-server.js';
export { accessTokenMiddleware, accessTokenPreHandler, accessTokenRefusal, verifyAccessTokenRequest } from './resource-server.js';
export type { JwtPayload, VerifyJwtOptions } from './verify-jwt.js';
export { verifyJwt } from './verify-jwt.js';
