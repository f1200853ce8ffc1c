/**
 * "Continue with …" on the hosted pages ends like the emailed code there (issue 26): the page's
 * device key goes with the start, the sign-in registers it through the one finisher
 * (sign-in/finish.ts), so the new-device mail is sent and the hosted SSO session opens, bound
 * to that device: a second app's prompt=none signs in silently. The same browser's key signing
 * in again is the same device (no second mail). Real provider (node-oidc-provider), real SMTP
 * capture; runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { UpstreamPaths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { HOSTED_CLIENT_ID } from '../../../src/clients/service.js';
import { sessionCookieName } from '../../../src/oidc/routes.js';
import { startSmtp, startTestService, type TestService, uniqueEmail } from '../../support/helpers.js';
import {
  type App,
  appParams,
  authorize,
  CookieJar,
  complete,
  paramsOf,
  RP_CALLBACK,
  registerApp,
  requestIdOf,
} from '../../support/oidc-helpers.js';
import { hostedPost } from '../../support/oidc-passkey-helpers.js';
import { startUpstream, type TestUpstream } from '../../support/upstream.js';
import { connect, hostedUpstreamSignIn, pageDeviceKey } from './upstream-helpers.js';

describe('"Continue with" on the hosted pages: the device key, the new-device mail and the SSO session', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  let first: App;
  let second: App;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
    upstream = await startUpstream(`${service.url}${UpstreamPaths.callback}`);
    first = await registerApp(service, 'First App');
    second = await registerApp(service, 'Second App');
    connection = (await connect(service, upstream, [first.clientId, second.clientId])).id;
  });
  after(async () => {
    await upstream.close();
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const newDeviceMails = async (email: string) =>
    (await Promise.all(smtp.inbox.filter((m) => m.to.includes(email)).map((m) => simpleParser(m.raw)))).filter((m) =>
      /new device/i.test(m.subject ?? ''),
    );

  it('registers the page`s key, mails the new-device notice once, and opens the session a second app`s prompt=none signs in by', async () => {
    const email = uniqueEmail('fed-sso');
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const jar = new CookieJar();
    const deviceKey = pageDeviceKey();
    const pending = await authorize(service, appParams(first.clientId, await createPkcePair()), jar);
    const signedIn = await hostedUpstreamSignIn(service, jar, pending.location ?? '', connection, deviceKey);
    assert.equal(signedIn.result.status, 'SUCCESS', JSON.stringify(signedIn.result));
    assert.ok(signedIn.done?.location?.startsWith(`${RP_CALLBACK}?`), JSON.stringify(signedIn.done?.body));
    assert.ok(jar.cookies.get(sessionCookieName(service.url)), 'the hosted SSO session cookie');

    const user = await service.ctx.enabledUsers.findByEmail(email);
    const devices = await service.ctx.devices.list({ userId: user?.id as string, clientId: HOSTED_CLIENT_ID, usedSince: 0 });
    assert.equal(devices.length, 1, 'the page`s key is the user`s device for the hosted pages');
    const mails = await newDeviceMails(email);
    assert.equal(mails.length, 1);
    assert.match(mails[0]?.subject ?? '', /First App/);

    // The second app: no page, no provider (its sign-ins are counted), straight back with a code.
    const visits = upstream.tokenRequests();
    const silent = await authorize(service, appParams(second.clientId, await createPkcePair(), { prompt: 'none' }), jar);
    assert.equal(silent.status, 303);
    assert.ok(paramsOf(silent.location).code, silent.location ?? '');
    assert.equal(upstream.tokenRequests(), visits, 'the provider was not visited');

    // The same browser (its kept key) signs in with the provider again: the same device, no second mail.
    const again = await authorize(service, appParams(first.clientId, await createPkcePair(), { prompt: 'login' }), jar);
    const secondSignIn = await hostedUpstreamSignIn(service, jar, again.location ?? '', connection, deviceKey);
    assert.ok(secondSignIn.done?.location?.startsWith(`${RP_CALLBACK}?`), JSON.stringify(secondSignIn.done?.body));
    assert.equal((await service.ctx.devices.list({ userId: user?.id as string, clientId: HOSTED_CLIENT_ID, usedSince: 0 })).length, 1);
    assert.equal((await newDeviceMails(email)).length, 1, 'no second new-device mail');
  });

  it('the link step (an existing account`s emailed code) registers the page`s key too and opens the session', async () => {
    const email = uniqueEmail('fed-link-sso');
    await service.ctx.enabledUsers.findOrCreate(email, Date.now());
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const jar = new CookieJar();
    const deviceKey = pageDeviceKey();
    const pending = await authorize(service, appParams(first.clientId, await createPkcePair()), jar);
    const started = await hostedUpstreamSignIn(service, jar, pending.location ?? '', connection, deviceKey);
    assert.equal(started.result.status, 'LINK_NEEDED', JSON.stringify(started.result));
    const mails = await Promise.all(smtp.inbox.filter((m) => m.to.includes(email)).map((m) => simpleParser(m.raw)));
    const otp = mails.at(-1)?.text?.match(/\b(\d{6})\b/)?.[1] ?? '';
    const request = requestIdOf(pending.location ?? '');
    const devicePublicKey = JSON.parse(Buffer.from(deviceKey, 'base64url').toString());
    const linked = await hostedPost(service, request, jar)(UpstreamPaths.confirmLink, { link: started.result.link, otp, devicePublicKey });
    assert.equal(linked.body?.status, 'SUCCESS', JSON.stringify(linked.body));
    const done = await complete(service, jar, { request, code: linked.body.code, codeVerifier: started.verifier });
    assert.ok(done.location?.startsWith(`${RP_CALLBACK}?`), JSON.stringify(done.body));
    assert.ok(jar.cookies.get(sessionCookieName(service.url)), 'the hosted SSO session cookie');
    assert.equal((await newDeviceMails(email)).length, 1);
    const silent = await authorize(service, appParams(second.clientId, await createPkcePair(), { prompt: 'none' }), jar);
    assert.ok(paramsOf(silent.location).code, silent.location ?? '');
  });
});
