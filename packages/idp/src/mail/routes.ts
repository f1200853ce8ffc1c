import { createHash } from 'node:crypto';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import { escapeHtml, sendHtml } from '../http/page.js';
import type { SmsOutboxStore } from '../sms/outbox-store.js';
import type { MailboxStore } from './mailbox-store.js';

const DEV_LIST_LIMIT = 50;

const isLoopback = (address: string | undefined) =>
  address !== undefined && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));

/** Headers a proxy adds: a forwarded request comes from elsewhere, even when the proxy runs on this machine. */
const FORWARDING_HEADERS = ['forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto', 'x-real-ip', 'via'];
/** A loopback Host: a page on another name that resolves here (DNS rebinding) cannot read the codes. */
const LOOPBACK_HOST = /^(?:localhost|127(?:\.\d{1,3}){3}|\[::1\])(?::\d{1,5})?$/i;

/** A request this machine made to this process directly: loopback peer, loopback Host, no proxy in between. */
export function isLocalRequest(request: FastifyRequest): boolean {
  return (
    isLoopback(request.socket.remoteAddress) &&
    LOOPBACK_HOST.test(request.headers.host ?? '') &&
    FORWARDING_HEADERS.every((name) => request.headers[name] === undefined)
  );
}

/** Left out of the OpenAPI document: development only, never served in production (docs/protocol.md describes them). */
const DEV_ONLY = { hide: true };

const STYLE =
  'body{font-family:system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}article{border:1px solid #ddd;border-radius:8px;padding:0 1rem;margin:1rem 0}.meta{color:#555;font-size:.9rem}pre{white-space:pre-wrap;font-size:1rem}';
/** Nothing runs, nothing loads, nothing frames the page: only its own inline style, by hash. */
const PAGE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

/**
 * The development mailbox and SMS outbox: every live code. Registered only with --dev-inbox
 * (refused in production) while mail or SMS stays on this machine, and served only to
 * requests this machine makes directly, never to one a proxy forwards.
 */
export const devMailRoutes: FastifyPluginAsync<{ mailbox: MailboxStore; smsOutbox: SmsOutboxStore }> = async (
  app,
  { mailbox, smsOutbox },
) => {
  // They show every OTP: only to this machine, even when the service listens on other interfaces.
  app.addHook('onRequest', async (request, reply) => {
    if (!isLocalRequest(request)) return reply.code(404).send({ code: 'ERR_NOT_FOUND', message: 'No such endpoint.' });
    reply.header('cache-control', 'no-store');
  });
  // JSON: the same array `service-idp sms --json` prints.
  app.get(Paths.devSms, { schema: DEV_ONLY }, async () => smsOutbox.list(DEV_LIST_LIMIT));
  app.get(Paths.devMail, { schema: DEV_ONLY }, async (request, reply) => {
    const [messages, sms] = await Promise.all([mailbox.list(DEV_LIST_LIMIT), smsOutbox.list(DEV_LIST_LIMIT)]);
    // JSON: the same array `service-idp mail --json` prints.
    if (request.headers.accept?.includes('application/json')) return messages;
    const mailItems = messages
      .map(
        (m) =>
          `<article><h3>${escapeHtml(m.subject)}</h3><p class="meta">to ${escapeHtml(m.to)} · ${new Date(m.createdAt).toISOString()}</p><pre>${escapeHtml(m.text)}</pre></article>`,
      )
      .join('\n');
    const smsItems = sms
      .map(
        (m) =>
          `<article><p class="meta">to ${escapeHtml(m.to)} · ${new Date(m.createdAt).toISOString()}</p><pre>${escapeHtml(m.body)}</pre></article>`,
      )
      .join('\n');
    return sendHtml(
      reply,
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Development mailbox</title><style>${STYLE}</style></head>
<body><h1>Development mailbox</h1><p>What the service would have sent, newest first. Configure <code>SMTP_URL</code> and <code>SMS_TRANSPORT</code> to send for real.</p>
<h2>Mail</h2>${mailItems || '<p>No mail here.</p>'}
<h2>SMS</h2>${smsItems || '<p>No SMS here.</p>'}</body></html>`,
      { csp: PAGE_CSP },
    );
  });
};
