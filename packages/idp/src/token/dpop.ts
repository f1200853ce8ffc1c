import type { FastifyReply, FastifyRequest } from 'fastify';
import type { BearerErrorBody } from 'service-protocol';
import { DPOP_ALGS, DpopError, type DpopVerifier } from '../dpop/proof.js';
import { OAuthError } from '../errors.js';

/**
 * The DPoP proof of a token or revocation request, if it sent one (RFC 9449 5): the JWK
 * thumbprint of its key, or an RFC 9449 12.2 error. Every answer carries the current nonce
 * (`DPoP-Nonce`, 8), so a client that sent none learns it from the refusal and retries.
 */
export async function tokenEndpointProof(
  dpop: DpopVerifier,
  request: FastifyRequest,
  reply: FastifyReply,
  path: string,
): Promise<string | undefined> {
  reply.header('dpop-nonce', dpop.nonce());
  if (request.headers.dpop === undefined) return undefined;
  try {
    return (await dpop.verify({ header: request.headers.dpop, method: request.method, path })).jkt;
  } catch (error) {
    if (error instanceof DpopError) throw new OAuthError(error.error, error.message);
    throw error;
  }
}

/** The proof of a userinfo request with a `DPoP` token (RFC 9449 7.1), or the DpopError that refuses it. */
export async function resourceProof(dpop: DpopVerifier, request: FastifyRequest, path: string, accessToken: string) {
  try {
    return await dpop.verify({ header: request.headers.dpop, method: request.method, path, accessToken });
  } catch (error) {
    if (error instanceof DpopError) return error;
    throw error;
  }
}

/** `Authorization: Bearer <token>` (RFC 6750 2.1) or `DPoP <token>` (RFC 9449 7.1); the scheme is case-insensitive (RFC 9110 11.1). */
export function presentedToken(authorization: string | undefined): { scheme: 'Bearer' | 'DPoP'; token: string } | undefined {
  const match = /^(Bearer|DPoP) +([A-Za-z0-9\-._~+/]+=*)$/i.exec(authorization ?? '');
  if (!match?.[1] || !match[2]) return undefined;
  return { scheme: match[1].toLowerCase() === 'dpop' ? 'DPoP' : 'Bearer', token: match[2] };
}

/**
 * A 401 from userinfo: the RFC 6750 3 challenge for a bearer token, the RFC 9449 7.1 one (with
 * the accepted `algs`) for a DPoP token; `use_dpop_nonce` goes with the nonce header set by the route.
 */
export function userinfoRefusal(reply: FastifyReply, scheme: 'Bearer' | 'DPoP', error: BearerErrorBody['error'], description: string) {
  const challenge =
    scheme === 'DPoP'
      ? `DPoP error="${error}", error_description="${description}", algs="${DPOP_ALGS.join(' ')}"`
      : `Bearer error="${error}"`;
  const body: BearerErrorBody = { error, error_description: description };
  return reply.code(401).header('www-authenticate', challenge).send(body);
}
