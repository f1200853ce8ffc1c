/**
 * Threat: an attacker makes a victim's upstream sign-in register the attacker's device key, or
 * finishes it twice (issue 26). An application's page that remembers the browser gets a sealed,
 * single-use ticket in its return URL (DEVICE_KEY_NEEDED) and sends its key with it
 * (POST /v1/upstream/device); no key rides in the start link anyone can craft. Each attack below
 * registers nothing: a crafted start link (the victim signs in, nothing is registered at the
 * callback), a replayed or concurrently doubled ticket, another application's ticket, a
 * tampered or expired ticket, a flow cookie posted as a ticket, a key with a private member,
 * remember_device on the hosted pages; a malformed key spends nothing. Real provider
 * (node-oidc-provider); runs on SQLite and, with SERVICE_TEST_DATABASE_URL, on PostgreSQL.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { UpstreamPaths } from 'service-protocol';
import { createPkcePair } from 'service-web';
import { UPSTREAM_DEVICE_TICKET_TTL_SECONDS } from '../../../src/defaults.js';
import { flowCookieName } from '../../../src/factors/upstream/routes.js';
import { APP_ORIGIN, newRawDevice, type TestService, uniqueEmail } from '../../support/helpers.js';
import { appParams, authorize, CookieJar, registerApp } from '../../support/oidc-helpers.js';
import type { TestUpstream } from '../../support/upstream.js';
import { appDevicesOf, rememberedSignIn, startUrl, upstreamSuite } from './upstream-helpers.js';

describe('an upstream device ticket registers only the page’s key, once, for its own application', () => {
  let service: TestService;
  let upstream: TestUpstream;
  let connection: string;
  let skew = 0;
  upstreamSuite((started) => ({ service, upstream, connection } = started), { now: () => Date.now() + skew });

  const devicesOf = (email: string) => appDevicesOf(service, email);
  const finish = (ticket: unknown, devicePublicKey: object, headers: Record<string, string> = {}) =>
    service.post(UpstreamPaths.device, { ticket, devicePublicKey }, undefined, headers);
  /** A victim's remembered sign-in, back at the page with its ticket. */
  async function ticketOf(label: string) {
    const email = uniqueEmail(label);
    upstream.signInAs({ sub: `sub-${email}`, email, email_verified: true });
    const { result } = await rememberedSignIn(service, connection);
    assert.equal(result.status, 'DEVICE_KEY_NEEDED', JSON.stringify(result));
    return { email, ticket: result.ticket as string };
  }

  it('a crafted start link with remember_device: the victim signs in, and nothing is registered until a page sends its key', async () => {
    const { email } = await ticketOf('fed-crafted');
    // The attacker holds no ticket (it went to the app's origin, whose page refuses a state it did not start).
    assert.equal((await devicesOf(email)).length, 0);
    const mails = await service.ctx.mailbox.list(50, email);
    assert.equal(mails.filter((m) => /new device/i.test(m.subject)).length, 0, 'no new-device mail');
  });

  it('a replayed ticket is refused: one device', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-replay');
    const first = await finish(ticket, (await newRawDevice()).publicJwk);
    assert.equal(first.body.status, 'SUCCESS', JSON.stringify(first.body));
    const replay = await finish(ticket, (await newRawDevice()).publicJwk);
    assert.equal(replay.status, 400);
    assert.equal(replay.body.code, 'ERR_SESSION_INVALID');
    assert.equal((await devicesOf(email)).length, 1);
  });

  it('the same ticket twice at once (double spend): exactly one finishes', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-race');
    const keys = await Promise.all([newRawDevice(), newRawDevice(), newRawDevice()]);
    const answers = await Promise.all(keys.map((key) => finish(ticket, key.publicJwk)));
    assert.equal(answers.filter((a) => a.body.status === 'SUCCESS').length, 1, JSON.stringify(answers.map((a) => a.body)));
    assert.equal((await devicesOf(email)).length, 1);
  });

  it('another application’s ticket is refused and left unspent', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-other-app');
    const other = await service.ctx.clients.create({ name: 'Other App', origins: [APP_ORIGIN] });
    const key = (await newRawDevice()).publicJwk;
    const refused = await finish(ticket, key, { 'x-service-key': other.publishableKey });
    assert.equal(refused.body.code, 'ERR_SESSION_INVALID');
    assert.equal((await devicesOf(email)).length, 0);
    assert.equal((await finish(ticket, key)).body.status, 'SUCCESS', 'its own application still finishes it');
  });

  it('a tampered ticket and a flow cookie posted as a ticket are refused', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-tampered');
    const bytes = Buffer.from(ticket, 'base64url');
    bytes[bytes.length - 20] = (bytes[bytes.length - 20] ?? 0) ^ 1;
    const key = (await newRawDevice()).publicJwk;
    assert.equal((await finish(bytes.toString('base64url'), key)).body.code, 'ERR_SESSION_INVALID');
    const start = await fetch(startUrl(service, connection, { remember_device: '1' }), { redirect: 'manual' });
    const name = flowCookieName(service.url);
    const flow = start.headers
      .getSetCookie()
      .find((c) => c.startsWith(`${name}=`))
      ?.split(';')[0]
      ?.slice(name.length + 1);
    assert.ok(flow);
    assert.equal((await finish(flow, key)).body.code, 'ERR_SESSION_INVALID');
    assert.equal((await devicesOf(email)).length, 0);
  });

  it('an expired ticket is refused', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-expired');
    skew += (UPSTREAM_DEVICE_TICKET_TTL_SECONDS + 1) * 1000;
    const late = await finish(ticket, (await newRawDevice()).publicJwk);
    assert.equal(late.body.code, 'ERR_SESSION_INVALID');
    assert.equal((await devicesOf(email)).length, 0);
  });

  it('a key off the curve or with a private member is refused with a 400 before the ticket is spent', async () => {
    const { email, ticket } = await ticketOf('fed-ticket-bad-key');
    const offCurve = await finish(ticket, { kty: 'EC', crv: 'P-256', x: 'A'.repeat(43), y: 'A'.repeat(43) });
    assert.equal(offCurve.status, 400);
    assert.equal(offCurve.body.code, 'ERR_DEVICE_KEY_INVALID');
    const key = await newRawDevice();
    const withPrivate = await finish(ticket, { ...key.publicJwk, d: 'A'.repeat(43) });
    assert.equal(withPrivate.status, 400);
    assert.equal((await devicesOf(email)).length, 0);
    assert.equal((await finish(ticket, key.publicJwk)).body.status, 'SUCCESS', 'the ticket was not spent');
  });

  it('remember_device on the hosted pages (with request) is refused with a 400 and no flow', async () => {
    const app = await registerApp(service, 'Hosted App');
    const jar = new CookieJar();
    const pending = await authorize(service, appParams(app.clientId, await createPkcePair()), jar);
    const request = new URL(pending.location ?? '', service.url).searchParams.get('request') ?? '';
    const response = await fetch(startUrl(service, connection, { request, remember_device: '1' }), {
      redirect: 'manual',
      headers: { cookie: jar.header() },
    });
    assert.equal(response.status, 400);
    assert.equal(response.headers.getSetCookie().length, 0);
    assert.match(await response.text(), /remember_device is for applications/);
  });
});
