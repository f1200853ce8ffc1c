import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ServiceError } from '../errors.js';
import type { Locales, MessageKey } from '../i18n/locales.js';
import type { ChangeStep } from '../sign-in/mfa-step.js';
import { changeStepHtml, codeStepHtml, type FormContext, hidden, proveIntro, recoveryCodesHtml, textOf } from './factor-page.js';
import type { ProvenAction } from './factors.js';
import { type AccountHttp, actionResponses, CodeField, Csrf, DeviceId, MfaSessionField, provenResponses } from './http.js';
import { ACCOUNT_PATH, type AccountCaller, type AccountCenter } from './service.js';

/** The heading of each proven action's code page. */
const PROOF_HEADING: Record<ProvenAction, MessageKey> = {
  export: 'page.account.proveExport',
  delete: 'page.account.proveDelete',
  'recovery-codes': 'page.account.proveRecovery',
};

/**
 * The account center's second factor and devices (account/factors.ts): enroll or change the
 * factor (/account/mfa/change, then /account/mfa/verify for each code), the proof before an
 * export, a deletion or new recovery codes (/account/proof opens it; the action's own form
 * carries the code), new recovery codes, and a device's new name. Each a form of the page, under
 * the checks of every action (account/http.ts `act`); all but the rename need a recent sign-in.
 */
export const accountFactorRoutes: FastifyPluginAsyncTypebox<{ account: AccountCenter; http: AccountHttp; locales: Locales }> = async (
  app,
  { account, http, locales },
) => {
  const { act, page, refusedProof } = http;
  const csrfOf = (request: FastifyRequest) => account.csrfToken(http.cookieOf(request) ?? '');
  const form = (request: FastifyRequest, locale: string): FormContext => ({ locales, locale, csrf: csrfOf(request) });
  /** Runs `run`; a refused code or step becomes the page saying why (nothing changed). */
  const proven = async (request: FastifyRequest, reply: FastifyReply, run: () => Promise<unknown>) => {
    try {
      return await run();
    } catch (error) {
      return refusedProof(request, reply, error);
    }
  };
  const changePage = (request: FastifyRequest, reply: FastifyReply, step: Exclude<ChangeStep, { kind: 'done' }>) =>
    page(request, reply, 200, (locale) => changeStepHtml(form(request, locale), step));

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
        body: Type.Object({ csrf: Type.Optional(Csrf), session: MfaSessionField, code: CodeField }),
        response: provenResponses('the new method’s code step, or the change done (with the first recovery codes, shown once)'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, (who) =>
        proven(request, reply, async () => {
          const { step, recoveryCodes } = await account.verifyChange(who, request.body.session, request.body.code);
          if (step.kind === 'new') return changePage(request, reply, step);
          return page(request, reply, 200, (locale) => {
            const c = form(request, locale);
            const method = textOf(c)(`hosted.method.${step.method}` as MessageKey);
            const done = `<p role="status">${textOf(c)('page.account.mfaDone', { method })}</p>`;
            return recoveryCodes
              ? `${done}${recoveryCodesHtml(c, recoveryCodes, 'page.account.codesTitle')}`
              : `<h1>${textOf(c)('page.account.mfa')}</h1>${done}<p><a href="${ACCOUNT_PATH}">${textOf(c)('page.account.back')}</a></p>`;
          });
        }),
      ),
  );

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
          const started = await account.startProof(who, request.ip);
          return page(request, reply, 200, (locale) => {
            const c = form(request, locale);
            return codeStepHtml(c, {
              heading: PROOF_HEADING[action],
              intro: proveIntro(c, started.method, started.inForce),
              action,
              fields: hidden('session', started.sessionId) + (action === 'delete' ? hidden('confirm', confirm) : ''),
              button: action === 'delete' ? 'page.account.deleteButton' : 'page.account.confirm',
              recovery: started.inForce && action !== 'recovery-codes',
            });
          });
        }),
      ),
  );

  app.post(
    `${ACCOUNT_PATH}/recovery-codes`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), session: MfaSessionField, code: CodeField }),
        response: provenResponses('the new recovery codes, shown once'),
      },
    },
    async (request, reply) =>
      act(request, reply, true, (who: AccountCaller) =>
        proven(request, reply, async () => {
          const codes = await account.regenerateRecoveryCodes(who, request.body.session, request.body.code);
          return page(request, reply, 200, (locale) => recoveryCodesHtml(form(request, locale), codes, 'page.account.codesTitle'));
        }),
      ),
  );

  app.post(
    `${ACCOUNT_PATH}/devices/rename`,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), device: DeviceId, name: Type.String({ maxLength: 200 }) }),
        response: actionResponses('back to /account'),
      },
    },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        await account.renameDevice(who, request.body.device, request.body.name);
        return reply.code(303).header('location', ACCOUNT_PATH).send();
      }),
  );
};
