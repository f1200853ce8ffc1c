import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PasskeyMfaOptionsResponse } from 'service-protocol';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import { RequestOptions } from '../factors/passkey/routes.js';
import { errorResponses, wireBody } from '../http/schemas.js';
import type { Locales } from '../i18n/locales.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { ChangeStep } from '../sign-in/mfa-change.js';
import { changeStepHtml, proofStepHtml, recoveryCodesHtml, textOf } from './factor-page.js';
import { type AccountHttp, Csrf, MfaSessionField, ProofFields, provenResponses, refusedResponses, stepProofOf } from './http.js';
import { ACCOUNT_PATH, type AccountCaller, type AccountCenter } from './service.js';

const PasskeyOptionsAnswer = wireBody<PasskeyMfaOptionsResponse>()(
  Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), options: RequestOptions }),
);

/**
 * The account center's second factor (account-center/factors.ts), each a form of the page under
 * the checks of every action (account-center/http.ts `act`) with a recent sign-in. Enroll or
 * change the factor: /account/mfa/change, then /account/mfa/verify for each code (the factor in
 * force first, else the new one).
 */
export const accountFactorChangeRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp; locales: Locales }> = async (
  app,
  { account, http, locales },
) => {
  const { act, page, form, proven, refusedProof, triesLeft, wrongKey } = http;
  const changePage = (
    request: FastifyRequest,
    reply: FastifyReply,
    step: Exclude<ChangeStep, { kind: 'done' }>,
    refused?: { remaining: number; error: unknown },
  ) =>
    page(request, reply, refused === undefined ? 200 : 400, (locale) =>
      changeStepHtml(
        form(request, locale),
        step,
        refused === undefined ? undefined : locales.text(locale, wrongKey(refused.error), { remaining: refused.remaining }),
      ),
    );

  app.post(
    `${ACCOUNT_PATH}/mfa/change`,
    {
      schema: {
        body: Type.Object({
          csrf: Type.Optional(Csrf),
          method: Type.String({ maxLength: 20 }),
          phone: Type.Optional(Type.String({ maxLength: 40 })),
        }),
        response: provenResponses('the code step: the factor in force first, else the new one'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, (who) =>
        proven(request, reply, async () => {
          const phone = request.body.phone?.trim();
          return changePage(request, reply, await account.startChange(who, { method: request.body.method, phone: phone || undefined }));
        }),
      ),
  );

  app.post(
    `${ACCOUNT_PATH}/mfa/verify`,
    {
      schema: {
        body: Type.Object({
          csrf: Type.Optional(Csrf),
          session: MfaSessionField,
          ...ProofFields,
          // Shown again after a wrong code (display only: the session decides what is checked).
          step: Type.Optional(Type.Union([Type.Literal('current'), Type.Literal('new')])),
          method: Type.Optional(Type.String({ maxLength: 20, pattern: '^[a-z]+$' })),
        }),
        response: provenResponses('the new method’s code step, or the change done (with the first recovery codes, shown once)'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        const { session, step: shown, method } = request.body;
        let done: Awaited<ReturnType<AccountCenter['verifyChange']>>;
        try {
          done = await account.verifyChange(who, session, stepProofOf(request.body));
        } catch (error) {
          // A wrong code with tries left: the same step again, to retype.
          const remaining = triesLeft(error);
          if (remaining === undefined || !shown || !method) return refusedProof(request, reply, error);
          const again =
            shown === 'current' ? { kind: shown, sessionId: session, currentMethod: method } : { kind: shown, sessionId: session, method };
          return changePage(request, reply, again as Exclude<ChangeStep, { kind: 'done' }>, { remaining, error });
        }
        return proven(request, reply, async () => {
          const { step, recoveryCodes } = done;
          if (step.kind === 'new') return changePage(request, reply, step);
          return page(request, reply, 200, (locale) => {
            const c = form(request, locale);
            const name = textOf(c)(`hosted.method.${step.method}` as MessageKey);
            const said = `<p role="status">${textOf(c)('page.account.mfaDone', { method: name })}</p>`;
            return recoveryCodes
              ? `${said}${recoveryCodesHtml(c, recoveryCodes, 'page.account.codesTitle')}`
              : `<h1>${textOf(c)('page.account.mfa')}</h1>${said}<p><a href="${ACCOUNT_PATH}">${textOf(c)('page.account.back')}</a></p>`;
          });
        });
      }),
  );
};

/**
 * The proof before an export, a deletion or new recovery codes: /account/proof opens it and the
 * action's own form carries the code (account-center/data-routes.ts, `accountRecoveryCodeRoutes`).
 * A passkey in force is proven by its ceremony (so is it before a change): the page's script asks
 * /account/proof/passkey for request options bound to the step's MFA session, then posts the
 * assertion with the step's form.
 */
export const accountProofRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act, page, form, proven } = http;
  app.post(
    `${ACCOUNT_PATH}/proof`,
    {
      schema: {
        body: Type.Object({
          csrf: Type.Optional(Csrf),
          action: Type.Union([Type.Literal('export'), Type.Literal('delete'), Type.Literal('recovery-codes')]),
          confirm: Type.Optional(Type.String({ maxLength: 320 })),
        }),
        response: provenResponses('the code step of the action: its form carries the session and asks for the code'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, (who) =>
        proven(request, reply, async () => {
          const { action, confirm = '' } = request.body;
          // Checked before anything is sent: a wrong address or no factor to back up changes nothing.
          if (action === 'delete') account.checkDeleteConfirmation(who, confirm);
          if (action === 'recovery-codes' && !(await account.overview(who)).mfa)
            throw new ServiceError('ERR_REQUEST_INVALID', 'Recovery codes back up a second factor: set one up first.');
          const started = await account.startProof(who, action, request.ip);
          return page(request, reply, 200, (locale) => proofStepHtml(form(request, locale), action, started, confirm));
        }),
      ),
  );

  app.post(
    `${ACCOUNT_PATH}/proof/passkey`,
    {
      schema: {
        body: Type.Object(
          {
            csrf: Type.Optional(Csrf),
            session: MfaSessionField,
            action: Type.Union([Type.Literal('export'), Type.Literal('delete'), Type.Literal('recovery-codes'), Type.Literal('change')]),
          },
          { additionalProperties: false },
        ),
        response: { ...refusedResponses, ...errorResponses(409), 200: PasskeyOptionsAnswer },
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who) => {
        const options = await account.passkeyProofOptions(who, request.body.action, request.body.session);
        const answer: PasskeyMfaOptionsResponse = {
          status: 'SUCCESS',
          message: 'Ask for the passkey with these options (navigator.credentials.get), then send the form with its assertion.',
          options,
        };
        return reply.header('cache-control', 'no-store').send(answer);
      }),
  );
};

/** New recovery codes, proven like an export (`accountProofRoutes`), shown once. */
export const accountRecoveryCodeRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp }> = async (
  app,
  { account, http },
) => {
  const { act, page, form, refusedProofStep } = http;
  app.post(
    `${ACCOUNT_PATH}/recovery-codes`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), session: MfaSessionField, ...ProofFields }),
        response: provenResponses('the new recovery codes, shown once'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, async (who: AccountCaller) => {
        let codes: string[];
        try {
          codes = await account.regenerateRecoveryCodes(who, request.body.session, stepProofOf(request.body));
        } catch (error) {
          return refusedProofStep(request, reply, who, 'recovery-codes', request.body, error);
        }
        return page(request, reply, 200, (locale) => recoveryCodesHtml(form(request, locale), codes, 'page.account.codesTitle'));
      }),
  );
};
