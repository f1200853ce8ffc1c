/**
 * Attack: with the operator's CAPTCHA in place of the proof of work (SERVICE_IDP_SEND_CHALLENGE=
 * turnstile or hcaptcha, issue 41), a bot tries to get codes sent without a fresh token of its
 * own: a token refused by the provider, a token solved on another site (hostname) or for another
 * endpoint (action), one token replayed, or the provider made slow or unreachable so the check
 * is skipped. Each is refused and nothing is sent; a slow provider fails closed. The secret
 * never reaches the logs, and the hosted page's CSP lets the widget in only when configured.
 *
 * The provider is a real local HTTP server that plays Turnstile's and hCaptcha's siteverify
 * (form POST of secret, response, remoteip; JSON answer with success, hostname, action). It
 * does NOT enforce single use itself, so the replay test shows the service's own refusal.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { IDBFactory } from 'fake-indexeddb';
import { CHALLENGE_SOLUTION_HEADER } from 'service-protocol';
import { ServiceClient } from 'service-web';
import { PAGE_CSP } from '../../src/http/page.js';
import { APP_ORIGIN, freePort, startTestService, type TestService, uniqueEmail } from '../support/helpers.js';
import { authorize, RP_CALLBACK, registerApp } from '../support/oidc-helpers.js';

const SECRET = 'captcha-secret-0x4AAAAAAA-never-logged';
const SITE_KEY = '0x4AAAAAAAtestsitekey';
/** The test app's page: what the provider says the token was solved on. */
const APP_HOSTNAME = new URL(APP_ORIGIN).hostname;

/** What the local provider answers for a token: its verdict, or `hang` (never answers). */
type Verdict = { success: boolean; hostname?: string; action?: string; 'error-codes'?: string[] } | 'hang';

/** A local siteverify: answers each token as `verdicts` says and records each call's form. */
async function startProvider() {
  const verdicts = new Map<string, Verdict>();
  const calls: Array<Record<string, string>> = [];
  const hanging = new Set<ServerResponse>();
  const server: Server = createServer(async (request: IncomingMessage, response: ServerResponse) => {
    let body = '';
    for await (const chunk of request) body += chunk;
    const form = Object.fromEntries(new URLSearchParams(body));
    calls.push(form);
    const verdict =
      form.secret === SECRET ? verdicts.get(form.response ?? '') : { success: false, 'error-codes': ['invalid-input-secret'] };
    if (verdict === 'hang') {
      hanging.add(response);
      return;
    }
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify(verdict ?? { success: false, 'error-codes': ['invalid-input-response'] }));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${port}/siteverify`,
    verdicts,
    calls,
    close: () => {
      for (const response of hanging) response.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Everything the service logs, as text. */
function logCollector() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { stream, text: () => lines.join('') };
}

let next = 0;
/** Each test its own client address (through the trusted proxy), so per-address thresholds do not leak between tests. */
const freshIp = () => `10.41.${++next}.7`;

describe('the send challenge as a CAPTCHA', () => {
  for (const kind of ['turnstile', 'hcaptcha'] as const) {
    describe(kind, () => {
      let provider: Awaited<ReturnType<typeof startProvider>>;
      let service: TestService;
      const log = logCollector();
      before(async () => {
        provider = await startProvider();
        service = await startTestService({
          env: {
            SERVICE_IDP_TRUST_PROXY: '127.0.0.1',
            // One code an hour per address without a challenge.
            SERVICE_IDP_CHALLENGE_PER_IP: '1/hour',
            SERVICE_IDP_SEND_CHALLENGE: kind,
            SERVICE_IDP_CAPTCHA_SITE_KEY: SITE_KEY,
            SERVICE_IDP_CAPTCHA_SECRET: SECRET,
            SERVICE_IDP_CAPTCHA_VERIFY_URL: provider.url,
            SERVICE_IDP_CAPTCHA_SCRIPT_URL: 'http://127.0.0.1:9/widget.js',
            SERVICE_IDP_CAPTCHA_TIMEOUT_MS: '300',
          },
          logStream: log.stream,
        });
      });
      after(async () => {
        await service.close();
        await provider.close();
      });

      const ask = (email: string, ip: string, token?: string) =>
        service.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, APP_ORIGIN, {
          'x-forwarded-for': ip,
          ...(token ? { [CHALLENGE_SOLUTION_HEADER]: token } : {}),
        });
      const mails = async (email: string) => (await service.ctx.mailbox.list(10, email)).length;
      /** The action the service asked for /v1/authenticate, checked by Turnstile only. */
      const action = 'authenticate';
      /** A token the local provider calls a success for the app's page and the action (or the overrides). */
      const token = (overrides: Partial<{ hostname: string; action: string; success: boolean }> = {}) => {
        const value = `tok-${kind}-${++next}-${Math.random().toString(36).slice(2)}`;
        provider.verdicts.set(value, { success: true, hostname: APP_HOSTNAME, ...(kind === 'turnstile' ? { action } : {}), ...overrides });
        return value;
      };
      /** An address past its threshold: the next request is asked the CAPTCHA. */
      async function pastThreshold() {
        const ip = freshIp();
        assert.equal((await ask(uniqueEmail('warm'), ip)).status, 200);
        return { ip, email: uniqueEmail('bot') };
      }

      it('the challenge says which kind, with the site key and action, and nothing about the secret', async () => {
        const { ip, email } = await pastThreshold();
        const answer = await ask(email, ip);
        assert.equal(answer.status, 428, JSON.stringify(answer.body));
        assert.equal(answer.body.code, 'ERR_CHALLENGE_REQUIRED');
        assert.deepEqual(answer.body.challenge, { kind, siteKey: SITE_KEY, action });
        assert.doesNotMatch(JSON.stringify(answer.body), new RegExp(SECRET));
        assert.equal(await mails(email), 0);
      });

      it("a provider's success for this page sends the code; siteverify got the secret, the token and the client's IP", async () => {
        const { ip, email } = await pastThreshold();
        const good = token();
        const answer = await ask(email, ip, good);
        assert.equal(answer.status, 200, JSON.stringify(answer.body));
        assert.equal(await mails(email), 1);
        const call = provider.calls.find((c) => c.response === good);
        assert.equal(call?.secret, SECRET);
        assert.equal(call?.remoteip, ip);
      });

      it("service-web's CHALLENGE_REQUIRED carries the kind, site key and action; the widget's token as challengeSolution sends the code", async () => {
        const ip = freshIp();
        const fromIp: typeof fetch = (input, init) => {
          const headers = new Headers(init?.headers);
          headers.set('x-forwarded-for', ip);
          return service.browserFetch(input, { ...init, headers });
        };
        const client = new ServiceClient({ fetch: fromIp, indexedDB: new IDBFactory() });
        assert.equal((await client.init(service.publishableKey, service.url)).status, 'INITIALIZED');
        assert.equal((await client.authenticate(uniqueEmail('warm'))).status, 'OTP_NEEDED');
        const email = uniqueEmail('app');
        const asked = await client.authenticate(email);
        assert.equal(asked.status, 'CHALLENGE_REQUIRED');
        assert.deepEqual('challenge' in asked && asked.challenge, { kind, siteKey: SITE_KEY, action });
        assert.equal((await client.authenticate(email, { challengeSolution: token() })).status, 'OTP_NEEDED');
        assert.equal(await mails(email), 1);
      });

      it('a token the provider refuses: a fresh challenge, nothing sent', async () => {
        const { ip, email } = await pastThreshold();
        const answer = await ask(email, ip, token({ success: false }));
        assert.equal(answer.status, 428, JSON.stringify(answer.body));
        assert.equal(answer.body.code, 'ERR_CHALLENGE_REQUIRED');
        assert.equal(await mails(email), 0);
      });

      it('a token solved on another hostname (another site with the same site key) is refused', async () => {
        const { ip, email } = await pastThreshold();
        const answer = await ask(email, ip, token({ hostname: 'evil.example' }));
        assert.equal(answer.status, 428, JSON.stringify(answer.body));
        assert.equal(await mails(email), 0);
      });

      if (kind === 'turnstile') {
        it('a token solved for another action (another endpoint) is refused', async () => {
          const { ip, email } = await pastThreshold();
          const answer = await ask(email, ip, token({ action: 'mfa-initiate' }));
          assert.equal(answer.status, 428, JSON.stringify(answer.body));
          assert.equal(await mails(email), 0);
        });
      }

      it('a replayed token is refused even though this provider would accept it again: one token, one code', async () => {
        const { ip, email } = await pastThreshold();
        const once = token();
        assert.equal((await ask(email, ip, once)).status, 200);
        const replay = await ask(uniqueEmail('victim'), ip, once);
        assert.equal(replay.status, 428, JSON.stringify(replay.body));
        const twice = provider.calls.filter((c) => c.response === once).length;
        assert.equal(twice, 2, 'the provider said yes both times; the service refused the second');
        assert.equal(await mails(email), 1);
      });

      it('a provider that does not answer in time fails closed: 503 ERR_UNAVAILABLE, nothing sent', async () => {
        const { ip, email } = await pastThreshold();
        const slow = `slow-${kind}`;
        provider.verdicts.set(slow, 'hang');
        const answer = await ask(email, ip, slow);
        assert.equal(answer.status, 503, JSON.stringify(answer.body));
        assert.equal(answer.body.code, 'ERR_UNAVAILABLE');
        assert.match(String(answer.body.message), /could not be checked/);
        assert.equal(await mails(email), 0);
      });

      it('an unreachable provider fails closed too', async () => {
        const { ip, email } = await pastThreshold();
        const down = await startTestService({
          env: {
            SERVICE_IDP_TRUST_PROXY: '127.0.0.1',
            SERVICE_IDP_CHALLENGE_PER_IP: '1/hour',
            SERVICE_IDP_SEND_CHALLENGE: kind,
            SERVICE_IDP_CAPTCHA_SITE_KEY: SITE_KEY,
            SERVICE_IDP_CAPTCHA_SECRET: SECRET,
            SERVICE_IDP_CAPTCHA_VERIFY_URL: `http://127.0.0.1:${await freePort()}/siteverify`,
          },
          logStream: log.stream,
        });
        try {
          await down.post('/v1/authenticate', { userid: uniqueEmail('warm'), cryptoVersion: 'v1' }, APP_ORIGIN, { 'x-forwarded-for': ip });
          const answer = await down.post('/v1/authenticate', { userid: email, cryptoVersion: 'v1' }, APP_ORIGIN, {
            'x-forwarded-for': ip,
            [CHALLENGE_SOLUTION_HEADER]: token(),
          });
          assert.equal(answer.status, 503, JSON.stringify(answer.body));
          assert.equal((await down.ctx.mailbox.list(10, email)).length, 0);
        } finally {
          await down.close();
        }
      });

      it('the secret is never logged (after successes, refusals and timeouts above)', () => {
        const text = log.text();
        assert.match(text, /siteverify/, 'the failures were logged');
        assert.ok(!text.includes(SECRET), 'the secret is not in the log');
      });

      it("the hosted page's CSP lets in the widget's origin, and the page names its script", async () => {
        const rp = await registerApp(service, `RP ${kind}`);
        const start = await authorize(service, {
          response_type: 'code',
          client_id: rp.clientId,
          redirect_uri: RP_CALLBACK,
          scope: 'openid',
        });
        const page = await fetch(new URL(start.location ?? '', service.url));
        assert.equal(page.status, 200);
        const csp = page.headers.get('content-security-policy') ?? '';
        assert.match(csp, /script-src 'self' http:\/\/127\.0\.0\.1:9;/);
        assert.match(csp, /frame-src http:\/\/127\.0\.0\.1:9$/);
        assert.match(csp, /frame-ancestors 'none'/);
        assert.match(await page.text(), /data-captcha-script="http:\/\/127\.0\.0\.1:9\/widget\.js"/);
      });
    });
  }

  it("without a CAPTCHA the hosted page's CSP is unchanged and names no widget script", async () => {
    const service = await startTestService();
    try {
      const rp = await registerApp(service, 'RP');
      const start = await authorize(service, { response_type: 'code', client_id: rp.clientId, redirect_uri: RP_CALLBACK, scope: 'openid' });
      const page = await fetch(new URL(start.location ?? '', service.url));
      assert.equal(page.headers.get('content-security-policy'), PAGE_CSP);
      assert.match(await page.text(), /data-captcha-script=""/);
    } finally {
      await service.close();
    }
  });
});
