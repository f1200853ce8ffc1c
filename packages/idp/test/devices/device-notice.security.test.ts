/**
 * Attack: abusing the "this wasn't me" link of the new-device mail. The mail arrives over real
 * SMTP; its link names one device and is signed. An attacker (or a mail scanner) opens it
 * (GET must change nothing), replays it, uses it after it expired, tampers with it, or points
 * it at another user's device. Only one POST of the untouched, live link revokes exactly that
 * device; nothing here ever signs anyone in.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DeviceOps } from 'service-protocol';
import { DEVICE_NOTICE_LINK_TTL_SECONDS } from '../../src/defaults.js';
import {
  deviceProof,
  loginWithDevice,
  type RawDevice,
  type Received,
  registerRawDevice,
  startSmtp,
  startTestService,
  type TestService,
  uniqueEmail,
} from '../support/helpers.js';

const FIREFOX = 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('new-device notice and its link', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  let clock = Date.now();
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({
      testMode: true,
      now: () => clock,
      env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, SERVICE_IDP_PLACE_HEADER: 'x-test-country' },
    });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const register = async (email: string) => {
    clock += 31_000;
    return registerRawDevice(service, email, FIREFOX);
  };
  /** The text part of the newest new-device mail to `email`, quoted-printable undone. */
  const notice = (email: string): string => {
    const mail = smtp.inbox.filter((m: Received) => m.to.includes(email) && /A new device can now sign in/.test(m.raw)).at(-1);
    assert.ok(mail, `a new-device mail reached ${email} over SMTP`);
    return mail.raw.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
  };
  const linkOf = (email: string) => {
    const link = notice(email).match(/(http:\/\/\S+\/devices\/not-me\?t=[^\s"<]+)/)?.[1];
    assert.ok(link, 'the mail carries the link');
    return new URL(link);
  };
  const tokenOf = (email: string) => linkOf(email).searchParams.get('t') as string;
  const open = (token: string) => fetch(`${service.url}/devices/not-me?t=${encodeURIComponent(token)}`);
  const press = (token: string) =>
    fetch(`${service.url}/devices/not-me`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ t: token }),
    });
  const trusted = async (device: RawDevice, email: string) => {
    clock += 31_000;
    return (await loginWithDevice(service, device, email)).status === 'SUCCESS';
  };

  it('mails when, which browser and OS, the approximate place from the configured header, and a link', async () => {
    const email = uniqueEmail('notice');
    clock += 31_000;
    const a = await service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1', rememberDevice: true });
    await service.post('/v1/email-otp/verify', { userid: email, deviceToken: a.body.deviceToken, otp: a.body.code });
    const response = await fetch(`${service.url}/v1/devices`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        origin: 'http://app.test:3000',
        'x-service-key': service.publishableKey,
        'user-agent': FIREFOX,
        'x-test-country': 'FR<script>',
      },
      body: JSON.stringify({
        userid: email,
        deviceToken: a.body.deviceToken,
        devicePublicKey: {
          kty: 'EC',
          crv: 'P-256',
          x: 'MKBCTNIcKUSDii11ySs3526iDZ8AiTo7Tu6KPAqv7D4',
          y: '4Etl6SRW2YiLUrN5vfvVHuhp7x8PxltmWWlbbM4IFyM',
        },
      }),
    });
    assert.equal(response.status, 200);
    const text = notice(email);
    assert.match(text, /Firefox 133 on Ubuntu/);
    assert.match(text, new RegExp(new Date(clock).toISOString().slice(0, 10)));
    assert.match(text, /approximately: FRscript/, 'the place header is shown, stripped of markup');
    assert.ok(linkOf(email).href.startsWith(`${service.url}/devices/not-me?t=`));
  });

  it('opening the link changes nothing; its button revokes exactly that device, once', async () => {
    const email = uniqueEmail('notice');
    const keep = await register(email);
    const lost = await register(email);
    const token = tokenOf(email);
    const page = await open(token);
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Firefox 133 on Ubuntu/);
    assert.match(html, /<form method="post" action="\/devices\/not-me">/);
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
    assert.equal(page.headers.get('set-cookie'), null, 'nothing signs anyone in');
    assert.ok(await trusted(lost, email), 'a GET (mail scanner) changed nothing');

    const first = await press(token);
    assert.equal(first.status, 200);
    assert.match(await first.text(), /signed out/);
    assert.equal(await trusted(lost, email), false, 'the device named by the link is revoked');
    assert.ok(await trusted(keep, email), 'the other device is untouched');
    const second = await press(token);
    assert.equal(second.status, 409, 'the link works once');
  });

  it("is served under the hosted pages' policy: their CSP (no inline style) and X-Frame-Options, whatever the answer", async () => {
    // The hosted pages' own headers, from the sign-in page's refusal (an expired request).
    const hosted = await fetch(`${service.url}/signin?request=none`);
    assert.equal(hosted.status, 400);
    const policy = ['content-security-policy', 'x-frame-options'].map((name) => hosted.headers.get(name));
    assert.doesNotMatch(policy[0] ?? '', /unsafe-inline/);
    assert.equal(policy[1], 'DENY');
    const email = uniqueEmail('notice');
    await register(email);
    const token = tokenOf(email);
    const answers = [await open(token), await open(`${token}x`), await press(token), await press(token)];
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 400, 200, 409],
    );
    for (const answer of answers) {
      assert.deepEqual(
        ['content-security-policy', 'x-frame-options'].map((name) => answer.headers.get(name)),
        policy,
        `${answer.status}: the hosted pages' headers`,
      );
      const html = await answer.text();
      assert.doesNotMatch(html, /<style|style=/, 'no inline style for the CSP to allow');
      assert.match(html, /<link rel="stylesheet" href="\/signin\/signin.css">/);
    }
  });

  it('revokes once when the button is pressed many times at once (single use under concurrency)', async () => {
    const email = uniqueEmail('notice');
    await register(email);
    const token = tokenOf(email);
    const statuses = (await Promise.all(Array.from({ length: 10 }, () => press(token)))).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, ...Array(9).fill(409)]);
  });

  it('refuses an expired link', async () => {
    const email = uniqueEmail('notice');
    const device = await register(email);
    const token = tokenOf(email);
    clock += DEVICE_NOTICE_LINK_TTL_SECONDS * 1000;
    assert.equal((await open(token)).status, 410);
    assert.equal((await press(token)).status, 410);
    clock -= DEVICE_NOTICE_LINK_TTL_SECONDS * 1000;
    assert.ok(await trusted(device, email));
  });

  it("refuses a tampered link, and one pointed at another user's device", async () => {
    const victim = uniqueEmail('victim');
    const attacker = uniqueEmail('attacker');
    const v = await register(victim);
    await register(attacker);
    const token = tokenOf(attacker);
    const [, expiry, nonce, mac] = token.split('.');
    const flip = (s: string) => (s.endsWith('A') ? `${s.slice(0, -1)}B` : `${s.slice(0, -1)}A`);
    const forged = [
      `${v.deviceId}.${expiry}.${nonce}.${mac}`, // the attacker's signature on the victim's device
      `${v.deviceId}.${(Number.parseInt(expiry as string, 36) + 1e9).toString(36)}.${nonce}.${mac}`,
      `${token.split('.')[0]}.${expiry}.${nonce}.${flip(mac as string)}`,
      `${token}.extra`,
      'dev_x.1.2.3',
      '',
    ];
    for (const t of forged) {
      assert.equal((await press(t)).status, 400, `forged ${t.slice(0, 40)}`);
    }
    assert.equal((await press('x'.repeat(5000))).status, 400);
    assert.ok(await trusted(v, victim), "the victim's device is untouched");
    const list = await service.post('/v1/devices/list', {
      userid: victim,
      cryptoVersion: 'v1',
      deviceProof: await deviceProof(service, v, victim, DeviceOps.list),
    });
    assert.equal(list.body.devices.length, 1);
  });
});
