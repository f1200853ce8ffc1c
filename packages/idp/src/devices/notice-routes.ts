import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import { Paths } from 'service-protocol';
import { Type } from 'typebox';
import { escapeHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { DeviceNotices } from './notice.js';
import { defaultDeviceName } from './user-agent.js';

const Token = Type.Object({ t: Type.String({ maxLength: 200 }) }, { additionalProperties: false });

const REFUSED = {
  invalid: [400, 'This link is not valid. Use the link from the email exactly as it was sent.'],
  expired: [410, 'This link has expired. Revoke the device from your account page instead.'],
  used: [409, 'This link was already used.'],
} as const;

const PAGE = 'text/html';
/**
 * Every answer is a page, except a request the schema refuses (no `t`; for the POST also a body
 * too large or of another media type), which is `{ code, message }` like everywhere else.
 */
const noticeResponses = (ok: string, ...bodyErrors: (413 | 415)[]) => ({
  200: rawResponse(PAGE, ok),
  400: {
    description: `${REFUSED.invalid[1]} (page), or a malformed request (JSON)`,
    content: { [PAGE]: { schema: { type: 'string' } }, 'application/json': { schema: errorResponses(400)[400] } },
  },
  409: rawResponse(PAGE, REFUSED.used[1]),
  410: rawResponse(PAGE, REFUSED.expired[1]),
  ...errorResponses(...bodyErrors, ...SERVER_ERRORS),
});

const ShowSchema = { querystring: Token, response: noticeResponses('names the device, with a button that signs it out') };
const RevokeSchema = { body: Token, response: noticeResponses('the device is signed out', 413, 415) };

const page = (reply: FastifyReply, status: number, body: string) => sendPage(reply, status, 'Device sign-in', body);

/** GET /devices/not-me names the device; only its POST button revokes it. */
export const deviceNoticeRoutes: FastifyPluginAsyncTypebox<{ notices: DeviceNotices }> = async (app, { notices }) => {
  app.get(Paths.deviceNotice, { schema: ShowSchema }, async (request, reply) => {
    const checked = await notices.check(request.query.t);
    if (!checked.ok) return page(reply, REFUSED[checked.reason][0], `<p>${REFUSED[checked.reason][1]}</p>`);
    const { device } = checked;
    const name = escapeHtml(device.name ?? defaultDeviceName(device.browser, device.os));
    const what = `<p>A new device signed in to <strong>${escapeHtml(checked.clientName)}</strong>: <strong>${name}</strong>, on ${new Date(device.createdAt).toUTCString()}.</p>`;
    if (device.removedAt !== null) return page(reply, 200, `${what}<p>This device is already signed out.</p>`);
    return page(
      reply,
      200,
      `${what}<p>If this was not you, sign this device out. It will need a code from your email to sign in again.</p>` +
        `<form method="post" action="${Paths.deviceNotice}"><input type="hidden" name="t" value="${escapeHtml(request.query.t)}">` +
        `<button type="submit">Sign this device out</button></form>`,
    );
  });

  app.post(Paths.deviceNotice, { schema: RevokeSchema }, async (request, reply) => {
    const outcome = await notices.revoke(request.body.t);
    if (outcome !== 'revoked') return page(reply, REFUSED[outcome][0], `<p>${REFUSED[outcome][1]}</p>`);
    return page(
      reply,
      200,
      '<p>The device is signed out. If you did not sign in yourself, someone knows how to read your email: secure your email account.</p>',
    );
  });
};
