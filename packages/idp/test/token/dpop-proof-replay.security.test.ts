/**
 * Threat: an attacker who saw one DPoP proof (with its token) on the wire or in a log tries to
 * get a second use out of it: the same proof again, on the node that took it or on another
 * node sharing the database; a proof made for another URL or method; one too old or from the
 * future; one whose header names the owner's key but is signed with another. Each is refused
 * at userinfo (401 invalid_dpop_proof with a DPoP challenge) and at the token endpoint (400),
 * on both nodes. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { SignJWT } from 'jose';
import { DPOP_PROOF_MAX_AGE_SECONDS, DPOP_PROOF_MAX_FUTURE_SECONDS } from '../../src/defaults.js';
import {
  currentNonce,
  type DpopKey,
  dpopKey,
  dpopProof,
  formPost,
  type ProofClaims,
  startSecondNode,
  userinfo,
} from '../support/dpop-helpers.js';
import { startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { credentials, type RelyingParty, relyingParty, signIn } from '../support/oidc-token-helpers.js';

describe('a DPoP proof used twice, elsewhere or forged', () => {
  let service: TestService;
  let second: Awaited<ReturnType<typeof startSecondNode>>;
  let rp: RelyingParty;
  let nodes: string[];
  let owner: DpopKey;
  let accessToken: string;
  let refreshToken: string;
  before(async () => {
    service = await startTestService();
    second = await startSecondNode(service);
    rp = await relyingParty(service);
    nodes = [service.url, second.url];
    owner = await dpopKey();
    const { tokens } = await signIn(service, rp, uniqueEmail('dpop-replay'), {
      redeemHeaders: async () => ({ dpop: await proof({ htm: 'POST', path: '/oauth/token' }) }),
    });
    accessToken = tokens.access_token ?? '';
    refreshToken = tokens.refresh_token ?? '';
  });
  after(async () => {
    await second.close();
    await service.close();
  });

  const proof = async (claims: Omit<ProofClaims, 'htu'> & { path?: string; htu?: string }, key: DpopKey = owner) =>
    dpopProof(key, {
      htu: claims.htu ?? service.url + (claims.path ?? '/oauth/userinfo'),
      nonce: await currentNonce(service.url),
      iat: Math.floor(Date.now() / 1000),
      ...claims,
    });

  async function refusedAtUserinfo(node: string, dpop: string, what: string) {
    const answer = await userinfo(node, 'DPoP', accessToken, dpop);
    assert.equal(answer.status, 401, `${node}: ${what}`);
    assert.equal(answer.body.error, 'invalid_dpop_proof', `${node}: ${what}`);
    assert.match(answer.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
  }

  it('takes a proof once, on whichever node it reaches first', async () => {
    for (const [first, then] of [nodes, [...nodes].reverse()] as [string, string][]) {
      const once = await proof({ htm: 'GET', accessToken });
      assert.equal((await userinfo(first, 'DPoP', accessToken, once)).status, 200);
      await refusedAtUserinfo(first, once, 'the same proof on the same node');
      await refusedAtUserinfo(then, once, 'the same proof on the other node');
    }
    const tokenProof = await proof({ htm: 'POST', path: '/oauth/token' });
    const params = { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(rp) };
    const used = await formPost(`${nodes[0]}/oauth/token`, params, tokenProof);
    assert.equal(used.status, 200);
    const replayed = await formPost(`${nodes[1]}/oauth/token`, { ...params, refresh_token: used.body.refresh_token }, tokenProof);
    assert.equal(replayed.status, 400);
    assert.equal(replayed.body.error, 'invalid_dpop_proof');
    refreshToken = used.body.refresh_token;
  });

  it('refuses a proof for another URL or another method', async () => {
    for (const node of nodes) {
      await refusedAtUserinfo(node, await proof({ htm: 'GET', accessToken, path: '/oauth/token' }), 'another path');
      await refusedAtUserinfo(
        node,
        await proof({ htm: 'GET', accessToken, htu: `https://elsewhere.example/oauth/userinfo` }),
        'another host',
      );
      await refusedAtUserinfo(node, await proof({ htm: 'POST', accessToken }), 'another method');
      const forUserinfo = await proof({ htm: 'GET' });
      const answer = await formPost(
        `${node}/oauth/token`,
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(rp) },
        forUserinfo,
      );
      assert.equal(answer.status, 400, `${node}: a userinfo proof at the token endpoint`);
      assert.equal(answer.body.error, 'invalid_dpop_proof');
    }
  });

  it('refuses a proof too old or from the future', async () => {
    const now = Math.floor(Date.now() / 1000);
    for (const node of nodes) {
      await refusedAtUserinfo(node, await proof({ htm: 'GET', accessToken, iat: now - DPOP_PROOF_MAX_AGE_SECONDS - 2 }), 'too old');
      await refusedAtUserinfo(
        node,
        await proof({ htm: 'GET', accessToken, iat: now + DPOP_PROOF_MAX_FUTURE_SECONDS + 2 }),
        'from the future',
      );
    }
  });

  it('refuses a proof signed with another key than the one it names, or for another token', async () => {
    const forger = await dpopKey();
    for (const node of nodes) {
      await refusedAtUserinfo(node, await proof({ htm: 'GET', accessToken, signer: forger.privateKey }), 'signed with another key');
      await refusedAtUserinfo(node, await proof({ htm: 'GET', accessToken: `${accessToken}x` }), 'ath of another token');
    }
  });

  it('refuses a proof of an algorithm it does not take (ES512, HS256), naming it; a header-breaking alg is never echoed', async () => {
    const es512 = await dpopKey('ES512');
    const claims = { htm: 'GET', htu: `${service.url}/oauth/userinfo`, nonce: await currentNonce(service.url), accessToken };
    const hs256 = await new SignJWT({
      jti: randomUUID(),
      htm: 'GET',
      htu: claims.htu,
      iat: Math.floor(Date.now() / 1000),
      nonce: claims.nonce,
    })
      .setProtectedHeader({ typ: 'dpop+jwt', alg: 'HS256', jwk: owner.jwk })
      .sign(new TextEncoder().encode('a-shared-secret-of-thirty-two-bytes!'));
    const segment = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const breaking = `${segment({ typ: 'dpop+jwt', alg: 'x", error="none\r\nSet-Cookie: a=b', jwk: owner.jwk })}.${segment({ htm: 'GET' })}.c2ln`;
    for (const node of nodes) {
      for (const [dpop, alg] of [
        [await dpopProof(es512, claims), 'ES512'],
        [hs256, 'HS256'],
      ]) {
        const answer = await userinfo(node, 'DPoP', accessToken, dpop as string);
        assert.equal(answer.status, 401);
        assert.equal(answer.body.error, 'invalid_dpop_proof');
        assert.match(answer.body.error_description, new RegExp(`\\b${alg}\\b.*not accepted`), answer.body.error_description);
        assert.match(answer.headers.get('www-authenticate') ?? '', new RegExp(`error_description="[^"]*${alg}[^"]*"`));
      }
      const answer = await userinfo(node, 'DPoP', accessToken, breaking);
      assert.equal(answer.body.error, 'invalid_dpop_proof');
      assert.doesNotMatch(answer.body.error_description, /Set-Cookie|error=/);
      assert.equal(answer.headers.get('set-cookie'), null);
      const token = await formPost(
        `${node}/oauth/token`,
        { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials(rp) },
        hs256,
      );
      assert.equal(token.status, 400);
      assert.match(token.body.error_description, /HS256.*not accepted/);
    }
  });

  it('asks for the nonce, with a DPoP challenge, when a proof has none or a made-up one', async () => {
    for (const node of nodes) {
      for (const nonce of [undefined, 'made-up']) {
        const dpop = await dpopProof(owner, {
          htm: 'GET',
          htu: `${service.url}/oauth/userinfo`,
          accessToken,
          ...(nonce ? { nonce } : {}),
        });
        const answer = await userinfo(node, 'DPoP', accessToken, dpop);
        assert.equal(answer.status, 401);
        assert.equal(answer.body.error, 'use_dpop_nonce');
        assert.match(answer.headers.get('www-authenticate') ?? '', /^DPoP error="use_dpop_nonce"/);
        assert.equal(answer.headers.get('dpop-nonce'), await currentNonce(service.url), 'every node hands out the same nonce');
      }
    }
  });
});
