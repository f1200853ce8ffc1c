/**
 * Threat: a forged or replayed "Continue with" flow registers a device key for another user
 * (issue 26). The page's key rides in the sealed flow cookie (flow.ts), so it is registered only
 * for the user the provider signed in, once: a replayed callback (the same answer and flow
 * cookie again), a tampered flow cookie (another key or user spliced in) and a device key in an
 * application's start link (no hosted request, no browser binding: anyone can craft that link)
 * register nothing; an application's page sends its key after the result instead
 * (upstream-device-ticket.security.test.ts). Real provider
 * (node-oidc-provider); runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { HOSTED_CLIENT_ID } from '../../../src/clients/service.js';
import { flowCookieName } from '../../../src/factors/upstream/routes.js';
import { startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import { type App, appParams, authorize, CookieJar, registerApp } from '../../support/oidc-helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { connect, hostedUpstreamSignIn, pageDeviceKey, startUrl } from './upstream-helpers.js';

describe('a forged or replayed upstream flow cannot register a device for another user', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  let app: App;
  before(async () => {
    service = await startTestService({ testMode: true });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    app = await registerApp(service, 'App');
    connection = (await connect(service, upstream, [app.clientId, service.clientId])).id;
  });
  after(async () => {
    await upstream.close();
    await service.close();
  });

  const devicesOf = async (email: string) => {
    const user = await service.ctx.enabledUsers.findByEmail(email);
    return user ? service.ctx.devices.list({ userId: user.id, clientId: HOSTED_CLIENT_ID, usedSince: 0 }) : [];
  };
  const callbackWith = (url: string, cookie: string) => fetch(url, { redirect: 'manual', headers: { cookie } });

  it('a replayed callback (same answer, same flow cookie) is refused and registers no second device', async () => {
    const email = uniqueEmail('fed-replay');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const jar = new CookieJar();
    const pending = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    const done = await hostedUpstreamSignIn(service, jar, pending.location ?? '', connection);
    assert.equal(done.result.status, 'SUCCESS');
    assert.equal((await devicesOf(email)).length, 1);
    const replay = await callbackWith(done.callback, done.flowCookie);
    const back = new URL(replay.headers.get('location') ?? '', service.url);
    assert.equal(new URLSearchParams(back.hash.slice(1)).get('status'), 'ERROR');
    assert.equal((await devicesOf(email)).length, 1, 'still the one device');
  });

  it('a tampered flow cookie (its sealed device key or user changed) is refused before the provider`s answer is used', async () => {
    const email = uniqueEmail('fed-forged');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const jar = new CookieJar();
    const pending = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    // The flow is started and the provider answers, but the callback is held back to be forged.
    const start = await fetch(
      startUrl(service, connection, {
        request: new URL(pending.location ?? '', service.url).searchParams.get('request') ?? '',
        device_key: pageDeviceKey(),
      }),
      { redirect: 'manual', headers: { cookie: jar.header() } },
    );
    assert.equal(start.status, 303);
    const name = flowCookieName(service.url);
    const sealed =
      start.headers
        .getSetCookie()
        .find((c) => c.startsWith(`${name}=`))
        ?.split(';')[0]
        ?.slice(name.length + 1) ?? '';
    const bytes = Buffer.from(sealed, 'base64url');
    bytes[bytes.length - 20] = (bytes[bytes.length - 20] ?? 0) ^ 1;
    const forged = await callbackWith(`${service.url}${UpstreamPaths.callback}?code=x&state=y`, `${name}=${bytes.toString('base64url')}`);
    assert.equal(forged.status, 400, 'refused: no flow this service sealed');
    assert.equal((await devicesOf(email)).length, 0);
  });

  it('a device key on the application path (no hosted request to bind it) is refused with a 400 and no flow', async () => {
    const response = await fetch(startUrl(service, connection, { device_key: pageDeviceKey() }), { redirect: 'manual' });
    assert.equal(response.status, 400);
    assert.equal(response.headers.getSetCookie().length, 0);
    await response.body?.cancel();
  });

  it('a device key that is no P-256 public key is refused with a 400 and no flow', async () => {
    const jar = new CookieJar();
    const pending = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    const request = new URL(pending.location ?? '', service.url).searchParams.get('request') ?? '';
    const notAKey = Buffer.from(JSON.stringify({ kty: 'EC', crv: 'P-256', x: 'AAAA', y: 'AAAA' })).toString('base64url');
    const response = await fetch(startUrl(service, connection, { request, device_key: notAKey }), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.getSetCookie().length, 0);
    await response.body?.cancel();
  });
});
