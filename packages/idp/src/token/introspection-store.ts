import type { Db } from '../storage/schema.js';

/**
 * Whether the grant behind an access token still stands (RFC 7662 introspection), in one read
 * (one of the exceptions storage/schema.ts lists): the token's jti is not in
 * revoked_access_tokens (authorization-codes/), and each grant that issued it is live: the code
 * whose redemption did (auth_codes keeps the jti while the token lives) with its user enabled and
 * its device not removed, and the refresh token whose rotation did, or the family the code
 * started (refresh_tokens.access_token_jti, oidc/), with its family not revoked, its user
 * enabled and its device not removed. One statement, so the answer is of one moment, and one
 * round trip per introspection. A machine client's token (client_credentials, `sub` the client)
 * has no such grant: it stands while its jti is not revoked and the client is still a machine.
 */
export function createIntrospectionStore(db: Db) {
  return {
    isMachineTokenLive: (jti: string, clientId: string) => isMachineTokenLive(db, jti, clientId),

    async isAccessTokenGrantLive(jti: string): Promise<boolean> {
      const row = await db
        .selectNoFrom((eb) => [
          eb.exists(eb.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti)).as('revoked'),
          // Each grant: null when there is none, 1 when it stands, 0 when it ended.
          eb
            .selectFrom('auth_codes')
            .leftJoin('users', 'users.id', 'auth_codes.user_id')
            .leftJoin('devices', 'devices.id', 'auth_codes.device_id')
            .select((c) =>
              c
                .case()
                .when(
                  c.and([
                    c('users.id', 'is not', null),
                    c('users.disabled_at', 'is', null),
                    c.or([
                      c('auth_codes.device_id', 'is', null),
                      c.and([c('devices.id', 'is not', null), c('devices.removed_at', 'is', null)]),
                    ]),
                  ]),
                )
                .then(1)
                .else(0)
                .end()
                .as('live'),
            )
            .where('auth_codes.access_token_jti', '=', jti)
            .limit(1)
            .as('code_live'),
          eb
            .selectFrom('refresh_tokens')
            .innerJoin('refresh_token_families', 'refresh_token_families.id', 'refresh_tokens.family_id')
            .leftJoin('users', 'users.id', 'refresh_token_families.user_id')
            .leftJoin('devices', 'devices.id', 'refresh_token_families.device_id')
            .select((c) =>
              c
                .case()
                .when(
                  c.and([
                    c('refresh_token_families.revoked_at', 'is', null),
                    c('users.id', 'is not', null),
                    c('users.disabled_at', 'is', null),
                    c('devices.id', 'is not', null),
                    c('devices.removed_at', 'is', null),
                  ]),
                )
                .then(1)
                .else(0)
                .end()
                .as('live'),
            )
            .where('refresh_tokens.access_token_jti', '=', jti)
            .limit(1)
            .as('family_live'),
        ])
        .executeTakeFirstOrThrow();
      const grants = [row.code_live, row.family_live].filter((live) => live !== null);
      return !Number(row.revoked) && grants.length > 0 && grants.every((live) => Number(live) === 1);
    },
  };
}

/** A machine client's access token (client_credentials): its jti not revoked and the client still a machine client. */
async function isMachineTokenLive(db: Db, jti: string, clientId: string): Promise<boolean> {
  const row = await db
    .selectNoFrom((eb) => [
      eb.exists(eb.selectFrom('revoked_access_tokens').select('jti').where('jti', '=', jti)).as('revoked'),
      eb.exists(eb.selectFrom('clients').select('id').where('id', '=', clientId).where('client_type', '=', 'machine')).as('machine'),
    ])
    .executeTakeFirstOrThrow();
  return !Number(row.revoked) && Boolean(Number(row.machine));
}

export type IntrospectionStore = ReturnType<typeof createIntrospectionStore>;
