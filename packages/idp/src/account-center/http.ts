import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { ServiceError } from '../errors.js';
import { Assertion } from '../factors/passkey/routes.js';
import { parseCookies } from '../http/cookies.js';
import { escapeHtml, sendPage } from '../http/page.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { Values } from '../i18n/locales.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { PageLanguages } from '../i18n/page-language.js';
import { PROOF_STAND_IN } from '../sign-in/mfa-proof.js';
import { type FormContext, proofStepHtml } from './factor-page.js';
import type { ProvenAction, StepProof } from './factors.js';
import { ACCOUNT_PATH, type AccountCaller, type AccountCenter } from './service.js';

/** The header a script's account call may carry its per-session token in (forms send the `csrf` field). */
export const ACCOUNT_CSRF_HEADER = 'x-account-csrf';

export const HTML = 'text/html';
export const Csrf = Type.String({ maxLength: 200 });
export const DeviceId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
/**
 * An MFA session id the page carries from one step to the next (sign-in/mfa-session.ts: `mfa_` and
 * base64url); a proof's carries its action's tag after a dot (account-center/factors.ts `startProof`).
 */
export const MfaSessionField = Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_-]+(\\.[A-Za-z0-9_-]+)?$' });
/** A 6-digit code or a recovery code as typed (spaces and dashes allowed; the MFA step tells them apart). */
export const CodeField = Type.String({ maxLength: 40 });
/** The passkey's assertion the page's script puts in a step's form (JSON text, checked against its wire shape by `stepProofOf`). */
export const AssertionField = Type.String({ maxLength: 16000 });
/** A step's proof fields: a typed code, or (the page's script) the passkey's assertion. */
export const ProofFields = { code: Type.Optional(CodeField), assertion: Type.Optional(AssertionField) };

/** The proof a step's form carries: exactly one of a code and a well-formed assertion (ERR_REQUEST_INVALID otherwise, nothing spent). */
export function stepProofOf(body: { code?: string | undefined; assertion?: string | undefined }): StepProof {
  const code = body.code?.trim() ?? '';
  const text = body.assertion ?? '';
  if (text === '' && code !== '') return { code };
  let assertion: unknown;
  try {
    assertion = code === '' && text !== '' ? JSON.parse(text) : undefined;
  } catch {
    assertion = undefined;
  }
  if (!Value.Check(Assertion, assertion)) throw new ServiceError('ERR_REQUEST_INVALID', 'Enter the code, or use your passkey.');
  return { assertion };
}

/** The refusals every account action shares (its CSRF and session checks, the body's checks). */
export const refusedResponses = {
  403: rawResponse(HTML, 'no session token, another origin, or a sign-in too old for this action (the page says to sign in again)'),
  ...errorResponses(400, 401, 404, 413, 415, ...SERVER_ERRORS),
};

export const actionResponses = (description: string) => ({ 303: { description }, ...refusedResponses });

/** A status answered with the page (a refused code, an ended step) or, before any handler, the JSON error of that status. */
const pageOrError = (status: 400 | 409 | 423 | 429, description: string) => ({
  description,
  content: { [HTML]: { schema: { type: 'string' } }, 'application/json': { schema: errorResponses(status)[status] } },
});

/** The answers of an action proven with a code on its form: the next page, or the page saying why not. */
export const provenResponses = (description: string) => ({
  ...actionResponses(description),
  200: rawResponse(HTML, description),
  400: pageOrError(400, 'a wrong code (a page with the attempts left), a malformed form (JSON), or an ended step'),
  409: pageOrError(409, 'this step was completed already'),
  423: pageOrError(423, 'too many wrong codes for this account'),
  429: pageOrError(429, 'a code was sent a moment ago'),
});

const cookieNames = (issuer: string) =>
  issuer.startsWith('https:')
    ? {
        session: '__Host-service_account',
        login: '__Host-service_account_login',
        ui: '__Host-service_account_ui',
        invitation: '__Host-service_account_invitation',
      }
    : { session: 'service_account', login: 'service_account_login', ui: 'service_account_ui', invitation: 'service_account_invitation' };

/** What the account routes share: cookies, pages in the caller's language, and the checks of every action. */
export function accountHttp({ account, issuer, languages }: { account: AccountCenter; issuer: string; languages: PageLanguages }) {
  const names = cookieNames(issuer);
  const secure = issuer.startsWith('https:') ? '; Secure' : '';
  const { locales } = languages;
  // A `__Host-` cookie must have Path=/ (RFC 6265bis 4.1.3.2), or browsers drop it; the names
  // keep it apart from every other cookie. Over http (no prefix) it stays under /account.
  const path = secure ? '/' : ACCOUNT_PATH;
  const cookie = (name: string, sameSite: string) => (value: string, maxAge: number) =>
    `${name}=${value}; Path=${path}; Max-Age=${maxAge}; HttpOnly; SameSite=${sameSite}${secure}`;
  const cookieOf = (request: FastifyRequest) => parseCookies(request.headers.cookie).get(names.session);

  const page = async (request: FastifyRequest, reply: FastifyReply, status: number, main: (locale: string) => string) => {
    const language = await languages.of(request, { returnTo: ACCOUNT_PATH });
    return sendPage(reply, status, locales.text(language.locale, 'page.account.title'), main(language.locale), language);
  };
  const message = (
    request: FastifyRequest,
    reply: FastifyReply,
    status: number,
    key: MessageKey,
    link: 'signin' | 'back' | 'none' = 'signin',
    values?: Values,
  ) =>
    page(request, reply, status, (locale) => {
      const t = (k: MessageKey) => escapeHtml(locales.text(locale, k));
      return (
        `<h1>${t('page.account.title')}</h1><p role="alert">${escapeHtml(locales.text(locale, key, values))}</p>` +
        (link === 'signin' ? `<p><a href="${ACCOUNT_PATH}/signin?fresh=1">${t('page.account.signInAgain')}</a></p>` : '') +
        (link === 'back' ? `<p><a href="${ACCOUNT_PATH}">${t('page.account.back')}</a></p>` : '')
      );
    });

  /** The caller of an action: a live session, the call from this origin with its token. */
  const caller = async (request: FastifyRequest): Promise<AccountCaller> => {
    const origin = request.headers.origin;
    const site = request.headers['sec-fetch-site'];
    if ((origin !== undefined && origin !== new URL(issuer).origin) || (site !== undefined && site !== 'same-origin'))
      throw new ServiceError('ERR_FORBIDDEN', 'Account actions are accepted from the account page only.');
    const value = cookieOf(request);
    const found = value ? await account.authenticate(value) : undefined;
    if (!value || !found) throw new ServiceError('ERR_SESSION_INVALID', 'The account session has ended; sign in again.');
    const header = request.headers[ACCOUNT_CSRF_HEADER];
    const token = typeof header === 'string' ? header : (request.body as { csrf?: string } | undefined)?.csrf;
    if (!account.checkCsrf(value, token))
      throw new ServiceError('ERR_FORBIDDEN', 'The account call lacks its session token; reload the page.');
    return found;
  };

  /**
   * Runs an action for its caller; a call from elsewhere answers 403 with a page (reload and try
   * again), and a sensitive one (`recent`) whose sign-in is too old answers 403 with the page
   * saying to sign in again. Neither changes anything.
   */
  const act = async (request: FastifyRequest, reply: FastifyReply, recent: boolean, run: (who: AccountCaller) => Promise<unknown>) => {
    let who: AccountCaller;
    try {
      who = await caller(request);
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'ERR_FORBIDDEN')
        return message(request, reply, 403, 'page.account.forbidden', 'none');
      throw error;
    }
    if (recent) {
      try {
        account.requireRecent(who);
      } catch {
        return message(request, reply, 403, 'page.account.recent');
      }
    }
    return run(who);
  };

  /**
   * A refused code or step as a page in the user's language (the MFA step's errors are English
   * and for programs): a wrong code with the attempts left, an ended or completed step, a locked
   * account, a send too soon. Anything else is thrown on to the one error serialiser.
   */
  const refusedProof = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    if (!(error instanceof ServiceError)) throw error;
    const status = error.status;
    switch (error.code) {
      case 'ERR_OTP_INVALID':
      case 'ERR_OTP_EXPIRED':
      case 'ERR_OTP_USED':
        return message(request, reply, 400, 'page.account.codeWrong', 'back', { remaining: error.details.attemptsRemaining ?? 0 });
      case 'ERR_PASSKEY_INVALID':
        return message(request, reply, 400, 'page.account.passkeyWrong', 'back', { remaining: error.details.attemptsRemaining ?? 0 });
      case 'ERR_REQUEST_INVALID':
        return message(request, reply, 400, 'page.account.codeRefused', 'back');
      case 'ERR_SESSION_INVALID':
      case 'ERR_SESSION_STEP':
        return message(request, reply, status, 'page.account.stepEnded', 'back');
      case 'ERR_ACCOUNT_LOCKED':
        return message(request, reply, 423, 'page.account.locked', 'back');
      case 'ERR_RATE_LIMITED':
        return message(request, reply, 429, 'page.account.tooSoon', 'back');
      default:
        throw error;
    }
  };

  /** The tries left after a wrong code or a refused passkey, when the same step is shown again to retry; else undefined. */
  const triesLeft = (error: unknown): number | undefined => {
    if (!(error instanceof ServiceError) || (error.code !== 'ERR_OTP_INVALID' && error.code !== 'ERR_PASSKEY_INVALID')) return undefined;
    const remaining = Number(error.details.attemptsRemaining ?? 0);
    return remaining > 0 ? remaining : undefined;
  };

  /** Runs `run`; a refused code or step becomes the page saying why (nothing changed). */
  const proven = async (request: FastifyRequest, reply: FastifyReply, run: () => Promise<unknown>) => {
    try {
      return await run();
    } catch (error) {
      return refusedProof(request, reply, error);
    }
  };

  /** What a factor step's form is rendered with: the caller's language and the session's CSRF token. */
  const form = (request: FastifyRequest, locale: string): FormContext => ({
    locales,
    locale,
    csrf: account.csrfToken(cookieOf(request) ?? ''),
  });

  /** What a refused step says: a wrong code, or a passkey not accepted. */
  const wrongKey = (error: unknown): MessageKey =>
    error instanceof ServiceError && error.code === 'ERR_PASSKEY_INVALID' ? 'page.account.passkeyWrong' : 'page.account.codeWrong';

  /**
   * A proven action's refusal: a wrong code with tries left shows the same code step again (the
   * same session; the error announced with role=alert) to retype it; anything else as `refusedProof`.
   */
  const refusedProofStep = async (
    request: FastifyRequest,
    reply: FastifyReply,
    who: AccountCaller,
    action: ProvenAction,
    body: { session: string; confirm?: string },
    error: unknown,
  ) => {
    const remaining = triesLeft(error);
    if (remaining === undefined) return refusedProof(request, reply, error);
    const mfa = (await account.overview(who)).mfa;
    const csrf = account.csrfToken(cookieOf(request) ?? '');
    const proof = { sessionId: body.session, method: mfa?.method ?? PROOF_STAND_IN, inForce: mfa !== null && mfa !== undefined };
    return page(request, reply, 400, (locale) =>
      proofStepHtml({ locales, locale, csrf }, action, proof, body.confirm ?? '', locales.text(locale, wrongKey(error), { remaining })),
    );
  };

  return {
    names,
    // Lax, not Strict: a link from an application on another site starts the redirect chain that
    // ends at /account, and a Strict cookie is not sent on it (the page looped back to the sign-in).
    // A cross-site POST still carries no cookie; every action also checks its token and Origin.
    sessionCookie: cookie(names.session, 'Lax'),
    loginCookie: cookie(names.login, 'Lax'),
    uiCookie: cookie(names.ui, 'Lax'),
    /** An organization invitation's token, from its link to the page that accepts it (account-center/invitation-routes.ts). */
    invitationCookie: cookie(names.invitation, 'Lax'),
    /** A catalogue message in `locale`. */
    text: (locale: string, key: MessageKey, values?: Values) => locales.text(locale, key, values),
    cookieOf,
    page,
    message,
    act,
    refusedProof,
    proven,
    form,
    refusedProofStep,
    triesLeft,
    wrongKey,
  };
}

export type AccountHttp = ReturnType<typeof accountHttp>;
