/**
 * One delegation call on the wire: the request sealed (signed by the SP, encrypted to the
 * identity provider), one POST, and the answer opened (or the refusal, network failure or
 * timeout as a DelegationRequestError; an answer that does not open as a DelegationResponseError).
 */
import { DELEGATION_CONTENT_TYPE, type DelegationClaims, type DelegationOp, type DelegationRequestBodies } from 'service-protocol';
import { DELEGATION_REQUEST_TTL_SECONDS } from '../defaults.js';
import type { Config } from './config.js';
import { openEnvelope, requestClaims, sealEnvelope } from './envelope.js';
import { DelegationEnvelopeError, DelegationRequestError, DelegationResponseError } from './errors.js';

/** The sealed result of `op`, opened and bound to this request. */
export async function callDelegation<Op extends DelegationOp>(
  config: Config,
  op: Op,
  body: DelegationRequestBodies[Op],
): Promise<Record<string, unknown>> {
  const claims = requestClaims({ iss: config.spId, aud: config.audience, op, body, ttlSeconds: DELEGATION_REQUEST_TTL_SECONDS });
  const jwe = await sealEnvelope({
    claims: claims as DelegationClaims,
    signingKey: config.keys.spSigningKey,
    encryptionKey: config.keys.idpEncryptionKey,
  });

  const headers: Record<string, string> = { 'content-type': DELEGATION_CONTENT_TYPE, accept: DELEGATION_CONTENT_TYPE };
  if (config.apiKey !== undefined) headers.authorization = `Bearer ${config.apiKey}`;
  const signal = AbortSignal.timeout(config.timeoutMs);
  let response: Response;
  let text: string;
  try {
    // A redirect would carry the API key elsewhere: refuse it.
    response = await config.fetch(config.endpoint, { method: 'POST', headers, body: jwe, redirect: 'error', signal });
    text = await response.text();
  } catch (cause) {
    if (signal.aborted) {
      throw new DelegationRequestError(`delegation service did not answer within ${config.timeoutMs} ms`, {
        code: 'ERR_DELEGATION_TIMEOUT',
        cause,
      });
    }
    throw new DelegationRequestError(`delegation service ${new URL(config.endpoint).origin} could not be reached`, {
      code: 'ERR_DELEGATION_NETWORK',
      cause,
    });
  }

  if (response.status !== 200) throw refusal(response.status, text);
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase();
  if (mediaType !== DELEGATION_CONTENT_TYPE) {
    throw new DelegationResponseError(`delegation answer is not ${DELEGATION_CONTENT_TYPE} (an unsealed answer is never trusted)`, {
      status: response.status,
    });
  }
  try {
    const opened = await openEnvelope(text.trim(), {
      decryptionKey: config.keys.spEncryptionKey,
      verifyKey: config.keys.idpVerifyKey,
      audience: config.spId,
      issuer: config.audience,
      expectedOp: op,
      inResponseTo: claims.jti,
    });
    return (opened as { result: Record<string, unknown> }).result;
  } catch (cause) {
    if (!(cause instanceof DelegationEnvelopeError)) throw cause;
    throw new DelegationResponseError(`delegation answer refused: ${cause.message}`, { reason: cause.code, status: 200, cause });
  }
}

function refusal(status: number, text: string): DelegationRequestError {
  let fields: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) fields = parsed as Record<string, unknown>;
  } catch {
    // not JSON: keep the status only
  }
  const serviceCode = typeof fields.code === 'string' ? fields.code.slice(0, 100) : undefined;
  const serviceMessage = typeof fields.message === 'string' ? fields.message.slice(0, 500) : undefined;
  const detail =
    serviceCode === undefined ? `HTTP ${status}` : `HTTP ${status} ${serviceCode}${serviceMessage ? `: ${serviceMessage}` : ''}`;
  return new DelegationRequestError(`delegation service refused the request (${detail})`, {
    code: 'ERR_DELEGATION_REQUEST_FAILED',
    status,
    serviceCode,
    serviceMessage,
  });
}
