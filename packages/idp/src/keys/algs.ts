/**
 * ID token signing algorithms: RS256 is the default (OIDC Core 3.1.3.7, the spec); a client
 * may register ES256 or EdDSA (Ed25519, RFC 8037) as its `id_token_signed_response_alg`.
 * Apart from the keyring so that reading clients loads no JOSE library.
 */
export const SIGNING_ALGS = ['RS256', 'ES256', 'EdDSA'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export const isSigningAlg = (value: unknown): value is SigningAlg => SIGNING_ALGS.includes(value as SigningAlg);
