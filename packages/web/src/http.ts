import {
  AUTHORIZATION_REQUEST_HEADER,
  BROWSER_PREFIX,
  CHALLENGE_SOLUTION_HEADER,
  ErrorStatus,
  isErrorCode,
  PUBLISHABLE_KEY_HEADER,
  type SendChallenge,
} from 'service-protocol';
import { isObject } from './checks.js';
import { failure, reasonOf, unexpected, withTyped } from './results.js';
import type { FailureResult } from './types.js';

export interface HttpConfig {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch: typeof fetch;
  /** init()'s `authorizationRequest`: sent on every call, with the service origin's cookies. */
  authorizationRequest?: string | undefined;
}

/** A readable JSON object from a 2xx answer, or the failure; `httpStatus` when the service answered. */
export type HttpOutcome =
  | { body: Record<string, unknown>; failure?: undefined; httpStatus?: undefined }
  | { body?: undefined; failure: FailureResult; httpStatus?: number };

const JSON_TYPE = 'application/json';

/**
 * One JSON request to a browser endpoint (`path` from BrowserPaths, under BROWSER_PREFIX): a POST
 * of `body`, or a GET without one. Never throws: every way it can go wrong becomes a
 * FailureResult. The timeout covers the whole exchange, body included. Undefined members of
 * `body` are left out (JSON.stringify drops them). `challengeSolution`, a solved send challenge
 * (challenge.ts), goes in its header.
 */
export async function request(config: HttpConfig, path: string, body?: object, challengeSolution?: string): Promise<HttpOutcome> {
  // Aborted only by its timer: an aborted signal is a timeout.
  const signal = AbortSignal.timeout(config.timeoutMs);
  try {
    const hosted = config.authorizationRequest;
    const response = await config.fetch(config.baseUrl + BROWSER_PREFIX + path, {
      method: body ? 'POST' : 'GET',
      headers: {
        accept: JSON_TYPE,
        [PUBLISHABLE_KEY_HEADER]: config.apiKey,
        ...(body && { 'content-type': JSON_TYPE }),
        ...(hosted && { [AUTHORIZATION_REQUEST_HEADER]: hosted }),
        ...(challengeSolution && { [CHALLENGE_SOLUTION_HEADER]: challengeSolution }),
      },
      // The publishable key identifies the client; cookies play no part in this protocol, except
      // the hosted pages' binding of their authorization request to this browser (same origin only).
      credentials: hosted ? 'same-origin' : 'omit',
      body: body && JSON.stringify(body),
      signal,
    });
    const httpStatus = response.status;
    const parsed = parseObject(await response.text());
    if (!response.ok) return { failure: errorBodyToFailure(httpStatus, parsed), httpStatus };
    return parsed ? { body: parsed } : { failure: unexpected(), httpStatus };
  } catch (error) {
    return {
      failure: signal.aborted
        ? failure('TIMEOUT', `No answer within ${config.timeoutMs} ms`)
        : failure('NETWORK_ERROR', `Unreachable: ${reasonOf(error)}`),
    };
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Maps `{ code, message, retryAfter?, attemptsRemaining?, challenge? }` through protocol's ErrorStatus table. */
export function errorBodyToFailure(httpStatus: number, body: Record<string, unknown> = {}): FailureResult {
  const { code, message, challenge } = body;
  if (!isErrorCode(code)) return failure('SERVICE_ERROR', `HTTP ${httpStatus}: unknown code`);
  const result = withTyped(
    failure(ErrorStatus[code], typeof message === 'string' ? message : code),
    body,
    'number',
    'retryAfter',
    'attemptsRemaining',
  );
  // Passed on as the service sent it: a proof of work's solution carries it unchanged (solveChallenge checks its shape).
  if (isObject(challenge)) result.challenge = challenge as unknown as SendChallenge;
  return result;
}
