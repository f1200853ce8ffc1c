import type { ClientService } from '../clients/service.js';
import { signJws } from '../crypto/jws.js';
import { randomToken } from '../crypto/secrets.js';
import { LOGOUT_TOKEN_TTL_SECONDS } from '../defaults.js';
import type { Keyring } from '../keys/keyring.js';
import type { LogoutDelivery } from '../webhooks/worker.js';

/** OIDC Back-Channel Logout 1.0 2.4: the event a logout token carries. */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** What an outbox row of a back-channel logout holds (oidc/store.ts writes it when sessions end). */
export interface LogoutSubject {
  sub: string;
  sid: string | null;
}

/**
 * The back-channel side of the webhook outbox: each client's registered URI, and its logout
 * token signed at each attempt with the service's keys, in the client's ID token algorithm
 * (2.4: `typ` logout+jwt; iss, aud, iat, exp, a fresh jti, events, sub and sid; never a nonce).
 * A relying party drops a jti it has seen (2.6); a retry is a new token with a new jti, which
 * logs out the same session again, harmlessly.
 */
export function createLogoutDelivery({
  issuer,
  clients,
  keyring,
  now,
}: {
  issuer: string;
  clients: Pick<ClientService, 'findById'>;
  keyring: Keyring;
  now: () => number;
}): LogoutDelivery {
  return {
    async targets(clientIds: string[]): Promise<Map<string, string>> {
      const found = await Promise.all(clientIds.map((id) => clients.findById(id)));
      const targets = new Map<string, string>();
      for (const client of found) if (client?.logout.backchannelLogoutUri) targets.set(client.id, client.logout.backchannelLogoutUri);
      return targets;
    },

    async token(clientId: string, payload: string): Promise<string> {
      const subject = JSON.parse(payload) as LogoutSubject;
      const client = await clients.findById(clientId);
      const key = await keyring.active(client?.idTokenSignedResponseAlg ?? 'RS256');
      const iat = Math.floor(now() / 1000);
      return signJws(
        key.alg,
        { kid: key.kid, typ: 'logout+jwt' },
        {
          iss: issuer,
          aud: clientId,
          iat,
          exp: iat + LOGOUT_TOKEN_TTL_SECONDS,
          jti: randomToken('', 16),
          events: { [BACKCHANNEL_LOGOUT_EVENT]: {} },
          sub: subject.sub,
          ...(subject.sid ? { sid: subject.sid } : {}),
        },
        key.privateKey,
      );
    },
  };
}
