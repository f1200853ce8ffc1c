/**
 * The demo backend's DPoP calls (RFC 9449): the page signs a proof with the device key
 * (service-web/dpop) for each call the backend makes to the identity service for the user;
 * the backend forwards it. A call refused for want of the service's nonce is answered with the
 * nonce, so that the page signs again with it.
 */

/** A refusal the page answers by signing again with `dpopNonce`. */
export class DpopNonceNeeded extends Error {
  constructor(readonly dpopNonce: string) {
    super('The identity service asks for a fresh proof with its nonce.');
  }
}

/** GET userinfo with the DPoP-bound token and the page's proof: the claims, or undefined when refused. */
export async function userinfoWithProof(
  serviceUrl: string,
  accessToken: string,
  proof: string,
): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${serviceUrl}/oauth/userinfo`, {
    headers: { authorization: `DPoP ${accessToken}`, dpop: proof },
    redirect: 'error',
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json().catch(() => ({}))) as Record<string, unknown>;
  const nonce = response.headers.get('dpop-nonce');
  if (response.status === 401 && body.error === 'use_dpop_nonce' && nonce) throw new DpopNonceNeeded(nonce);
  return response.ok ? body : undefined;
}

/** The `cnf.jkt` of a JWT access token, read for display (the service verifies it; this does not). */
export function boundKeyOf(accessToken: string): string | null {
  try {
    const payload = JSON.parse(Buffer.from(accessToken.split('.')[1] ?? '', 'base64url').toString('utf8'));
    return typeof payload?.cnf?.jkt === 'string' ? payload.cnf.jkt : null;
  } catch {
    return null;
  }
}
