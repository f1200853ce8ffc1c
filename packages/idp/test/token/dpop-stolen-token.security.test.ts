/**
 * Threat: a thief copies a DPoP-bound access token or a public client's bound refresh token
 * (from a log, a proxy, a backup, a leaky page) but not the private key it is bound to, and
 * replays it from their own machine: as a bearer token, with no proof, or with proofs of a key
 * of their own. Every attempt is refused, on either of two nodes that share the database,
 * while the holder of the key keeps working. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { currentNonce, type DpopKey, dpopKey, dpopProof, formPost, startSecondNode, userinfo } from '../support/dpop-helpers.js';
import { sendClock, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { credentials, type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';

describe('a stolen DPoP-bound token without its key', () => {
  let service: TestService;
  let second: Awaited<ReturnType<typeof startSecondNode>>;
  const clock = sendClock();
  let spa: RelyingParty;
  let nodes: string[];
  before(async () => {
    service = await startTestService({ now: clock.now });
    second = await startSecondNode(service, { now: clock.now });
    spa = await relyingParty(service, { name: 'SPA', public: true, redirectUri: 'https://spa.example/cb' });
    nodes = [service.url, second.url];
  });
  after(async () => {
    await second.close();
    await service.close();
  });

  // The public issuer names every endpoint in a proof's htu, whichever node answers.
  const htu = (path: string) => service.url + path;
  const proofFor = async (key: DpopKey, htm: string, path: string, accessToken?: string) =>
    dpopProof(key, {
      htm,
      htu: htu(path),
      nonce: await currentNonce(service.url),
      iat: Math.floor(clock.at / 1000),
      ...(accessToken ? { accessToken } : {}),
    });

  async function boundSignIn(key: DpopKey) {
    clock.tick();
    const { tokens } = await signIn(service, spa, uniqueEmail('dpop-theft'), {
      redeemHeaders: async () => ({ dpop: await proofFor(key, 'POST', '/oauth/token') }),
    });
    assert.equal(tokens.token_type, 'DPoP');
    return { accessToken: tokens.access_token ?? '', refreshToken: tokens.refresh_token ?? '' };
  }

  it('refuses the access token as a bearer token, and with a proof of the thief`s key', async () => {
    const owner = await dpopKey();
    const thief = await dpopKey();
    const { accessToken } = await boundSignIn(owner);
    for (const node of nodes) {
      const bearer = await userinfo(node, 'Bearer', accessToken);
      assert.equal(bearer.status, 401, `${node}: as a bearer token (RFC 9449 7.2)`);
      assert.equal(bearer.body.error, 'invalid_token');
      const noProof = await userinfo(node, 'DPoP', accessToken);
      assert.equal(noProof.status, 401, `${node}: without a proof`);
      assert.equal(noProof.body.error, 'invalid_dpop_proof');
      assert.match(noProof.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof".*algs="ES256/);
      const stolen = await userinfo(node, 'DPoP', accessToken, await proofFor(thief, 'GET', '/oauth/userinfo', accessToken));
      assert.equal(stolen.status, 401, `${node}: with the thief's own key`);
      assert.equal(stolen.body.error, 'invalid_token');
      const owned = await userinfo(node, 'DPoP', accessToken, await proofFor(owner, 'GET', '/oauth/userinfo', accessToken));
      assert.equal(owned.status, 200, `${node}: the holder of the key`);
    }
  });

  it('refuses a public client`s refresh token without a proof or with another key, and the holder still refreshes', async () => {
    const owner = await dpopKey();
    const thief = await dpopKey();
    let { refreshToken } = await boundSignIn(owner);
    for (const node of nodes) {
      const params = () => ({ grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(spa) });
      const bare = await formPost(`${node}/oauth/token`, params());
      assert.equal(bare.status, 400, `${node}: without a proof`);
      assert.equal(bare.body.error, 'invalid_grant');
      const other = await formPost(`${node}/oauth/token`, params(), await proofFor(thief, 'POST', '/oauth/token'));
      assert.equal(other.status, 400, `${node}: with the thief's key`);
      assert.equal(other.body.error, 'invalid_grant');
      const owned = await formPost(`${node}/oauth/token`, params(), await proofFor(owner, 'POST', '/oauth/token'));
      assert.equal(owned.status, 200, `${node}: the refusals neither spent the token nor revoked the family`);
      refreshToken = owned.body.refresh_token;
    }
  });

  it('does not let the thief revoke the bound refresh token either', async () => {
    const owner = await dpopKey();
    const thief = await dpopKey();
    const { refreshToken } = await boundSignIn(owner);
    for (const node of nodes) {
      const revoked = await formPost(
        `${node}/oauth/revoke`,
        { token: refreshToken, ...credentials(spa) },
        await proofFor(thief, 'POST', '/oauth/revoke'),
      );
      assert.equal(revoked.status, 200, 'RFC 7009 2.2: answered alike');
    }
    const owned = await formPost(
      `${second.url}/oauth/token`,
      { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(spa) },
      await proofFor(owner, 'POST', '/oauth/token'),
    );
    assert.equal(owned.status, 200, 'still live');
  });
});
