/**
 * Device Bound Session Credentials (W3C draft, issue 27) for the service session, driven as
 * the draft describes it and as Chromium sends it (checked by hand in Chromium 150 with
 * DeviceBoundSessions and the software-keys flag): the sign-in answer carries
 * `Secure-Session-Registration: (ES256 RS256);path="…";challenge="…"`; the browser POSTs
 * `Secure-Session-Response`, a JWT with `typ: dbsc+jwt`, its new public key as `jwk` and
 * `jti` = the challenge; the answer sets the short cookie and returns the session
 * configuration (`session_identifier`, `refresh_url`, `scope`, `credentials`,
 * `allowed_refresh_initiators`). A refresh POSTs `Sec-Secure-Session-Id`, gets `403` and
 * `Secure-Session-Challenge: "…";id="…"`, and retries with a proof over that challenge.
 * Runs on SQLite and PostgreSQL (helpers.ts).
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

describe('DBSC for the service session', () => {
  const suite = boundSessionSuite();
  const { clock } = suite;

  it('offers registration at sign-in, binds the session to the key, and then wants the short cookie', async () => {
    clock.tick();
    const { jar, registration } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('dbsc'));
    const offer = parseRegistration(registration);
    assert.deepEqual(offer.algs, ['ES256', 'RS256']);
    assert.equal(offer.path, '/signin/dbsc/registration');
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'an unbound session works as before');

    const key = await browserKey();
    const registered = await dbscPost(suite.service, offer.path, jar, {
      'secure-session-response': await sessionResponse(key, offer.challenge),
    });
    assert.equal(registered.status, 200, JSON.stringify(registered.body));
    const config = registered.body;
    assert.match(config.session_identifier, /^dbsc_/);
    assert.equal(config.refresh_url, '/signin/dbsc/refresh');
    assert.equal(config.scope.origin, new URL(suite.service.url).origin);
    assert.deepEqual(config.allowed_refresh_initiators, []);
    const [credential] = config.credentials;
    assert.equal(credential.type, 'cookie');
    assert.equal(credential.name, 'service_session_bound');
    // The draft: the attributes named in the configuration are the set cookie's own.
    const setCookie = registered.headers.getSetCookie()[0] ?? '';
    assert.ok(setCookie.startsWith(`${credential.name}=`));
    assert.ok(setCookie.includes(credential.attributes), `${setCookie} has ${credential.attributes}`);
    assert.match(setCookie, new RegExp(`Max-Age=${DBSC_COOKIE_TTL_SECONDS}`));

    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'with the short cookie');
    const longOnly = new CookieJar();
    longOnly.cookies.set('service_session', jar.cookies.get('service_session') ?? '');
    longOnly.cookies.set('service_authorization', jar.cookies.get('service_authorization') ?? '');
    assert.equal(await signedIn(suite.service, suite.rp, longOnly), false, 'the long cookie alone no longer counts');
  });

  it('renews the short cookie by the draft`s challenge flow, signed by the session`s key', async () => {
    clock.tick();
    const { jar, registration } = await hostedSignIn(suite.service, suite.rp, uniqueEmail('dbsc-refresh'));
    const key = await browserKey();
    const offer = parseRegistration(registration);
    const { body: config } = await dbscPost(suite.service, offer.path, jar, {
      'secure-session-response': await sessionResponse(key, offer.challenge),
    });

    clock.at += (DBSC_COOKIE_TTL_SECONDS + 1) * 1000;
    assert.equal(await signedIn(suite.service, suite.rp, jar), false, 'the short cookie expired');
    const asked = await dbscPost(suite.service, config.refresh_url, jar, { 'sec-secure-session-id': config.session_identifier });
    assert.equal(asked.status, 403);
    const challengeHeader = asked.headers.get('secure-session-challenge') ?? '';
    const match = /^"([^"]+)";id="([^"]+)"$/.exec(challengeHeader);
    assert.ok(match, challengeHeader);
    assert.equal(match[2], config.session_identifier);
    const refreshed = await dbscPost(suite.service, config.refresh_url, jar, {
      'sec-secure-session-id': config.session_identifier,
      'secure-session-response': await sessionResponse(key, match[1] ?? ''),
    });
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    assert.equal(refreshed.body.session_identifier, config.session_identifier);
    assert.equal(await signedIn(suite.service, suite.rp, jar), true, 'signed in again with the new short cookie');
  });

  it('declares every answer in the OpenAPI document (the contract check runs on each)', async () => {
    const document = await (await fetch(`${suite.service.url}/openapi.json`)).json();
    assert.ok(document.paths['/signin/dbsc/registration']?.post);
    assert.ok(document.paths['/signin/dbsc/refresh']?.post);
  });
});
