/**
 * Threat: a thief copies the service session's cookies out of a browser WITHOUT DBSC (the
 * fallback of issue 27). The hosted page bound the session to its non-extractable WebCrypto key
 * at sign-in: the session counts only with a short cookie, and once that is gone /authorize
 * answers with an interstitial whose challenge only that key can answer. A copied cookie
 * without the key, a replayed or forged proof, another session's challenge or a cross-site post
 * renew nothing. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DBSC_COOKIE_TTL_SECONDS } from '../../src/defaults.js';
import { DBSC_REGISTRATION_PATH } from '../../src/oidc/dbsc.js';
import {
  boundSessionSuite,
  browserKey,
  dbscPost,
  hostedSignIn,
  interstitial,
  pageKeySignIn,
  pageProof,
  parseRegistration,
  renewPost,
  sessionResponse,
  signedIn,
} from '../support/dbsc-helpers.js';
import { uniqueEmail } from '../support/helpers.js';
import { CookieJar } from '../support/oidc-helpers.js';

describe('copied session cookies of a session bound to the hosted page`s key (no DBSC)', () => {
  const suite = boundSessionSuite();
  const { clock } = suite;

  const copy = (jar: CookieJar) => {
    const thief = new CookieJar();
    for (const [name, value] of jar.cookies) thief.cookies.set(name, value);
    return thief;
  };
  async function expiredSession() {
    clock.tick();
    const signed = await pageKeySignIn(suite.service, suite.rp, uniqueEmail('page-key'));
    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    return signed;
  }

  it('binds the session at sign-in; past the short cookie the interstitial renews it with the key, and SSO goes on', async () => {
    clock.tick();
    const { jar, key } = await pageKeySignIn(suite.service, suite.rp, uniqueEmail('page-key'));
    assert.ok(jar.cookies.get('service_session_bound'), 'the sign-in set the short cookie beside the session');
    assert.equal(await signedIn(suite.service, suite.rp, jar), true);
    const longOnly = copy(jar);
    longOnly.cookies.delete('service_session_bound');
    const asked = await interstitial(suite.service, suite.rp, longOnly);
    assert.equal(asked.status, 200, 'the long cookie alone gets the interstitial, not a code');
    assert.ok(asked.challenge);
    assert.match(asked.csp ?? '', /script-src 'self'/);
    assert.match(asked.next ?? '', /^\/authorize\?.*prompt=none/, 'it goes back to the same request');

    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    assert.equal((await interstitial(suite.service, suite.rp, jar)).status, 200, 'the expired short cookie counts for nothing');
    const { challenge } = await interstitial(suite.service, suite.rp, jar);
    const renewed = await renewPost(suite.service, jar, { proof: await pageProof(key, challenge ?? '') });
    assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
    assert.equal(renewed.body.renewed, true);
    assert.match(renewed.setCookie[0] ?? '', new RegExp(`^service_session_bound=.+Max-Age=${DBSC_COOKIE_TTL_SECONDS}`));
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'renewed: SSO answers with a code');
  });

  it('a copied cookie without the key cannot renew: its own key is refused, and without a proof the copy is dropped', async () => {
    const { jar, key } = await expiredSession();
    const thief = copy(jar);
    const { challenge } = await interstitial(suite.service, suite.rp, thief);
    assert.ok(challenge, 'the thief gets a challenge, which only the key answers');
    const own = await browserKey();
    const forged = await renewPost(suite.service, thief, { proof: await pageProof(own, challenge ?? '') });
    assert.equal(forged.status, 400);
    assert.equal(forged.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await signedIn(suite.service, suite.rp, thief), false);

    // What the interstitial does in a browser without the key: its cookies go, it must sign in.
    const dropped = await renewPost(suite.service, thief, {});
    assert.deepEqual(dropped.body, { renewed: false });
    assert.equal(thief.cookies.get('service_session'), '');
    const after = await interstitial(suite.service, suite.rp, thief);
    assert.equal(after.status, 303, 'no interstitial any more: prompt=none says login_required');
    assert.equal(await signedIn(suite.service, suite.rp, thief), false);

    // The owner's session lives on where the key is.
    const { challenge: own2 } = await interstitial(suite.service, suite.rp, jar);
    assert.equal((await renewPost(suite.service, jar, { proof: await pageProof(key, own2 ?? '') })).status, 200);
    assert.equal(await signedIn(suite.service, suite.rp, jar), true);
  });

  it('refuses a replayed renewal proof, a forged one, and a proof over another session`s challenge', async () => {
    const { jar, key } = await expiredSession();
    const { challenge } = await interstitial(suite.service, suite.rp, jar);
    const proof = await pageProof(key, challenge ?? '');
    assert.equal((await renewPost(suite.service, jar, { proof })).status, 200);
    const replayed = await renewPost(suite.service, copy(jar), { proof });
    assert.equal(replayed.status, 400, 'a challenge is answered once');

    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    const { challenge: fresh } = await interstitial(suite.service, suite.rp, jar);
    const signedByOther = await pageProof(key, fresh ?? '', (await browserKey()).privateKey);
    assert.equal((await renewPost(suite.service, jar, { proof: signedByOther })).status, 400, 'signed by another key');
    const [header, payload] = (await pageProof(key, fresh ?? '')).split('.');
    assert.equal((await renewPost(suite.service, jar, { proof: `${header}.${payload}.` })).status, 400, 'no signature');
    const none = `${Buffer.from('{"alg":"none","typ":"dbsc+jwt"}').toString('base64url')}.${payload}.`;
    assert.equal((await renewPost(suite.service, jar, { proof: none })).status, 400, 'alg none');
    assert.equal((await renewPost(suite.service, jar, { proof: 'x'.repeat(3000) })).status, 400, 'too long: refused at the edge');

    const other = await pageKeySignIn(suite.service, suite.rp, uniqueEmail('page-key-other'));
    other.jar.cookies.delete('service_session_bound');
    const { challenge: theirs } = await interstitial(suite.service, suite.rp, other.jar);
    const crossed = await renewPost(suite.service, jar, { proof: await pageProof(key, theirs ?? '') });
    assert.equal(crossed.status, 400, 'a challenge is bound to its session');
    assert.equal(await signedIn(suite.service, suite.rp, jar), false, 'nothing was renewed');
    // The unspent challenge still serves its own session.
    assert.equal((await renewPost(suite.service, jar, { proof: await pageProof(key, fresh ?? '') })).status, 200);
  });

  it('refuses a cross-site renewal or drop, changing nothing', async () => {
    const { jar, key } = await expiredSession();
    const { challenge } = await interstitial(suite.service, suite.rp, jar);
    const proof = await pageProof(key, challenge ?? '');
    const crossSite = await renewPost(suite.service, jar, { proof }, 'https://evil.example');
    assert.equal(crossSite.status, 400);
    assert.equal(crossSite.setCookie.length, 0);
    const crossDrop = await renewPost(suite.service, jar, {}, 'https://evil.example');
    assert.equal(crossDrop.setCookie.length, 0, 'another site cannot sign this browser out');
    assert.equal((await renewPost(suite.service, jar, { proof })).status, 200, 'the refused post spent nothing');
  });

  it('a thief cannot rebind a page-key session to their own key: the renewal page`s challenge registers no DBSC key', async () => {
    const { jar, key } = await expiredSession();
    const thief = copy(jar);
    const { challenge } = await interstitial(suite.service, suite.rp, thief);
    assert.ok(challenge, 'the long cookie alone gets the renewal page');
    const own = await browserKey();
    const registered = await dbscPost(suite.service, DBSC_REGISTRATION_PATH, thief, {
      'secure-session-response': await sessionResponse(own, challenge ?? ''),
    });
    assert.equal(registered.status, 400, 'a renewal challenge is no registration challenge');
    assert.equal(registered.body.code, 'ERR_SESSION_INVALID');
    assert.equal(registered.headers.getSetCookie().length, 0, 'no short cookie for the thief');
    assert.equal(await signedIn(suite.service, suite.rp, thief), false, 'no code for the thief');

    // The session is still bound to the page's key: its browser renews, and SSO goes on.
    const { challenge: owners } = await interstitial(suite.service, suite.rp, jar);
    assert.equal((await renewPost(suite.service, jar, { proof: await pageProof(key, owners ?? '') })).status, 200);
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'the owner is not sent to login_required');
  });

  it('a DBSC browser replaces the page key with its own once; the page route then renews nothing', async () => {
    clock.tick();
    const page = await browserKey();
    const { kty, crv, x, y } = page.jwk;
    const { jar, registration } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('page-key-dbsc'), {
      sessionKey: { kty, crv, x, y },
    });
    const offer = parseRegistration(registration);
    const dbsc = await browserKey();
    const registered = await dbscPost(suite.service, offer.path, jar, {
      'secure-session-response': await sessionResponse(dbsc, offer.challenge),
    });
    assert.equal(registered.status, 200, 'DBSC binds over the page key');
    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    const asked = await interstitial(suite.service, suite.rp, jar);
    assert.equal(asked.status, 303, 'a DBSC session gets no interstitial: its browser refreshes by DBSC');
    const { challenge } = await interstitial(suite.service, suite.rp, copy(jar));
    assert.equal(challenge, undefined);
  });

  it('a session key that is no P-256 point leaves the session unbound; another shape is refused at the edge', async () => {
    clock.tick();
    const offCurve = { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) };
    const { jar } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('page-key-bad'), { sessionKey: offCurve });
    assert.equal(jar.cookies.get('service_session_bound'), undefined, 'not on the curve: no short cookie');
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'the session is unbound (as without WebCrypto)');
    await assert.rejects(
      hostedSignIn(suite.service, suite.rp, uniqueEmail('page-key-shape'), { sessionKey: { kty: 'RSA', n: 'x' } }),
      /ERR_REQUEST_INVALID|ERR_/,
    );
  });
});
