import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { ORGANIZATION_NAME_MAX_LENGTH } from '../defaults.js';
import { errorResponses, rawResponse, SERVER_ERRORS } from '../http/schemas.js';
import type { MessageKey } from '../i18n/messages/en.js';
import { OrganizationRefusal, type OrganizationSelfService, type RefusalReason } from '../organizations/self-service.js';
import { type AccountHttp, actionResponses, Csrf, HTML } from './http.js';
import { leavePageHtml, organizationPageHtml } from './organization-page.js';
import { ACCOUNT_PATH, type AccountCenter } from './service.js';

/** Where an organization's pages live: /account/organizations/<id>. */
export const ORGANIZATIONS_PATH = `${ACCOUNT_PATH}/organizations`;

const Id = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });
const Params = Type.Object({ id: Id });
const RoleName = Type.String({ maxLength: 100 });
const RolesField = Type.Optional(Type.Union([RoleName, Type.Array(RoleName, { maxItems: 50 })]));
/** What a success tells on the organization's page after its redirect (a fixed set: nothing from the URL is echoed). */
const DONE = ['created', 'invited', 'resent', 'revoked', 'roles', 'removed'] as const;
type Done = (typeof DONE)[number];

const REFUSED: Record<RefusalReason, { status: number; key: MessageKey }> = {
  off: { status: 403, key: 'page.account.org.refused.off' },
  'not configured': { status: 503, key: 'page.account.org.refused.notConfigured' },
  limit: { status: 403, key: 'page.account.org.refused.limit' },
  name: { status: 400, key: 'page.account.org.refused.name' },
  unknown: { status: 404, key: 'page.account.org.refused.unknown' },
  'last admin': { status: 409, key: 'page.account.org.refused.lastAdmin' },
  'unknown role': { status: 400, key: 'page.account.org.refused.unknownRole' },
  'not a member': { status: 404, key: 'page.account.org.refused.notMember' },
  invitation: { status: 400, key: 'page.account.org.refused.invitation' },
  email: { status: 400, key: 'page.account.org.refused.email' },
  'too many': { status: 429, key: 'page.account.org.refused.tooMany' },
};

const rolesOf = (field: string | string[] | undefined) => (field === undefined ? [] : Array.isArray(field) ? field : [field]);
const pageResponses = (description: string) => ({
  200: rawResponse(HTML, description),
  303: { description: 'to /account/signin (no session)' },
  404: rawResponse(HTML, 'no organization the user manages (or belongs to) has this id'),
  ...errorResponses(400, ...SERVER_ERRORS),
});
const refusals = {
  400: rawResponse(HTML, 'a refused change (the page says why; nothing changed)'),
  404: rawResponse(HTML, 'no organization the user manages has this id, or no such member'),
  409: rawResponse(HTML, 'the organization would have no admin left'),
  429: rawResponse(HTML, 'too many invitations for this organization'),
  503: rawResponse(HTML, 'creating organizations is not set up (the operator has no role that manages organizations)'),
};
const changeResponses = (description: string) => ({ ...actionResponses(description), ...refusals });

/** What both plugins share: refusals as pages, a change then back to a page, the signed-in viewer of a GET. */
function organizationHelpers(account: AccountCenter, http: AccountHttp) {
  const { message, act, cookieOf } = http;

  /** A refusal as the page saying why (nothing changed); anything else goes on to the one error serialiser. */
  const refused = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    if (!(error instanceof OrganizationRefusal)) throw error;
    const { status, key } = REFUSED[error.reason];
    return message(request, reply, status, key, 'back', error.values);
  };
  /** Runs a change for the signed-in caller (CSRF, origin), then back to `to` with what was done. */
  const change = (request: FastifyRequest, reply: FastifyReply, run: (userId: string) => Promise<string>) =>
    act(request, reply, false, async (who) => {
      try {
        const to = await run(who.userId);
        return reply.code(303).header('location', to).send();
      } catch (error) {
        return refused(request, reply, error);
      }
    });
  /** The signed-in user of a GET, or undefined after answering with a redirect to the sign-in. */
  const viewer = async (request: FastifyRequest, reply: FastifyReply) => {
    const cookie = cookieOf(request);
    const who = cookie ? await account.authenticate(cookie) : undefined;
    if (!who) reply.code(303).header('location', `${ACCOUNT_PATH}/signin`).send();
    return who;
  };

  return { page: http.page, refused, change, viewer };
}

const pageOf = (id: string, done: Done) => `${ORGANIZATIONS_PATH}/${encodeURIComponent(id)}?done=${done}`;

/**
 * The user's organizations in the account center (docs/organizations.md, "Organization admins
 * and self-service"): create one (when the operator offers it), leave one (a confirmation page,
 * then a POST). Every change is a POST from these pages with the session's CSRF token
 * (account-center/http.ts `act`); the list itself is on the account page (page.ts).
 */
export const accountOrganizationRoutes: FastifyPluginAsyncTypebox<{
  account: AccountCenter;
  http: AccountHttp;
  organizations: OrganizationSelfService;
}> = async (app, { account, http, organizations }) => {
  const { page, message, act } = http;
  const { refused, change, viewer } = organizationHelpers(account, http);
  const form = (request: FastifyRequest, locale: string) => http.form(request, locale);

  app.get(
    `${ORGANIZATIONS_PATH}/:id/leave`,
    { schema: { params: Params, response: pageResponses('asks to confirm leaving the organization') } },
    async (request, reply) => {
      const who = await viewer(request, reply);
      if (!who) return reply;
      const held = (await organizations.mine(who.userId)).find((m) => m.organization.id === request.params.id);
      if (!held) return message(request, reply, 404, 'page.account.org.refused.notMember', 'back');
      return page(request, reply, 200, (locale) => leavePageHtml(form(request, locale), held.organization));
    },
  );

  app.post(
    ORGANIZATIONS_PATH,
    {
      schema: {
        body: Type.Object({ csrf: Type.Optional(Csrf), name: Type.String({ maxLength: ORGANIZATION_NAME_MAX_LENGTH * 4 }) }),
        response: {
          ...changeResponses("to the new organization's page"),
          403: rawResponse(HTML, 'not offered, over the limit, or a refused call'),
        },
      },
    },
    async (request, reply) =>
      change(request, reply, async (userId) => pageOf((await organizations.create(userId, request.body.name)).id, 'created')),
  );

  app.post(
    `${ORGANIZATIONS_PATH}/:id/leave`,
    {
      schema: {
        params: Params,
        body: Type.Object({ csrf: Type.Optional(Csrf) }),
        response: { ...changeResponses(''), 200: rawResponse(HTML, 'left') },
      },
    },
    async (request, reply) =>
      act(request, reply, false, async (who) => {
        const held = (await organizations.mine(who.userId)).find((m) => m.organization.id === request.params.id);
        try {
          await organizations.leave(who.userId, request.params.id);
        } catch (error) {
          return refused(request, reply, error);
        }
        return message(request, reply, 200, 'page.account.orgs.left', 'back', { organization: held?.organization.name ?? '' });
      }),
  );
};

/**
 * The page of an organization its admin manages (docs/organizations.md, "Organization admins and
 * self-service"): members and their roles, invitations sent, resent and revoked. The organization
 * is the one in the path, checked against the caller's own roles there by the service
 * (organizations/self-service.ts), and every member or invitation id is looked up in it alone.
 */
export const accountManagedOrganizationRoutes: FastifyPluginAsyncTypebox<{
  account: AccountCenter;
  http: AccountHttp;
  organizations: OrganizationSelfService;
}> = async (app, { account, http, organizations }) => {
  const { page, refused, change, viewer } = organizationHelpers(account, http);
  const form = (request: FastifyRequest, locale: string) => http.form(request, locale);

  app.get(
    `${ORGANIZATIONS_PATH}/:id`,
    {
      schema: {
        params: Params,
        querystring: Type.Object({ done: Type.Optional(Type.String({ maxLength: 20 })) }),
        response: pageResponses("the organization's page, for its admin"),
      },
    },
    async (request, reply) => {
      const who = await viewer(request, reply);
      if (!who) return reply;
      try {
        const managed = await organizations.managed(who.userId, request.params.id);
        const done = DONE.find((d) => d === request.query.done);
        return page(request, reply, 200, (locale) =>
          organizationPageHtml({ ...form(request, locale), managed, userId: who.userId, ...(done ? { done } : {}) }),
        );
      } catch (error) {
        return refused(request, reply, error);
      }
    },
  );

  const Member = Type.String({ minLength: 1, maxLength: 100 });
  app.post(
    `${ORGANIZATIONS_PATH}/:id/members/roles`,
    {
      schema: {
        params: Params,
        body: Type.Object({ csrf: Type.Optional(Csrf), member: Member, roles: RolesField }),
        response: changeResponses("back to the organization's page"),
      },
    },
    async (request, reply) =>
      change(request, reply, async (userId) => {
        await organizations.setMemberRoles(userId, request.params.id, request.body.member, rolesOf(request.body.roles));
        return pageOf(request.params.id, 'roles');
      }),
  );

  app.post(
    `${ORGANIZATIONS_PATH}/:id/members/remove`,
    {
      schema: {
        params: Params,
        body: Type.Object({ csrf: Type.Optional(Csrf), member: Member }),
        response: changeResponses("back to the organization's page"),
      },
    },
    async (request, reply) =>
      change(request, reply, async (userId) => {
        await organizations.removeMember(userId, request.params.id, request.body.member);
        return pageOf(request.params.id, 'removed');
      }),
  );

  app.post(
    `${ORGANIZATIONS_PATH}/:id/invitations`,
    {
      schema: {
        params: Params,
        body: Type.Object({ csrf: Type.Optional(Csrf), email: Type.String({ maxLength: 320 }), roles: RolesField }),
        response: changeResponses("back to the organization's page"),
      },
    },
    async (request, reply) =>
      change(request, reply, async (userId) => {
        await organizations.invite(userId, request.params.id, request.body.email, rolesOf(request.body.roles));
        return pageOf(request.params.id, 'invited');
      }),
  );

  const Invitation = Type.String({ minLength: 1, maxLength: 120 });
  for (const verb of ['resend', 'revoke'] as const)
    app.post(
      `${ORGANIZATIONS_PATH}/:id/invitations/${verb}`,
      {
        schema: {
          params: Params,
          body: Type.Object({ csrf: Type.Optional(Csrf), invitation: Invitation }),
          response: changeResponses("back to the organization's page"),
        },
      },
      async (request, reply) =>
        change(request, reply, async (userId) => {
          await organizations[verb](userId, request.params.id, request.body.invitation);
          return pageOf(request.params.id, verb === 'resend' ? 'resent' : 'revoked');
        }),
    );
};
