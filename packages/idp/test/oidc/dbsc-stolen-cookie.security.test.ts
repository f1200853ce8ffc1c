/**
 * Threat: a thief copies the service session's cookies out of a browser (malware reading the
 * profile, a synced or backed-up cookie jar, a proxy) and replays them from another machine.
 * With the session bound to the browser's key (DBSC), the long cookie alone is refused, the
 * short cookie works only until its few minutes are up, and renewing it needs a proof signed
 * by the browser's key: the thief's own key, a replayed proof, a second registration or another
 * session's id get nothing. Runs on SQLite and PostgreSQL (helpers.ts).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DBSC_COOKIE_TTL_SECONDS } from '../../src/defaults.js';
import {
  boundSessionSuite,
  browserKey,
  dbscPost,
  hostedSignIn,
  parseRegistration,
  sessionResponse,
  signedIn,
} from '../support/dbsc-helpers.js';
import { uniqueEmail } from '../support/helpers.js';
import { CookieJar } from '../support/oidc-helpers.js';

describe('copied session cookies of a DBSC-bound session', () => {
  const suite = boundSessionSuite();
  const { clock } = suite;

  async function boundSession() {
    clock.tick();
    const { jar, registration } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('dbsc-theft'));
    const offer = parseRegistration(registration);
    const key = await browserKey();
    const registered = await dbscPost(suite.service, offer.path, jar, {
      'secure-session-response': await sessionResponse(key, offer.challenge),
    });
    assert.equal(registered.status, 200);
    return { jar, key, config: registered.body, offer };
  }
  const copy = (jar: CookieJar) => {
    const thief = new CookieJar();
    for (const [name, value] of jar.cookies) thief.cookies.set(name, value);
    return thief;
  };
  async function challengeFor(jar: CookieJar, id: string) {
    const asked = await dbscPost(suite.service, '/signin/dbsc/refresh', jar, { 'sec-secure-session-id': id });
    assert.equal(asked.status, 403);
    return /^"([^"]+)"/.exec(asked.headers.get('secure-session-challenge') ?? '')?.[1] ?? '';
  }

  it('stops working for the thief after the short cookie`s lifetime, and the thief cannot renew it', async () => {
    const { jar, config } = await boundSession();
    const thief = copy(jar);
    assert.equal(await signedIn(suite.service, suite.rp, thief), true, 'within the short lifetime the copy works (the window DBSC leaves)');
    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    assert.equal(await signedIn(suite.service, suite.rp, thief), false, 'after it, the copy is refused');

    const own = await browserKey();
    const challenge = await challengeFor(thief, config.session_identifier);
    const forged = await dbscPost(suite.service, config.refresh_url, thief, {
      'sec-secure-session-id': config.session_identifier,
      'secure-session-response': await sessionResponse(own, challenge),
    });
    assert.equal(forged.status, 400, 'a proof of the thief`s key');
    assert.equal(forged.body.code, 'ERR_SESSION_INVALID');
    assert.equal(await signedIn(suite.service, suite.rp, thief), false);
  });

  it('refuses a replayed refresh proof, and a proof over another session`s challenge', async () => {
    const { jar, key, config } = await boundSession();
    const challenge = await challengeFor(jar, config.session_identifier);
    const proof = await sessionResponse(key, challenge);
    const headers = { 'sec-secure-session-id': config.session_identifier, 'secure-session-response': proof };
    assert.equal((await dbscPost(suite.service, config.refresh_url, jar, headers)).status, 200);
    const replayed = await dbscPost(suite.service, config.refresh_url, copy(jar), headers);
    assert.equal(replayed.status, 400, 'the challenge was answered once');

    const other = await boundSession();
    const otherChallenge = await challengeFor(other.jar, other.config.session_identifier);
    const crossed = await dbscPost(suite.service, config.refresh_url, jar, {
      'sec-secure-session-id': config.session_identifier,
      'secure-session-response': await sessionResponse(key, otherChallenge),
    });
    assert.equal(crossed.status, 400, 'a challenge is bound to its session');
    const wrongId = await dbscPost(suite.service, config.refresh_url, jar, { 'sec-secure-session-id': other.config.session_identifier });
    assert.equal(wrongId.status, 400, 'another session`s id');
  });

  it('does not let the holder of the long cookie bind the session to a key of their own', async () => {
    const { jar, config, offer } = await boundSession();
    const thief = copy(jar);
    thief.cookies.delete('service_session_bound');
    const own = await browserKey();
    // The registration challenge again (a replay), and a fresh refresh challenge used at registration.
    const replayed = await dbscPost(suite.service, offer.path, thief, {
      'secure-session-response': await sessionResponse(own, offer.challenge),
    });
    assert.equal(replayed.status, 400);
    const challenge = await challengeFor(thief, config.session_identifier);
    const rebound = await dbscPost(suite.service, offer.path, thief, { 'secure-session-response': await sessionResponse(own, challenge) });
    assert.equal(rebound.status, 400, 'a bound session stays bound to its first key');
    assert.equal(await signedIn(suite.service, suite.rp, thief), false);
  });

  it('refuses a registration proof signed by another key than the one it names', async () => {
    clock.tick();
    const { jar, registration } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('dbsc-forged'));
    const offer = parseRegistration(registration);
    const named = await browserKey();
    const signer = await browserKey();
    const forged = await dbscPost(suite.service, offer.path, jar, {
      'secure-session-response': await sessionResponse(named, offer.challenge, signer.privateKey),
    });
    assert.equal(forged.status, 400);
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'the session stays unbound and usable');
  });
});
