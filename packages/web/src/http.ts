import { BROWSER_PREFIX, ErrorCodes, isErrorCode, PUBLISHABLE_KEY_HEADER } from 'service-protocol';
import type { FailureResult, FailureStatus } from './types.js';

export interface HttpConfig {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch: typeof fetch;
}

export type HttpOutcome = { ok: true; body: Record<string, unknown> } | { ok: false; httpStatus?: number; failure: FailureResult };

export function failure(status: FailureStatus, message: string): FailureResult {
  return { status, message };
}

/**
 * One JSON request to a browser endpoint (`path` from BrowserPaths, under BROWSER_PREFIX). Never
 * throws: every way it can go wrong becomes a FailureResult. The timeout covers the whole
 * exchange, body included.
 */
export async function request(config: HttpConfig, method: 'GET' | 'POST', path: string, body?: object): Promise<HttpOutcome> {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, config.timeoutMs);
  const headers: Record<string, string> = {
    accept: 'application/json',
    [PUBLISHABLE_KEY_HEADER]: config.apiKey,
  };
  if (body !== undefined) headers['content-type'] = 'application/json';
  try {
    const response = await config.fetch(`${config.baseUrl}${BROWSER_PREFIX}${path}`, {
      method,
      headers,
      // The publishable key identifies the client; cookies play no part in this protocol.
      credentials: 'omit',
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: controller.signal,
    });
    const text = await response.text();
    const parsed = parseObject(text);
    if (response.ok) {
      if (parsed === undefined) {
        return { ok: false, httpStatus: response.status, failure: failure('SERVICE_ERROR', 'The service sent an unreadable response') };
      }
      return { ok: true, body: parsed };
    }
    return { ok: false, httpStatus: response.status, failure: errorBodyToFailure(response.status, parsed) };
  } catch (error) {
    if (timedOut) {
      return { ok: false, failure: failure('TIMEOUT', `The service did not answer within ${config.timeoutMs} ms`) };
    }
    const reason = error instanceof Error ? error.message : String(error);
    return { ok: false, failure: failure('NETWORK_ERROR', `The service could not be reached: ${reason}`) };
  } finally {
    clearTimeout(timer);
  }
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** Maps `{ code, message, retryAfter?, attemptsRemaining? }` through protocol's ErrorCodes table. */
export function errorBodyToFailure(httpStatus: number, body: Record<string, unknown> | undefined): FailureResult {
  if (body === undefined || !isErrorCode(body.code)) {
    return failure('SERVICE_ERROR', `The service answered HTTP ${httpStatus} without a known error code`);
  }
  const message = typeof body.message === 'string' ? body.message : body.code;
  const result = failure(ErrorCodes[body.code].status as FailureStatus, message);
  if (typeof body.retryAfter === 'number') result.retryAfter = body.retryAfter;
  if (typeof body.attemptsRemaining === 'number') result.attemptsRemaining = body.attemptsRemaining;
  return result;
}
