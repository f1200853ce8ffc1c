import { randomBytes } from 'node:crypto';
import type { Sealer } from '../../crypto/seal.js';

/**
 * What the start of an upstream sign-in leaves in the browser: a cookie sealed by the service
 * (AES-256-GCM, crypto/seal.ts) holding the checks the callback needs (state, nonce, PKCE
 * verifier) and where the result goes. It binds the sign-in to the browser that started it:
 * a callback in another browser has no cookie (login CSRF), a swapped `state` does not match
 * it, and the state is spent once (spent-tokens/) against a replay.
 */
export interface Flow {
  connectionId: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  /** The client the sign-in is for (the hosted client for the hosted pages). */
  clientId: string;
  /** The hosted pages: the pending authorization request. */
  requestId?: string;
  returnTo: string;
  pageState: string;
  codeChallenge: string;
  expiresAt: number;
}

export const random = () => randomBytes(32).toString('base64url');

export const sealFlow = (sealer: Sealer, flow: Flow) => sealer.seal(JSON.stringify(flow));

export function openFlow(sealer: Sealer, value: string | undefined, now: number): Flow | undefined {
  if (!value || value.length > 4096) return undefined;
  try {
    const flow = JSON.parse(sealer.open(value)) as Flow;
    return typeof flow.state === 'string' && flow.expiresAt > now ? flow : undefined;
  } catch {
    return undefined;
  }
}
