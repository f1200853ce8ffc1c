/**
 * Attack: bots sign up with throwaway addresses of disposable mail services, or use an internal
 * application's sign-in to mail codes to addresses outside its organisation (issue 41). The
 * operator may refuse disposable domains (SERVICE_IDP_REFUSE_DISPOSABLE_MAIL) and give an
 * application its allowed mail domains; both are checked before any mail is sent, counted or
 * stored, and read the address alone, so the answer says nothing of whether an account exists.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config.js';
import { startSmtp, startTestService, type TestService } from '../support/helpers.js';

type Smtp = Awaited<ReturnType<typeof startSmtp>>;

let next = 0;
/** A fresh local part at `domain`, so each test's addresses are its own. */
const at = (domain: string) => `user${Date.now()}.${++next}@${domain}`;

const ask = (service: TestService, email: string) => service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' });

/** What the SMTP server received for `email`: a refused address must have got nothing. */
const mailsTo = (smtp: Smtp, email: string) =>
  smtp.inbox.filter((message) => message.to.some((to) => to.toLowerCase() === email.toLowerCase())).length;

/** The SMTP server has the code for `email` (the request awaits the delivery). */
function assertMailed(smtp: Smtp, email: string) {
  assert.equal(mailsTo(smtp, email), 1, `one code mailed to ${email}`);
}

async function withSmtpService(env: Record<string, string>) {
  const smtp = await startSmtp();
  const service = await startTestService({ env: { SMTP_URL: `smtp://127.0.0.1:${smtp.port}`, ...env } });
  return {
    smtp,
    service,
    async close() {
      await service.close();
      await new Promise<void>((resolve) => smtp.server.close(() => resolve()));
    },
  };
}

const sendCounters = async (service: TestService) =>
  (await service.ctx.db.selectFrom('rate_counters').select(['key', 'count']).where('key', 'like', 'send:%').execute())
    .map((row) => `${row.key}=${row.count}`)
    .sort();

describe('disposable mail domains', () => {
  it('SERVICE_IDP_REFUSE_DISPOSABLE_MAIL takes true/false (a file gives 1/0) and refuses anything else', () => {
    assert.equal(loadConfig({}, {}).sendRules.refuseDisposableMail, false);
    assert.equal(loadConfig({}, { SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: 'true' }).sendRules.refuseDisposableMail, true);
    assert.equal(loadConfig({}, { SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: '1' }).sendRules.refuseDisposableMail, true);
    assert.equal(loadConfig({}, { SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: 'false' }).sendRules.refuseDisposableMail, false);
    assert.throws(() => loadConfig({}, { SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: 'yes' }), /SERVICE_IDP_REFUSE_DISPOSABLE_MAIL/);
  });

  describe('turned on', () => {
    let on: Awaited<ReturnType<typeof withSmtpService>>;
    before(async () => {
      on = await withSmtpService({ SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: 'true' });
    });
    after(() => on.close());

    it('a disposable address is refused when on: 400 ERR_EMAIL_INVALID, no mail sent, nothing counted or stored', async () => {
      const before = await sendCounters(on.service);
      for (const domain of ['mailinator.com', 'YopMail.com']) {
        const email = at(domain);
        const refused = await ask(on.service, email);
        assert.equal(refused.status, 400, JSON.stringify(refused.body));
        assert.equal(refused.body.code, 'ERR_EMAIL_INVALID');
        assert.match(refused.body.message, /disposable mail/);
        assert.equal(mailsTo(on.smtp, email), 0, 'the SMTP server got nothing');
      }
      assert.deepEqual(await sendCounters(on.service), before, 'no send counter moved');
      const pending = await on.service.ctx.db.selectFrom('registrations').select('id').execute();
      assert.equal(pending.length, 0, 'no sign-in was stored');
    });

    it('an ordinary address still gets its code', async () => {
      const email = at('example.com');
      assert.equal((await ask(on.service, email)).status, 200);
      assertMailed(on.smtp, email);
    });
  });

  it('a disposable address is accepted when off (the default)', async () => {
    const off = await withSmtpService({});
    try {
      const email = at('mailinator.com');
      const answer = await ask(off.service, email);
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assertMailed(off.smtp, email);
    } finally {
      await off.close();
    }
  });
});

describe("an application's allowed mail domains", () => {
  let running: Awaited<ReturnType<typeof withSmtpService>>;
  let known: string;
  before(async () => {
    running = await withSmtpService({});
    // An account outside the domain that will be allowed, made before the rule.
    known = at('outside.test');
    const asked = await ask(running.service, known);
    assert.equal(asked.status, 200);
    const mail = running.smtp.inbox.find((message) => message.to.includes(known));
    const otp = mail?.raw.match(/\b(\d{6})\b/)?.[1];
    const verified = await running.service.post('/v1/email-otp/verify', { userid: known, deviceToken: asked.body.deviceToken, otp });
    assert.equal(verified.status, 200, `the account exists: ${JSON.stringify(verified.body)}`);
    await running.service.ctx.clients.setSendRules(running.service.clientId, { mailDomains: ['corp.test'] });
  });
  after(() => running.close());

  it('an address outside the app allowed domains is refused with no mail sent (the SMTP server got nothing)', async () => {
    const email = at('outside.test');
    const refused = await ask(running.service, email);
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'ERR_EMAIL_INVALID');
    assert.match(refused.body.message, /its own organisation/);
    assert.equal(mailsTo(running.smtp, email), 0);
    // A subdomain is another domain: listed on its own or refused.
    const sub = at('eu.corp.test');
    assert.equal((await ask(running.service, sub)).status, 400);
    assert.equal(mailsTo(running.smtp, sub), 0);
    const inside = at('Corp.Test');
    assert.equal((await ask(running.service, inside)).status, 200, 'an allowed domain, in any case, gets its code');
    assertMailed(running.smtp, inside);
  });

  it('no enumeration: a known and an unknown address outside the domains get the same answer, and neither a mail', async () => {
    const mailedBefore = mailsTo(running.smtp, known);
    const fromKnown = await ask(running.service, known);
    const fromUnknown = await ask(running.service, at('outside.test'));
    assert.equal(fromKnown.status, fromUnknown.status);
    assert.deepEqual(fromKnown.body, fromUnknown.body);
    assert.equal(mailsTo(running.smtp, known), mailedBefore, 'the known account got no new mail');
  });

  it("one app's domain rule does not hold another app's users back", async () => {
    const origin = 'http://open.test:3000';
    const keys = await running.service.ctx.clients.create({ name: 'Open App', origins: [origin] });
    const email = at('outside.test');
    const response = await fetch(`${running.service.url}/v1/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, 'x-service-key': keys.publishableKey },
      body: JSON.stringify({ userid: email, cryptoVersion: 'v1' }),
    });
    assert.equal(response.status, 200);
    assertMailed(running.smtp, email);
  });
});
