import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Paths } from 'service-protocol';
import type { Sealer } from '../crypto/seal.js';
import { randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, DEVICE_CODE_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { PageLanguages } from '../i18n/page-language.js';
import type { ConsentItem } from '../oidc/consent.js';
import { FirstPartyCallbackQuery, type FirstPartySignIn } from '../oidc/first-party-sign-in.js';
import { type DeviceAuthorizations, formatUserCode } from './service.js';
import type { DeviceSignIn } from './store.js';

/** Where the verification page's sign-in comes back (the built-in client's redirect URI). */
export const DEVICE_CALLBACK_PATH = `${Paths.deviceVerification}/callback`;
/** The confirmation screen: what the device asks, and Allow or Deny. */
export const DEVICE_CONFIRM_PATH = `${Paths.deviceVerification}/confirm`;

/** What the verification cookie holds (sealed): the request the user's code named, the code, and once signed in, who. */
interface Verification {
  id: string;
  code: string;
  exp: number;
  signIn?: DeviceSignIn & { email: string };
}

const HTML = 'text/html';
const PageSchema = (description: string) => ({
  response: {
    200: rawResponse(HTML, description),
    400: rawResponse(HTML, 'the request expired or the form was refused'),
    ...errorResponses(...SERVER_ERRORS),
  },
});

/**
 * The verification page of the device grant (RFC 8628 3.3; docs/protocol.md "Device authorization
 * grant"), server-rendered like the consent page, no script: the user enters (or finds prefilled)
 * the code, signs in through the hosted pages as the built-in client (or passes at once on a
 * live session), then sees who asks what, compares the code, and answers. A GET never approves;
 * the answer is a same-origin POST carrying a token bound to this browser's verification cookie.
 */
export const deviceVerificationRoutes: FastifyPluginAsyncTypebox<{
  devices: DeviceAuthorizations;
  signIn: FirstPartySignIn;
  sealer: Sealer;
  hash: SecretHasher;
  issuer: string;
  now: () => number;
  languages: PageLanguages;
  brandOf: (client: { id: string; name: string }) => Promise<{ name: string; logoPath: string | null; stylesheetPath: string | null }>;
}> = async (app, { devices, signIn, sealer, hash, issuer, now, languages, brandOf }) => {
  const { locales } = languages;
  const origin = new URL(issuer).origin;
  const secure = issuer.startsWith('https:');
  const prefix = secure ? '__Host-' : '';
  const verificationCookie = `${prefix}service_device`;
  const loginCookie = `${prefix}service_device_login`;
  const browserCookie = `${prefix}service_device_browser`;
  const cookie = (name: string, value: string, maxAgeSeconds: number) =>
    `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const csrfOf = (sealed: string) => hash('device-verification-csrf', sealed);
  await signIn.ensureClient();

  const opened = (request: FastifyRequest): { sealed: string; verification: Verification } | undefined => {
    const sealed = parseCookies(request.headers.cookie).get(verificationCookie);
    if (!sealed || sealed.length > 4000) return undefined;
    try {
      const verification = JSON.parse(sealer.open(sealed)) as Verification;
      return verification.exp > now() ? { sealed, verification } : undefined;
    } catch {
      return undefined;
    }
  };
  const seal = (verification: Verification) => sealer.seal(JSON.stringify(verification));

  const render = async (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    title: MessageKey,
    main: (t: (key: MessageKey, values?: Record<string, string>) => string, locale: string) => string,
    values: Record<string, string> = {},
  ) => {
    const language = await languages.of(request, { returnTo: request.method === 'GET' ? request.url : Paths.deviceVerification });
    const t = (key: MessageKey, more?: Record<string, string>) => escapeHtml(locales.text(language.locale, key, more));
    return sendPage(reply, status, locales.text(language.locale, title, values), main(t, language.locale), language);
  };
  const message = (request: FastifyRequest, reply: FastifyReply, status: number, title: MessageKey, help: MessageKey) =>
    render(request, reply, status, title, (t) => `<h1>${t(title)}</h1><p>${t(help)}</p>`);

  /** The code form, prefilled with what the link or the user gave; `error` says why the last try failed. */
  const entryPage = (request: FastifyRequest, reply: FastifyReply, status: number, typed: string, error?: MessageKey) =>
    render(request, reply, status, 'page.device.title', (t) => {
      const alert = error ? `<p role="alert" id="device-error">${t(error)}</p>` : '';
      return (
        `<h1>${t('page.device.title')}</h1><p>${t('page.device.enter')}</p>${alert}` +
        `<form method="post" action="${Paths.deviceVerification}"><label for="user-code">${t('page.device.codeLabel')}</label>` +
        `<input id="user-code" type="text" name="user_code" value="${escapeHtml(typed)}" autocomplete="off" autocapitalize="characters" spellcheck="false" maxlength="20" required${error ? ' aria-describedby="device-error" aria-invalid="true"' : ''}>` +
        `<button type="submit">${t('page.device.continue')}</button></form>`
      );
    });

  // A browser's own id, for counting its code tries beside its address's.
  const browserOf = (request: FastifyRequest, reply: FastifyReply) => {
    const known = parseCookies(request.headers.cookie).get(browserCookie);
    if (known && known.length <= 100) return known;
    const fresh = randomToken('');
    reply.header('set-cookie', cookie(browserCookie, fresh, 24 * 60 * 60));
    return fresh;
  };

  app.get(
    Paths.deviceVerification,
    { schema: PageSchema('the code form (prefilled from user_code: it never approves anything)') },
    async (request, reply) => {
      browserOf(request, reply);
      const sent = (request.query as Record<string, unknown>).user_code;
      return entryPage(request, reply, 200, typeof sent === 'string' ? sent.slice(0, 20) : '');
    },
  );

  app.post(
    Paths.deviceVerification,
    {
      schema: {
        response: {
          303: { description: 'to the sign-in (the hosted pages, or at once with a live session), then the confirmation' },
          400: rawResponse(HTML, 'the form again: the code is not valid or has expired, or a cross-origin post'),
          429: rawResponse(HTML, 'the form again: too many codes tried from this browser or address'),
          ...errorResponses(...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const form = (request.body ?? {}) as Record<string, unknown>;
      const typed = typeof form.user_code === 'string' ? form.user_code.slice(0, 40) : '';
      // CSRF: only our own page posts here (a form elsewhere cannot make this browser enter a code).
      if (request.headers.origin !== origin) return entryPage(request, reply, 400, '', 'page.device.invalid');
      const browser = browserOf(request, reply);
      let found: Awaited<ReturnType<DeviceAuthorizations['lookup']>>;
      try {
        found = await devices.lookup(typed, [
          `device-user-code:ip:${request.ip}`,
          `device-user-code:browser:${hash('device-browser', browser)}`,
        ]);
      } catch (error) {
        if (error instanceof ServiceError && error.code === 'ERR_RATE_LIMITED') {
          if (error.details?.retryAfter) reply.header('retry-after', String(error.details.retryAfter));
          return entryPage(request, reply, 429, typed, 'page.device.tooMany');
        }
        throw error;
      }
      if (!found) return entryPage(request, reply, 400, typed, 'page.device.invalid');
      const verification: Verification = { id: found.idHash, code: found.userCode, exp: now() + DEVICE_CODE_TTL_SECONDS * 1000 };
      const { location, login } = signIn.begin();
      reply.header('set-cookie', [
        ...[reply.getHeader('set-cookie') ?? []].flat().map(String),
        cookie(verificationCookie, seal(verification), DEVICE_CODE_TTL_SECONDS),
        cookie(loginCookie, login, AUTHORIZATION_REQUEST_TTL_SECONDS),
      ]);
      return reply.code(303).header('location', location).send();
    },
  );

  app.get(
    DEVICE_CALLBACK_PATH,
    {
      schema: {
        querystring: FirstPartyCallbackQuery,
        response: {
          303: { description: 'to the confirmation page, the sign-in recorded in the verification cookie' },
          400: rawResponse(HTML, 'the sign-in failed, expired or was not started in this browser'),
          ...errorResponses(...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const current = opened(request);
      const { code, state, iss } = request.query;
      if (!current || !code || !state) return message(request, reply, 400, 'page.device.expired', 'page.device.expiredHelp');
      const redeemed = await signIn
        .redeem({ code, state, iss, login: parseCookies(request.headers.cookie).get(loginCookie) })
        .catch((error: unknown) => {
          if (error instanceof ServiceError && error.code === 'ERR_FORBIDDEN') return undefined;
          throw error;
        });
      if (!redeemed) return message(request, reply, 400, 'page.device.expired', 'page.device.expiredHelp');
      const { user, signedIn } = redeemed;
      const verification: Verification = {
        ...current.verification,
        signIn: {
          userId: user.id,
          email: user.email,
          deviceId: signedIn.deviceId,
          amr: signedIn.amr,
          authTime: signedIn.authTime,
          sid: signedIn.sid,
        },
      };
      const remaining = Math.max(1, Math.floor((verification.exp - now()) / 1000));
      reply.header('set-cookie', [cookie(verificationCookie, seal(verification), remaining), cookie(loginCookie, '', 0)]);
      return reply.code(303).header('location', DEVICE_CONFIRM_PATH).send();
    },
  );

  app.get(
    DEVICE_CONFIRM_PATH,
    { schema: PageSchema('the confirmation: the code to compare, who asks, what, from where; Allow and Deny') },
    async (request, reply) => {
      const current = opened(request);
      const who = current?.verification.signIn;
      if (!current || !who) return message(request, reply, 400, 'page.device.expired', 'page.device.expiredHelp');
      const view = await devices.view(current.verification.id);
      if (!view) return message(request, reply, 400, 'page.device.expired', 'page.device.expiredHelp');
      const { pending, client, items } = view;
      const brand = await brandOf(client);
      const app = brand.name;
      return render(
        request,
        reply,
        200,
        'page.device.confirmTitle',
        (t, locale) => {
          const item = (entry: ConsentItem) =>
            entry.kind === 'email'
              ? t('page.consent.email')
              : entry.kind === 'offline'
                ? t('page.consent.offline')
                : t('page.consent.permission', { api: entry.apiName, permission: entry.permission });
          const time = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(
            pending.createdAt,
          );
          const unverified = client.registered ? ` <strong class="unverified">${t('page.device.unverified')}</strong>` : '';
          const declared = pending.deviceName ? `<p class="declared">${t('page.device.declared', { name: pending.deviceName })}</p>` : '';
          return (
            `<h1>${t('page.device.confirmTitle', { app })}${unverified}</h1>` +
            `<p>${t('page.device.compare')}</p><p class="user-code" id="user-code"><strong><code>${escapeHtml(formatUserCode(current.verification.code))}</code></strong></p>` +
            `<p>${t('page.device.signedInAs', { email: who.email })}</p>` +
            `<p>${t('page.device.asks', { app })}</p><ul class="consent">${items.map((entry) => `<li>${item(entry)}</li>`).join('')}</ul>` +
            declared +
            `<p>${t('page.device.requested', { ip: pending.requesterIp, time: `${time} UTC` })}</p>` +
            `<p><small>${t('page.device.warning')}</small></p>` +
            `<form method="post" action="${DEVICE_CONFIRM_PATH}"><input type="hidden" name="csrf" value="${escapeHtml(csrfOf(current.sealed))}">` +
            `<button type="submit" name="decision" value="approve">${t('page.device.approve')}</button> ` +
            `<button type="submit" name="decision" value="deny" class="secondary">${t('page.device.deny')}</button></form>`
          );
        },
        { app },
      );
    },
  );

  app.post(
    DEVICE_CONFIRM_PATH,
    {
      schema: {
        response: {
          200: rawResponse(HTML, 'done: the device is connected, or denied'),
          400: rawResponse(HTML, 'expired, already answered, or the form is not this browser’s (CSRF), or a cross-origin post'),
          ...errorResponses(...SERVER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const expired = () => message(request, reply, 400, 'page.device.expired', 'page.device.expiredHelp');
      // CSRF: our own page only (Origin), then the form's token, a keyed hash of this browser's verification cookie.
      if (request.headers.origin !== origin) return expired();
      const current = opened(request);
      const who = current?.verification.signIn;
      const form = (request.body ?? {}) as Record<string, unknown>;
      const csrf = typeof form.csrf === 'string' ? form.csrf : '';
      const decision = form.decision;
      if (!current || !who || !safeEqual(csrf, csrfOf(current.sealed)) || (decision !== 'approve' && decision !== 'deny')) return expired();
      const { email: _email, ...signedIn } = who;
      const decided = await devices.decide(current.verification.id, signedIn, decision === 'approve');
      reply.header('set-cookie', cookie(verificationCookie, '', 0));
      if (!decided) return expired();
      return decision === 'approve'
        ? message(request, reply, 200, 'page.device.approvedTitle', 'page.device.approvedHelp')
        : message(request, reply, 200, 'page.device.deniedTitle', 'page.device.deniedHelp');
    },
  );
};
