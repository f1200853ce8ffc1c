import { hkdfSync } from 'node:crypto';
import { jwtVerify } from 'jose';
import type { TokenResponse } from 'service-protocol';
import type { AccountStore } from '../accounts/store.js';
import type { CodeService } from '../authorization-codes/service.js';
import type { ClientService } from '../clients/service.js';
import { signHs256, signJws } from '../crypto/jws.js';
import { pkceChallengeOf, pkceVerifies } from '../crypto/pkce.js';
import { randomToken } from '../crypto/secrets.js';
import { ACCESS_TOKEN_TTL_SECONDS, ID_TOKEN_TTL_SECONDS } from '../defaults.js';
import { OAuthError } from '../errors.js';
import { isSigningAlg, type Keyring } from '../keys/keyring.js';

export interface TokenDeps {
  issuer: string;
  clients: ClientService;
  codes: CodeService;
  accounts: AccountStore;
  keyring: Keyring;
  serverSecret: Buffer;
  now: () => number;
}

export interface CodeGrant {
  clientId: string;
  /** Absent for a public client (`token_endpoint_auth_method: none`). */
  clientSecret?: string;
  code: string;
  codeVerifier?: string;
  redirectUri?: string;
}

export const SCOPE = 'openid email';

/** Stands for a malformed code_verifier in the redeeming statement: no stored challenge has a `!`. */
const MALFORMED_VERIFIER = '!';

/**
 * The token endpoint's logic (RFC 6749 4.1.3, RFC 7636 4.6, OIDC Core 3.1.3): authenticate the
 * client, consume the code once, check its binding and PKCE, sign the ID token.
 */
export function createTokenService(deps: TokenDeps) {
  const { issuer, clients, codes, accounts, keyring, now } = deps;
  // Access tokens are only for this service's userinfo endpoint: an HMAC (HS256) JWT under a
  // key derived from the server secret is enough, and costs no second RSA signature.
  const accessKey = new Uint8Array(hkdfSync('sha256', deps.serverSecret, Buffer.alloc(0), 'service-idp access-token', 32));
  const userinfoAudience = `${issuer}/oauth/userinfo`;

  return {
    async exchangeCode(grant: CodeGrant): Promise<TokenResponse> {
      // One statement on the way to a token (docs/performance.md, round trips): the client's
      // secret is checked, the code consumed, the user read and the sign-in recorded together.
      // Consumed before any other check: a code presented once is gone, whatever the outcome.
      // A second presentation also revokes the access token the first one got.
      const accessTokenJti = randomToken('', 16);
      const pkceChallenge = grant.codeVerifier === undefined ? null : (pkceChallengeOf(grant.codeVerifier) ?? MALFORMED_VERIFIER);
      const redeemed = await codes.redeem(grant.code, accessTokenJti, {
        id: grant.clientId,
        secretKeyHash: grant.clientSecret === undefined ? null : clients.secretKeyHash(grant.clientSecret),
        pkceChallenge,
        redirectUri: grant.redirectUri ?? null,
      });
      if (!redeemed) {
        // Nothing was consumed: either the client failed to authenticate or the code is not live.
        if (!(await clients.authenticateTokenClient(grant.clientId, grant.clientSecret)))
          throw new OAuthError('invalid_client', 'Client authentication failed.');
        await codes.revokeReplayed(grant.code);
        throw new OAuthError('invalid_grant', 'The authorization code is invalid, expired or already used.');
      }
      const { code, user } = redeemed;
      const client = { id: grant.clientId, idTokenSignedResponseAlg: isSigningAlg(redeemed.idTokenAlg) ? redeemed.idTokenAlg : 'RS256' };
      if (code.clientId !== client.id) throw new OAuthError('invalid_grant', 'The authorization code was issued to another client.');
      if (code.codeChallenge !== null) {
        if (!grant.codeVerifier) throw new OAuthError('invalid_grant', 'code_verifier is required for this code.');
        if (!pkceVerifies(grant.codeVerifier, code.codeChallenge))
          throw new OAuthError('invalid_grant', 'code_verifier does not match the code challenge.');
      } else if (grant.codeVerifier !== undefined) {
        throw new OAuthError('invalid_grant', 'code_verifier was sent but the code was issued without a code challenge.');
      }
      // RFC 9700 2.1.1: a public client has no secret, so PKCE is what binds the code to it (the
      // redeeming statement let a request without a secret through only for a public client).
      if (grant.clientSecret === undefined && code.codeChallenge === null)
        throw new OAuthError('invalid_grant', 'A public client must use PKCE (S256).');
      // RFC 6749 4.1.3: a code issued for a redirect_uri is redeemed only with the same one.
      if (code.redirectUri !== null && grant.redirectUri !== code.redirectUri)
        throw new OAuthError('invalid_grant', 'redirect_uri does not match the one of the authorization request.');
      if (!user) throw new OAuthError('invalid_grant', 'The user of this code no longer exists.');
      // Delegation may act only on users who signed in to this client (docs/delegation.md): the
      // redeeming statement recorded the pair when the checks above pass (code of this client,
      // PKCE binding equal, user enabled).

      // The client's registered algorithm (OIDC Dynamic Client Registration 2): RS256 unless it chose ES256 or EdDSA.
      const key = await keyring.active(client.idTokenSignedResponseAlg);
      const iat = Math.floor(now() / 1000);
      const idToken = await signJws(
        key.alg,
        { kid: key.kid, typ: 'JWT' },
        {
          iss: issuer,
          sub: user.id,
          aud: client.id,
          iat,
          nbf: iat,
          exp: iat + ID_TOKEN_TTL_SECONDS,
          auth_time: code.authTime,
          jti: randomToken('', 16),
          email: user.email,
          email_verified: true,
          amr: code.amr,
          // OIDC Core 3.1.3.6 / 2: the nonce of the authentication request, verbatim.
          ...(code.nonce ? { nonce: code.nonce } : {}),
          // Our claim: the device behind this sign-in, so a backend can end its session when it is revoked.
          ...(code.deviceId ? { device_id: code.deviceId } : {}),
        },
        key.privateKey,
      );
      const accessToken = signHs256(
        { typ: 'at+jwt' },
        {
          iss: issuer,
          sub: user.id,
          aud: userinfoAudience,
          client_id: client.id,
          scope: SCOPE,
          iat,
          exp: iat + ACCESS_TOKEN_TTL_SECONDS,
          jti: accessTokenJti,
        },
        accessKey,
      );
      return { access_token: accessToken, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, id_token: idToken, scope: SCOPE };
    },

    /** OIDC Core 5.3 userinfo for a valid access token, or undefined. */
    async userinfo(accessToken: string): Promise<{ sub: string; email: string; email_verified: true } | undefined> {
      let subject: string | undefined;
      let jti: string | undefined;
      try {
        const { payload } = await jwtVerify(accessToken, accessKey, {
          issuer,
          audience: userinfoAudience,
          algorithms: ['HS256'],
          typ: 'at+jwt',
          currentDate: new Date(now()),
        });
        subject = payload.sub;
        jti = payload.jti;
      } catch {
        return undefined; // a bad token is a 401; a database outage below stays a 503
      }
      if (!jti || (await codes.isAccessTokenRevoked(jti))) return undefined;
      const user = subject ? await accounts.findById(subject) : undefined;
      return user && { sub: user.id, email: user.email, email_verified: true };
    },
  };
}

export type TokenService = ReturnType<typeof createTokenService>;
