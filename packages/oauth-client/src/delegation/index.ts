// Its public types use node:crypto and Buffer: pull in @types/node (a dependency) for consumers.
/// <reference types="node" preserve="true" />
/**
 * service-oauth-client/delegation: the MFA delegation client, and the envelope it shares with
 * the service (nested JWT, RFC 7519 11.2: an EdDSA JWS inside an ECDH-ES/A256GCM JWE).
 *
 * @packageDocumentation
 */

// The wire contract (operation names, bodies, results, claims, content type, lifetimes) is
// defined once, in service-protocol, for the service and this client; it is part of this API.
export {
  DELEGATION_CLOCK_SKEW_SECONDS,
  DELEGATION_CONTENT_TYPE,
  DELEGATION_JWE_TYPE,
  DELEGATION_JWT_TYPE,
  DELEGATION_MAX_TTL_SECONDS,
  DELEGATION_OPS,
  type DelegationClaims,
  type DelegationDevice,
  type DelegationOp,
  type DelegationRequestBodies,
  type DelegationRequestClaims,
  type DelegationResponseClaims,
  type DelegationResults,
  type MfaChangeStep,
} from 'service-protocol';
export { ServiceDelegationClient } from './client.js';
export { DELEGATION_ENV, DELEGATION_PATH } from './config.js';
export type { KeyOrResolver, OpenEnvelopeOptions, SealEnvelopeOptions } from './envelope.js';
export { newJti, openEnvelope, requestClaims, responseClaims, sealEnvelope } from './envelope.js';
export type {
  DelegationConfigErrorCode,
  DelegationEnvelopeErrorCode,
  DelegationErrorCode,
  DelegationRequestErrorCode,
  DelegationResponseErrorCode,
} from './errors.js';
export { DelegationConfigError, DelegationEnvelopeError, DelegationRequestError, DelegationResponseError } from './errors.js';
export type { DelegationKey, DelegationKeyKind } from './keys.js';
export { checkDelegationKey, loadDelegationKey } from './keys.js';
export type {
  DelegationClientOptions,
  DeviceList,
  InitiateMfaChangeOptions,
  MfaChangeResult,
  RevokeAllDevicesResult,
  RevokeDeviceResult,
  UserCredentials,
  VerifyMfaChangeOptions,
  VerifyMfaChangeResult,
} from './options.js';
export { MfaMethod } from './options.js';
