import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  AUTHORIZATION_REQUEST_HEADER,
  Paths,
  type SignInCompleteResponse,
  type SignInContinueResponse,
  type SignInPasskeyOptionsResponse,
  type SignInPasskeyResponse,
} from 'service-protocol';
import { Type } from 'typebox';
import { HOSTED_CLIENT_ID } from '../clients/service.js';
import { isNameUnverified } from '../clients/store.js';
import { AUTHORIZATION_REQUEST_TTL_SECONDS, SESSION_ABSOLUTE_LIFETIME_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { Attestation, CreationOptions } from '../factors/passkey/routes.js';
import { parseCookies } from '../http/cookies.js';
import { cspWithCaptcha, cspWithFormTarget, escapeHtml, PAGE_CSP, sendHtml, sendPage, switcherHtml } from '../http/page.js';
import { BODY_ERRORS, errorResponses, rawResponse, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { PageLanguages } from '../i18n/page-language.js';
import { FORM_POST_SCRIPT, FORM_POST_SCRIPT_PATH, responseLocation, sendAuthorizationResponse } from './authorization-response.js';
import { CONSENT_PATH, type ConsentItem } from './consent.js';
import type { DbscService } from './dbsc.js';
import { SIGNED_OUT_SCRIPT, SIGNED_OUT_SCRIPT_PATH } from './frontchannel-logout.js';
import { ORGANIZATION_PICKER_PATH } from './organization-picker.js';
import type { PasskeyOffer } from './passkey-offer.js';
import type { NextPage, OidcService, SignInFinished } from './service.js';
import { sendRenewalPage } from './session-renewal.js';

/** The hosted pages' built files (the private workspace package service-hosted-pages: packages/hosted). */
const PAGE_FILES = ['signin.html', 'signin.css', 'signin.js', 'renew.js', 'account-passkey.js'] as const;

/**
 * One of the hosted pages' built files: the copy the build puts beside this module
 * (dist/oidc/pages/), or in the workspace the package's own dist/.
 */
export function asset(name: (typeof PAGE_FILES)[number]): string {
  const candidates = [fileURLToPath(new URL(`./pages/${name}`, import.meta.url))];
  try {
    candidates.push(join(dirname(createRequire(import.meta.url).resolve('service-hosted-pages/package.json')), 'dist', name));
  } catch {
    // not in the workspace: only the bundled copy can exist
  }
  for (const path of candidates) {
    try {
      return readFileSync(path, 'utf8');
    } catch {}
  }
  throw new Error(`The hosted sign-in page's ${name} is not built (packages/hosted): run npm run build.`);
}

/**
 * The QR encoder of the TOTP enrollment step: `uqr`'s own dependency-free ES module build, as
 * published and locked, served from our origin (no third-party asset, the CSP unchanged); the
 * page imports it only when it shows a QR code.
 */
const qrModule = () => readFileSync(fileURLToPath(import.meta.resolve('uqr')), 'utf8');

const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });
/** The page's session key (oidc/dbsc.ts bindPageKey): the session this answer sets is bound to it. */
const SessionKey = Type.Optional(
  Type.Object({ kty: Type.Literal('EC'), crv: Type.Literal('P-256'), x: Base64Url, y: Base64Url }, { additionalProperties: false }),
);
const CompleteBody = Type.Object(
  {
    request: Type.String({ maxLength: 100 }),
    code: Type.String({ maxLength: 200 }),
    codeVerifier: Type.String({ maxLength: 200 }),
    hold: Type.Optional(
      Type.Boolean({
        description: 'true: redeem the hosted code and hold the sign-in (the page shows recovery codes); /signin/continue finishes it',
      }),
    ),
    sessionKey: SessionKey,
  },
  { additionalProperties: false },
);
const ContinueBody = Type.Object({ request: Type.String({ maxLength: 100 }) }, { additionalProperties: false });
const Redirect = Type.Object({
  location: Type.String({ description: "the app's redirect_uri with its code, state and iss (with form: the redirect_uri alone)" }),
  form: Type.Optional(
    Type.Record(Type.String(), Type.String(), {
      description: 'response_mode=form_post: the fields (code, state, iss) the page posts to location instead of navigating to it',
    }),
  ),
});
// The answers, each exactly the protocol's type of it (hosted.ts), which the hosted pages read.
const CompleteAnswer = wireBody<SignInCompleteResponse>()(
  Type.Union([
    Redirect,
    Type.Object({
      held: Type.Literal(true, { description: 'the sign-in is held: POST /signin/continue' }),
      passkeyOffer: Type.Boolean({
        description: 'the user has no passkey for the hosted pages (and did not sign in with one): the page may offer to add one',
      }),
    }),
  ]),
);
const ContinueAnswer = wireBody<SignInContinueResponse>()(Redirect);
const PasskeyOptionsAnswer = wireBody<SignInPasskeyOptionsResponse>()(Type.Object({ options: CreationOptions }));
const PasskeyAddAnswer = wireBody<SignInPasskeyResponse>()(
  Type.Object({ added: Type.Literal(true), synced: Type.Boolean({ description: 'the passkey is synced (backed up)' }) }),
);

const ConsentPageSchema = {
  response: {
    200: rawResponse('text/html', "the consent page: a third-party app's name and what it asks, with Allow and Deny"),
    400: rawResponse('text/html', 'the sign-in expired, or the request is not this browser’s'),
    ...errorResponses(...SERVER_ERRORS),
  },
};
const OrganizationPageSchema = {
  response: {
    200: rawResponse('text/html', "the organization picker: the user's organizations and their roles there, one button each"),
    400: rawResponse('text/html', 'the sign-in expired, or the request is not this browser’s'),
    ...errorResponses(...SERVER_ERRORS),
  },
};
/** The picker's form (request, csrf, organization), read by the route itself: every refusal is the page, never a JSON error. */
const OrganizationAnswerSchema = {
  response: {
    303: {
      description:
        "to the app's redirect_uri (the code, or error=access_denied for an organization the user is not a member of), or to the hosted sign-in for a second factor the organization requires",
    },
    200: rawResponse('text/html', 'response_mode=form_post: the page that posts the response to the app'),
    400: rawResponse(
      'text/html',
      'the sign-in expired, the form is malformed or not this browser’s or this request’s, or a cross-origin post',
    ),
    ...errorResponses(...SERVER_ERRORS),
  },
};
/** The consent form (request, csrf, decision allow|deny), read by the route itself: every refusal is the page, never a JSON error. */
const ConsentAnswerSchema = {
  response: {
    303: { description: "to the app's redirect_uri: the code (Allow) or error=access_denied (Deny), with state and iss" },
    200: rawResponse('text/html', 'response_mode=form_post: the page that posts the response to the app'),
    400: rawResponse(
      'text/html',
      'the sign-in expired, the form is malformed or not this browser’s or this request’s, or a cross-origin post',
    ),
    ...errorResponses(...SERVER_ERRORS),
  },
};

const HTML = 'text/html';
const refusedPage = rawResponse(HTML, 'an error page: the client or redirect_uri is unknown (never a redirect), or the sign-in expired');
/** Every answer of /authorize is a redirect, except the error page for a client or redirect_uri it cannot trust, and the renewal interstitial. */
const AuthorizeSchema = {
  response: {
    303: { description: "to the app's redirect_uri (code or error, state, iss), or to the hosted sign-in page" },
    200: rawResponse(
      HTML,
      "the renewal interstitial: the session is bound to the page's key and its short cookie is gone (session-renewal.ts)",
    ),
    400: refusedPage,
    ...errorResponses(...SERVER_ERRORS),
  },
};
const SignInPageSchema = {
  response: { 200: rawResponse(HTML, 'the hosted sign-in page'), 400: refusedPage, ...errorResponses(...SERVER_ERRORS) },
};
const assetSchema = (mediaType: string, description: string) => ({ response: { 200: rawResponse(mediaType, description) } });
const CompleteSchema = {
  body: CompleteBody,
  response: {
    200: CompleteAnswer,
    ...errorResponses(...BODY_ERRORS, ...SERVER_ERRORS),
  },
};
const ContinueSchema = {
  body: Type.Object({ request: Type.String({ maxLength: 100 }), sessionKey: SessionKey }, { additionalProperties: false }),
  response: { 200: ContinueAnswer, ...errorResponses(...BODY_ERRORS, ...SERVER_ERRORS) },
};
const PasskeyOptionsSchema = {
  body: ContinueBody,
  response: { 200: PasskeyOptionsAnswer, ...errorResponses(...BODY_ERRORS, ...SERVER_ERRORS) },
};
const PasskeyAddSchema = {
  body: Type.Object({ request: Type.String({ maxLength: 100 }), credential: Attestation }, { additionalProperties: false }),
  response: {
    200: PasskeyAddAnswer,
    // 401 ERR_PASSKEY_INVALID: the attestation was refused, as at /v1/passkeys/registration.
    ...errorResponses(...BODY_ERRORS, 401, ...SERVER_ERRORS),
  },
};

/**
 * The authorization endpoint (GET and POST, OIDC Core 3.1.2.1) and the hosted sign-in pages
 * that finish it. Design and threat model: docs/protocol.md ("Sign-in with redirects"),
 * docs/security.md.
 */
export const oidcRoutes: FastifyPluginAsyncTypebox<{
  oidc: OidcService;
  offer: PasskeyOffer;
  issuer: string;
  /** The resend spacing in force (config.sendSpacingSeconds): the code step's countdown. */
  resendSeconds: number;
  /** The requesting application's brand (branding/): its name, logo and accent stylesheet. */
  brandOf: (app: { id: string; name: string }) => Promise<{
    name: string;
    logoPath: string | null;
    stylesheetPath: string | null;
    termsUrl: string | null;
    privacyUrl: string | null;
  }>;
  languages: PageLanguages;
  dbsc: DbscService;
  /** The operator's CAPTCHA (otp/send-captcha.ts): the widget's script and the origins the page's CSP then allows; undefined with the proof of work. */
  captcha?: { scriptUrl: string; origins: readonly string[] } | undefined;
}> = async (app, { oidc, offer, issuer, resendSeconds, brandOf, languages, dbsc, captcha }) => {
  const { locales } = languages;
  const origin = new URL(issuer).origin;
  // Secure cookies need https; the __Host- prefix then pins them to this host and path /.
  const secure = issuer.startsWith('https:');
  const sessionCookie = sessionCookieName(issuer);
  const bindingCookie = bindingCookieName(issuer);
  const cookie = (name: string, value: string, maxAgeSeconds: number) =>
    `${name}=${value}; Path=/; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const [pageTemplate, style, script, renew] = PAGE_FILES.map(asset) as [string, string, string, string];
  const qr = qrModule();
  await oidc.ensureHostedClient();

  /** An error page in the browser's language; `detail` (for the app's developers) stays in English, marked so. */
  const page = async (request: FastifyRequest, reply: FastifyReply, title: MessageKey, help: MessageKey, detail?: string) => {
    const language = await languages.of(request);
    const t = (key: MessageKey) => escapeHtml(locales.text(language.locale, key));
    const details = detail ? `<p>${t('page.detail')} <span lang="en">${escapeHtml(detail)}</span></p>` : '';
    // The request is refused before an application is trusted: the page speaks for the service (its product name).
    const { name } = await brandOf({ id: HOSTED_CLIENT_ID, name: '' });
    const brand = { name, logoPath: null, stylesheetPath: null };
    return sendPage(
      reply,
      400,
      locales.text(language.locale, title),
      `<h1>${t(title)}</h1><p>${t(help)}</p>${details}`,
      language,
      PAGE_CSP,
      brand,
    );
  };

  const authorize = async (params: Record<string, unknown>, request: FastifyRequest, reply: FastifyReply) => {
    const cookies = parseCookies(request.headers.cookie);
    // A session bound to a browser key (DBSC, or the page's key) counts only with its live short cookie.
    const presented = cookies.get(sessionCookie);
    const use = presented ? await dbsc.use(presented, cookies.get(dbsc.cookieName)) : 'ignore';
    // Bound to the page's key and the short cookie gone: the interstitial renews it by proof (session-renewal.ts).
    if (presented && use === 'renew') return sendRenewalPage(request, reply, languages, { challenge: dbsc.challenge(presented), params });
    const sessionValue = use === 'use' ? presented : undefined;
    const bindingValue = cookies.get(bindingCookie);
    const outcome = await oidc.authorize(params, {
      ...(sessionValue ? { session: sessionValue } : {}),
      ...(bindingValue ? { binding: bindingValue } : {}),
    });
    if (outcome.kind === 'page') return page(request, reply, 'page.authorize.refused', 'page.authorize.refusedHelp', outcome.message);
    if (outcome.kind === 'respond') {
      const language = await languages.of(request);
      return sendAuthorizationResponse(reply, outcome.response, language, (key) => locales.text(language.locale, key));
    }
    reply.header('set-cookie', cookie(bindingCookie, outcome.binding, AUTHORIZATION_REQUEST_TTL_SECONDS));
    // OIDC Core 3.1.2.1 ui_locales: the page's language, the sign-in's or, with a live session,
    // the consent page's (docs/protocol.md "Languages"; after a sign-in, its language cookie does).
    const uiLocales = typeof params.ui_locales === 'string' ? params.ui_locales.slice(0, 200) : '';
    const query = new URLSearchParams({ request: outcome.requestId, ...(uiLocales ? { ui_locales: uiLocales } : {}) });
    const path = outcome.kind === 'consent' ? CONSENT_PATH : outcome.kind === 'organization' ? ORGANIZATION_PICKER_PATH : Paths.signIn;
    return reply.code(303).header('location', `${path}?${query}`).send();
  };

  app.get(Paths.authorize, { schema: AuthorizeSchema }, async (request, reply) =>
    authorize(request.query as Record<string, unknown>, request, reply),
  );
  app.post(Paths.authorize, { schema: AuthorizeSchema }, async (request, reply) => {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return page(
        request,
        reply,
        'page.authorize.refused',
        'page.authorize.refusedHelp',
        'The request must be a form (application/x-www-form-urlencoded).',
      );
    }
    return authorize((request.body ?? {}) as Record<string, unknown>, request, reply);
  });

  app.get(Paths.signIn, { schema: SignInPageSchema }, async (request, reply) => {
    const requestId = (request.query as Record<string, unknown>).request;
    const pending = typeof requestId === 'string' && requestId.length <= 100 ? await oidc.pendingRequest(requestId) : undefined;
    if (!pending || typeof requestId !== 'string') {
      return page(request, reply, 'page.signIn.expired', 'page.signIn.expiredHelp');
    }
    const language = await languages.of(request);
    const { locale } = language;
    // ui_locales chose the language: the page's service-web calls carry it (a browser-session
    // cookie), so the mails they cause (the sign-in code) speak it too.
    const uiLocales = (request.query as Record<string, unknown>).ui_locales;
    if (typeof uiLocales === 'string' && uiLocales.split(' ').some((tag) => locales.match(tag) === locale))
      reply.header('set-cookie', `${languages.cookieName}=${locale}; Path=/; SameSite=Lax${secure ? '; Secure' : ''}`);
    const tags = {
      email: ['<span id="otp-email">', '</span>'],
      link: ['<a id="totp-link" href="otpauth://totp/">', '</a>'],
    } as const;
    const brand = await brandOf(pending.client);
    // A name the client chose itself is marked, as on the consent page.
    const unverified = isNameUnverified(pending.client)
      ? ` <small class="unverified">(${escapeHtml(locales.text(locale, 'page.consent.unverified'))})</small>`
      : '';
    const html = pageTemplate
      .replace('<h1>{{t:hosted.title}}</h1>', () => `<h1>{{t:hosted.title}}${unverified}</h1>`)
      .replace('{{brandStyles}}', () => (brand.stylesheetPath ? `<link rel="stylesheet" href="${escapeHtml(brand.stylesheetPath)}">` : ''))
      .replace('{{brandHeader}}', () =>
        brand.logoPath
          ? `<div class="brand"><img class="brand-logo" src="${escapeHtml(brand.logoPath)}" alt=""><span>${escapeHtml(brand.name)}</span></div>\n`
          : '',
      )
      .replace('{{legal}}', () => legalHtml(brand, (key) => escapeHtml(locales.text(locale, key))))
      .replace(/\{\{t:([\w.-]+)\}\}/g, (_whole, key: string) => locales.html(locale, key as MessageKey, { app: brand.name }, tags))
      // The template is valid HTML as written (biome checks it): English, and a JSON string for the messages.
      .replace('<html lang="en">', () => `<html lang="${escapeHtml(locale)}">`)
      .replace('"{{messages}}"', () => jsonInHtml(locales.messages(locale, 'hosted.')))
      .replaceAll('{{switcher}}', () => switcherHtml(language))
      .replaceAll('{{appName}}', escapeHtml(brand.name))
      .replaceAll('{{issuer}}', escapeHtml(issuer))
      .replaceAll('{{publishableKey}}', escapeHtml(oidc.hostedPublishableKey))
      .replaceAll('{{requestId}}', escapeHtml(requestId))
      .replaceAll('{{loginHint}}', escapeHtml(pending.request.loginHint ?? ''))
      .replaceAll('{{resendSeconds}}', String(resendSeconds))
      .replaceAll('{{captchaScript}}', escapeHtml(captcha?.scriptUrl ?? ''));
    // response_mode=form_post: the page itself posts the response to the app (hosted-api.ts goToApp).
    const policy = pending.request.responseMode === 'form_post' ? cspWithFormTarget(pending.request.redirectUri) : PAGE_CSP;
    const csp = captcha ? cspWithCaptcha(policy, captcha.origins) : policy;
    return sendHtml(reply, html, { csp, locale });
  });
  app.get(
    `${Paths.signIn}/signin.js`,
    { schema: assetSchema('text/javascript', "the hosted page's script (service-web bundled in)") },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(script),
  );
  app.get(
    `${Paths.signIn}/renew.js`,
    { schema: assetSchema('text/javascript', "the renewal interstitial's script (a proof of the page's session key)") },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(renew),
  );
  app.get(
    `${Paths.signIn}/qr.js`,
    { schema: assetSchema('text/javascript', "the QR encoder the hosted page's TOTP enrollment imports (uqr, an ES module)") },
    async (_request, reply) => reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(qr),
  );
  app.get(
    FORM_POST_SCRIPT_PATH,
    { schema: assetSchema('text/javascript', "the form_post page's script: it posts the response to the app") },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(FORM_POST_SCRIPT),
  );
  app.get(
    SIGNED_OUT_SCRIPT_PATH,
    { schema: assetSchema('text/javascript', "the signed-out page's script: on to the app once its apps' logout frames loaded") },
    async (_request, reply) =>
      reply.header('cache-control', 'public, max-age=300').type('text/javascript; charset=utf-8').send(SIGNED_OUT_SCRIPT),
  );
  app.get(`${Paths.signIn}/signin.css`, { schema: assetSchema('text/css', "the hosted page's style sheet") }, async (_request, reply) =>
    reply.header('cache-control', 'public, max-age=300').type('text/css; charset=utf-8').send(style),
  );

  // CSRF: only our own page may finish a sign-in (browsers send Origin on every POST), and
  // only in the browser that made the request (the binding cookie).
  const sameOrigin = (request: FastifyRequest) => {
    if (request.headers.origin !== origin) throw new ServiceError('ERR_REQUEST_INVALID', 'Cross-origin requests are refused.');
    return parseCookies(request.headers.cookie);
  };
  const finished = async (reply: FastifyReply, done: SignInFinished, sessionKey?: unknown) => {
    if (done.session) {
      reply.header('set-cookie', cookie(sessionCookie, done.session, SESSION_ABSOLUTE_LIFETIME_SECONDS));
      // Browsers without DBSC: the page's WebCrypto key binds the session (oidc/dbsc.ts bindPageKey), with its first short cookie.
      const short = sessionKey ? await dbsc.bindPageKey(done.session, sessionKey) : undefined;
      if (short) reply.header('set-cookie', short);
      // W3C DBSC: a browser that can offers to bind the new session to a key of its own (oidc/dbsc.ts).
      reply.header('secure-session-registration', dbsc.registrationHeader(done.session));
    }
    return nextLocation(done);
  };
  /**
   * Where the browser goes next: a third-party client's consent page (oidc/consent.ts), the
   * organization picker, the hosted sign-in again for an organization's second factor, or the app.
   */
  const nextLocation = (next: NextPage): { location: string; form?: Record<string, string> } => {
    if ('consentRequestId' in next) return { location: `${CONSENT_PATH}?${new URLSearchParams({ request: next.consentRequestId })}` };
    if ('organizationRequestId' in next)
      return { location: `${ORGANIZATION_PICKER_PATH}?${new URLSearchParams({ request: next.organizationRequestId })}` };
    if ('stepUpRequestId' in next) return { location: `${Paths.signIn}?${new URLSearchParams({ request: next.stepUpRequestId })}` };
    const { response } = next;
    return response.mode === 'form_post'
      ? { location: response.redirectUri, form: response.params }
      : { location: responseLocation(response) };
  };

  app.post(Paths.signInComplete, { schema: CompleteSchema }, async (request, reply) => {
    const cookies = sameOrigin(request);
    const completion = {
      requestId: request.body.request,
      binding: cookies.get(bindingCookie),
      code: request.body.code,
      codeVerifier: request.body.codeVerifier,
    };
    if (request.body.hold) {
      const { passkeyOffer } = await oidc.holdSignIn(completion);
      return { held: true as const, passkeyOffer };
    }
    const done = await oidc.completeSignIn({ ...completion, previousSession: cookies.get(sessionCookie) });
    return finished(reply, done, request.body.sessionKey);
  });

  app.post(Paths.signInContinue, { schema: ContinueSchema }, async (request, reply) => {
    const cookies = sameOrigin(request);
    const done = await oidc.continueSignIn({
      requestId: request.body.request,
      binding: cookies.get(bindingCookie),
      previousSession: cookies.get(sessionCookie),
    });
    return finished(reply, done, request.body.sessionKey);
  });

  // The consent page of a third-party client (oidc/consent.ts): server-rendered, no script. Only
  // the browser holding the request's binding cookie sees it; its form carries a token bound to
  // the request and that cookie, and posts back here only (Origin checked), once.
  app.get(CONSENT_PATH, { schema: ConsentPageSchema }, async (request, reply) => {
    const sent = (request.query as Record<string, unknown>).request;
    const requestId = typeof sent === 'string' && sent.length <= 100 ? sent : undefined;
    const binding = parseCookies(request.headers.cookie).get(bindingCookie);
    const view = requestId ? await oidc.consentView(requestId, binding).catch(expiredOnly) : undefined;
    if (!view || !requestId) return page(request, reply, 'page.signIn.expired', 'page.signIn.expiredHelp');
    const language = await languages.of(request);
    const brand = await brandOf(view.client);
    const t = (key: MessageKey, values?: Record<string, string>) => escapeHtml(locales.text(language.locale, key, values));
    const item = (entry: ConsentItem) =>
      entry.kind === 'email'
        ? t('page.consent.email')
        : entry.kind === 'offline'
          ? t('page.consent.offline')
          : t('page.consent.permission', { api: entry.apiName, permission: entry.permission });
    // A name the client gave itself (registration, metadata document) is marked as such; a metadata document's host is shown.
    const unverified = isNameUnverified(view.client) ? ` <small class="unverified">(${t('page.consent.unverified')})</small>` : '';
    const about = [
      ...(unverified ? [t('page.consent.unverifiedNote', { app: brand.name })] : []),
      ...(view.client.metadataDocument ? [t('page.consent.host', { host: new URL(view.client.id).host })] : []),
    ];
    const main =
      `<h1>${t('page.consent.title', { app: brand.name })}${unverified}</h1>` +
      about.map((line) => `<p class="unverified-note">${line}</p>`).join('') +
      `<p>${t('page.consent.intro', { app: brand.name })}</p>` +
      `<ul class="consent">${view.items.map((entry) => `<li>${item(entry)}</li>`).join('')}</ul>` +
      `<form method="post" action="${CONSENT_PATH}"><input type="hidden" name="request" value="${escapeHtml(requestId)}">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">` +
      `<button type="submit" name="decision" value="allow">${t('page.consent.allow')}</button> ` +
      `<button type="submit" name="decision" value="deny" class="secondary">${t('page.consent.deny')}</button></form>` +
      `<p><small>${t('page.consent.note')}</small></p>`;
    // The answer redirects to the app: form-action must allow its redirect URI's origin (browsers check a form's redirects).
    const csp = cspWithFormTarget(view.request.redirectUri);
    return sendPage(reply, 200, locales.text(language.locale, 'page.consent.title', { app: brand.name }), main, language, csp, brand);
  });

  app.post(CONSENT_PATH, { schema: ConsentAnswerSchema }, async (request, reply) => {
    // CSRF: our own page only (browsers send Origin on every form POST), then the form's token and the binding cookie.
    if (request.headers.origin !== origin)
      return page(request, reply, 'page.authorize.refused', 'page.authorize.refusedHelp', 'Cross-origin requests are refused.');
    const form = (request.body ?? {}) as Record<string, unknown>;
    const field = (name: string) =>
      typeof form[name] === 'string' && (form[name] as string).length <= 100 ? (form[name] as string) : undefined;
    const [requestId, csrf, decision] = [field('request'), field('csrf'), field('decision')];
    const valid = requestId && csrf && (decision === 'allow' || decision === 'deny');
    const response = valid
      ? await oidc
          .answerConsent({ requestId, binding: parseCookies(request.headers.cookie).get(bindingCookie), csrf, allow: decision === 'allow' })
          .catch(expiredOnly)
      : undefined;
    if (!response) return page(request, reply, 'page.signIn.expired', 'page.signIn.expiredHelp');
    const language = await languages.of(request);
    return sendAuthorizationResponse(reply, response, language, (key) => locales.text(language.locale, key));
  });

  // The organization picker (oidc/organization-picker.ts): server-rendered, no script, as the
  // consent page. Only the browser holding the request's binding cookie sees it; its form carries
  // a token bound to the request and that cookie, and posts back here only (Origin checked), once.
  app.get(ORGANIZATION_PICKER_PATH, { schema: OrganizationPageSchema }, async (request, reply) => {
    const sent = (request.query as Record<string, unknown>).request;
    const requestId = typeof sent === 'string' && sent.length <= 100 ? sent : undefined;
    const binding = parseCookies(request.headers.cookie).get(bindingCookie);
    const view = requestId ? await oidc.organizationView(requestId, binding).catch(expiredOnly) : undefined;
    if (!view || !requestId) return page(request, reply, 'page.signIn.expired', 'page.signIn.expiredHelp');
    const language = await languages.of(request);
    const brand = await brandOf(view.client);
    const t = (key: MessageKey, values?: Record<string, string>) => escapeHtml(locales.text(language.locale, key, values));
    const choice = ({ organization, roles }: (typeof view.memberships)[number]) =>
      `<li><button type="submit" name="organization" value="${escapeHtml(organization.id)}" class="organization">` +
      `<span class="organization-name">${escapeHtml(organization.name)}</span> ` +
      `<small>${roles.length > 0 ? t('page.organization.roles', { roles: roles.join(', ') }) : t('page.organization.noRoles')}</small></button></li>`;
    const main =
      `<h1>${t('page.organization.title')}</h1>` +
      `<p>${t('page.organization.intro', { app: brand.name })}</p>` +
      `<form method="post" action="${ORGANIZATION_PICKER_PATH}"><input type="hidden" name="request" value="${escapeHtml(requestId)}">` +
      `<input type="hidden" name="csrf" value="${escapeHtml(view.csrf)}">` +
      `<ul class="organizations">${view.memberships.map(choice).join('')}</ul></form>`;
    // The answer redirects to the app: form-action must allow its redirect URI's origin (browsers check a form's redirects).
    const csp = cspWithFormTarget(view.request.redirectUri);
    return sendPage(reply, 200, locales.text(language.locale, 'page.organization.title'), main, language, csp, brand);
  });

  app.post(ORGANIZATION_PICKER_PATH, { schema: OrganizationAnswerSchema }, async (request, reply) => {
    // CSRF: our own page only (browsers send Origin on every form POST), then the form's token and the binding cookie.
    if (request.headers.origin !== origin)
      return page(request, reply, 'page.authorize.refused', 'page.authorize.refusedHelp', 'Cross-origin requests are refused.');
    const form = (request.body ?? {}) as Record<string, unknown>;
    const field = (name: string) =>
      typeof form[name] === 'string' && (form[name] as string).length <= 100 ? (form[name] as string) : undefined;
    const [requestId, csrf, organization] = [field('request'), field('csrf'), field('organization')];
    const next =
      requestId && csrf && organization
        ? await oidc
            .answerOrganization({ requestId, binding: parseCookies(request.headers.cookie).get(bindingCookie), csrf, organization })
            .catch(expiredOnly)
        : undefined;
    if (!next) return page(request, reply, 'page.signIn.expired', 'page.signIn.expiredHelp');
    if ('response' in next) {
      const language = await languages.of(request);
      return sendAuthorizationResponse(reply, next.response, language, (key) => locales.text(language.locale, key));
    }
    return reply.code(303).header('location', nextLocation(next).location).send();
  });

  // "Add a passkey" on a held sign-in (passkey-offer.ts): our page only, in the browser that
  // made the request, for the user the request holds; /signin/continue finishes either way.
  app.post(Paths.signInPasskeyOptions, { schema: PasskeyOptionsSchema }, async (request) => {
    const cookies = sameOrigin(request);
    const caller = { requestId: request.body.request, binding: cookies.get(bindingCookie), origin: request.headers.origin };
    return { options: await offer.options(caller) };
  });

  app.post(Paths.signInPasskey, { schema: PasskeyAddSchema }, async (request) => {
    const cookies = sameOrigin(request);
    const caller = { requestId: request.body.request, binding: cookies.get(bindingCookie), origin: request.headers.origin };
    const { synced } = await offer.register(caller, request.body.credential);
    return { added: true as const, synced };
  });
};

/** An expired, used or foreign request (ERR_SESSION_INVALID) is undefined; anything else is thrown on. */
const expiredOnly = (error: unknown): undefined => {
  if (error instanceof ServiceError && error.code === 'ERR_SESSION_INVALID') return undefined;
  throw error;
};

/** The cookie binding pending requests to the browser that made them (__Host- with an https issuer). */
export const bindingCookieName = (issuer: string) =>
  issuer.startsWith('https:') ? '__Host-service_authorization' : 'service_authorization';

/**
 * What binds a hosted passkey ceremony (factors/passkey/routes.ts `ceremonyContext`): the pending
 * authorization request the hosted page serves, as the browser that made it holds it (its
 * binding cookie). Other clients' ceremonies are bound to nothing more.
 */
export function hostedCeremonyContext(oidc: OidcService, issuer: string) {
  const cookie = bindingCookieName(issuer);
  return async (request: FastifyRequest): Promise<string | undefined> => {
    if (request.client.id !== HOSTED_CLIENT_ID) return undefined;
    const requestId = request.headers[AUTHORIZATION_REQUEST_HEADER];
    const binding = parseCookies(request.headers.cookie).get(cookie);
    return oidc.hostedCeremonyContext(typeof requestId === 'string' ? requestId : undefined, binding);
  };
}

/** The service session cookie's name: with an https issuer, the __Host- prefix pins it to this host and path /. */
export const sessionCookieName = (issuer: string) => (issuer.startsWith('https:') ? '__Host-service_session' : 'service_session');

/** JSON inside a `<script type="application/json">`: no `<`, `>` or `&` that could end the element. */
const jsonInHtml = (value: unknown) =>
  JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** The application's terms and privacy links under the form (none set: nothing). */
function legalHtml(
  brand: { termsUrl: string | null; privacyUrl: string | null },
  t: (key: 'hosted.legal.terms' | 'hosted.legal.privacy') => string,
): string {
  const links = [
    brand.termsUrl ? `<a href="${escapeHtml(brand.termsUrl)}">${t('hosted.legal.terms')}</a>` : '',
    brand.privacyUrl ? `<a href="${escapeHtml(brand.privacyUrl)}">${t('hosted.legal.privacy')}</a>` : '',
  ].join('');
  return links
    ? `<p class="legal">${links}</p>
`
    : '';
}
