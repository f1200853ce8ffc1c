/**
 * Attack: an identity that is not exactly one mailbox. An address carrying characters a mail
 * library reads as a list, a group or a display name (`victim@x.com,me@evil.test`,
 * `"me@evil.test" <victim@x.com>`, CR LF, control characters) would take the sign-in code to
 * a mailbox other than the identity it proves, the ID token would then assert
 * `email_verified: true` for it, and look-alike spellings of one mailbox
 * (`Victim@X.com`, `victim@ｘ.com`) would each get their own per-recipient send budget.
 *
 * Properties, over hostile strings (fast-check), through the public HTTP surface and a real
 * SMTP server (smtp-server): whatever the service accepts is delivered to exactly its canonical
 * form and nowhere else, in the SMTP envelope and in the To header; whatever it refuses sends
 * nothing. The browser library applies the same grammar (packages/protocol email.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { canonicalEmail, EMAIL_LOCAL_MAX_LENGTH, EMAIL_MAX_LENGTH, isValidEmail } from 'service-protocol';
import { startSmtp, startTestService, type TestService } from '../support/helpers.js';

/** Characters that matter to address parsers, plus look-alikes, invisible and non-ASCII ones. */
const HOSTILE = [
  ...'aAzZ09.-_+@',
  ...',;:<>()[]\\"\' \t\r\n',
  ...'!#$%&*/=?^`{|}~',
  '\u0000',
  '\u0007',
  '\u007f',
  '\u0085',
  '\u00a0',
  '\u00ad',
  '\u200b',
  '\u202e',
  'ü',
  'ß',
  'İ',
  'ｅ',
  '。',
  '＠',
  '\ud800',
];
const hostileText = (maxLength: number) => fc.string({ unit: fc.constantFrom(...HOSTILE), minLength: 1, maxLength });
const label = fc.stringMatching(/^[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,8}[a-zA-Z0-9])?$/);
const plausible = fc
  .tuple(
    fc.stringMatching(/^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]{1,12}(?:\.[A-Za-z0-9+_-]{1,6})?$/),
    fc.array(fc.oneof(label, fc.constantFrom('Bücher', 'straße', 'İstanbul', 'ｅｘａｍｐｌｅ', 'xn--bcher-kva')), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([local, labels]) => `${local}@${[...labels, 'test'].join('.')}`);
/** Hostile strings: random ones, plausible addresses with hostile parts, and list/name injections. */
const hostileAddress = fc.oneof(
  { arbitrary: hostileText(40), weight: 2 },
  { arbitrary: fc.tuple(hostileText(12), hostileText(12)).map(([l, d]) => `${l}@${d}.test`), weight: 2 },
  { arbitrary: fc.tuple(plausible, hostileText(3), plausible).map(([a, sep, b]) => `${a}${sep}${b}`), weight: 2 },
  { arbitrary: fc.tuple(plausible, plausible).map(([a, b]) => `"${a}" <${b}>`), weight: 1 },
  { arbitrary: fc.tuple(plausible, hostileText(2)).map(([a, noise]) => `${noise}${a}`), weight: 1 },
  { arbitrary: plausible, weight: 3 },
);

describe('one identity, one mailbox: the address grammar', () => {
  it('accepts only canonical single mailboxes, and canonicalising is idempotent', () => {
    fc.assert(
      fc.property(hostileAddress, (input) => {
        const email = canonicalEmail(input);
        assert.equal(isValidEmail(input), email !== null);
        if (email === null) return;
        assert.equal(canonicalEmail(email), email, 'canonical form is a fixed point');
        assert.match(email, /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@[a-z0-9-]+(?:\.[a-z0-9-]+)+$/);
        assert.ok(email.length <= EMAIL_MAX_LENGTH && email.indexOf('@') <= EMAIL_LOCAL_MAX_LENGTH);
      }),
      { numRuns: 5000 },
    );
  });

  it('converts internationalised domains to ASCII and folds case, and keeps dots and tags', () => {
    assert.equal(canonicalEmail(' Ann.Lee+News@Bücher.Example '), 'ann.lee+news@xn--bcher-kva.example');
    assert.equal(canonicalEmail('ann@ＥＸＡＭＰＬＥ.com'), 'ann@example.com');
    assert.notEqual(canonicalEmail('a.b@example.com'), canonicalEmail('ab@example.com'));
    for (const refused of [
      'victim@example.com,me@evil.test',
      'victim@example.com;me@evil.test',
      '"me@evil.test" <victim@example.com>',
      'me@evil.test <victim@example.com>',
      '"a b"@example.com',
      'a(comment)@example.com',
      'a@[127.0.0.1]',
      'a@127.0.0.1',
      'victim@example.com\r\nBcc: me@evil.test',
      'vic\u0000tim@example.com',
      'vic\u200btim@example.com',
      'victim@exa\u00admple.com',
      'grüße@example.com',
      `${'a'.repeat(EMAIL_LOCAL_MAX_LENGTH + 1)}@example.com`,
      `a@${`${'b'.repeat(50)}.`.repeat(5)}com`,
    ]) {
      assert.equal(canonicalEmail(refused), null, JSON.stringify(refused));
    }
  });
});

describe('one identity, one mailbox: delivery over real SMTP', () => {
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let service: TestService;
  // Each send runs an hour after the previous one, so the send limits never interfere.
  let skew = 0;
  before(async () => {
    smtp = await startSmtp();
    service = await startTestService({ now: () => Date.now() + skew, env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}` } });
  });
  after(async () => {
    await service.close();
    await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
  });

  const authenticate = (userid: string) => service.post('/v1/authenticate', { userid, cryptoVersion: 'v1' });

  it('delivers what it accepts to exactly that canonical mailbox, and sends nothing for what it refuses', async () => {
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(hostileAddress, async (input) => {
        skew += 3600_000;
        smtp.inbox.length = 0;
        const response = await authenticate(input);
        const email = canonicalEmail(input);
        if (email === null) {
          assert.equal(response.status, 400, JSON.stringify(response.body));
          assert.equal(response.body.code, 'ERR_EMAIL_INVALID');
          assert.equal(smtp.inbox.length, 0, 'nothing was sent');
          return;
        }
        accepted += 1;
        assert.equal(response.status, 200, JSON.stringify(response.body));
        assert.equal(smtp.inbox.length, 1, 'exactly one message');
        const [message] = smtp.inbox;
        // smtp-server shows internationalised domains in Unicode; the To header below is raw.
        assert.deepEqual(message?.to.map(canonicalEmail), [email], 'the SMTP envelope names the identity and only it');
        const headers = message?.raw.split('\r\n\r\n')[0] ?? '';
        assert.deepEqual(headers.match(/^To: .*$/gm), [`To: ${email}`], 'one To header, the bare address (no display name, no list)');
        assert.doesNotMatch(headers, /^(Cc|Bcc):/m);
      }),
      { numRuns: 150 },
    );
    assert.ok(accepted > 10, `enough accepted addresses were exercised (${accepted})`);
  });

  it('the browser library refuses what the service refuses, and sends the canonical form', async () => {
    const device = await service.newDevice();
    for (const refused of ['victim@example.com,me@evil.test', '"x" <victim@example.com>', 'vic\u0000tim@example.com']) {
      assert.equal((await device.authenticate(refused)).status, 'INVALID_EMAIL');
    }
    skew += 3600_000;
    smtp.inbox.length = 0;
    assert.equal((await device.authenticate(' Browser.User@Bücher.Example ')).status, 'OTP_NEEDED');
    assert.deepEqual(
      smtp.inbox.map((m) => m.raw.match(/^To: (.*)$/m)?.[1]),
      ['browser.user@xn--bcher-kva.example'],
    );
  });

  it('gives look-alike spellings of one mailbox one per-recipient send budget', async () => {
    skew += 3600_000;
    assert.equal((await authenticate('Look.Alike@Bücher.example')).status, 200);
    for (const lookAlike of ['look.alike@xn--bcher-kva.example', 'LOOK.ALIKE@BÜCHER.EXAMPLE', ' look.alike@bücher.example\t']) {
      const again = await authenticate(lookAlike);
      assert.equal(again.status, 429, lookAlike);
      assert.equal(again.body.code, 'ERR_RATE_LIMITED');
    }
    assert.deepEqual(
      smtp.inbox.filter((m) => m.to.map(canonicalEmail).includes('look.alike@xn--bcher-kva.example')).length,
      1,
      'one code reached the mailbox',
    );
  });
});

describe('one identity, one mailbox: the mailer refuses anything else', () => {
  it('refuses to send to a recipient that is not one canonical mailbox, before any byte is sent', async () => {
    const smtp = await startSmtp();
    const { createSmtpMailer } = await import('../../src/mail/mailer.js');
    const mailer = createSmtpMailer(`smtp://127.0.0.1:${smtp.port}`, 'login@example.com');
    try {
      for (const to of ['victim@example.com, me@evil.test', 'Victim@Example.com', '"x" <victim@example.com>', 'victim@example.com\r\n']) {
        await assert.rejects(mailer.send({ to, subject: 's', text: 't', html: 'h' }), /not one canonical mailbox/);
      }
      assert.equal(smtp.inbox.length, 0);
      await mailer.send({ to: 'victim@example.com', subject: 's', text: 't', html: 'h' });
      assert.deepEqual(
        smtp.inbox.map((m) => m.to),
        [['victim@example.com']],
      );
    } finally {
      mailer.close();
      await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
    }
  });
});
