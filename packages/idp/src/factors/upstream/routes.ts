import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply } from 'fastify';
import {
  CONNECTION_PRESETS,
  type ConfirmLinkResponse,
  type UpstreamConnectionList,
  type UpstreamDeviceResponse,
  UpstreamPaths,
} from 'service-protocol';
import { type TSchema, Type } from 'typebox';
import { HOSTED_CLIENT_ID } from '../../clients/service.js';
import type { Connections } from '../../connections/service.js';
import { UPSTREAM_FLOW_TTL_SECONDS } from '../../defaults.js';
import { ServiceError } from '../../errors.js';
import { escapeHtml, sendPage } from '../../http/page.js';
import { BODY_ERRORS, errorResponses, Otp, rawResponse, SERVER_ERRORS, wireBody } from '../../http/schemas.js';
import type { SignedInResult } from './continue.js';
import type { UpstreamService } from './service.js';

const HTML = 'text/html';
const refusedPage = rawResponse(HTML, 'an error page: the request was refused before a return URL could be trusted');
const Base64Url = Type.String({ pattern: '^[A-Za-z0-9_-]{43}$' });
const Visible = (max: number) => Type.String({ minLength: 1, maxLength: max });

const StartSchema = {
  querystring: Type.Object(
    {
      connection: Visible(100),
      key: Type.String({ maxLength: 200 }),
      return_to: Type.String({ maxLength: 2000 }),
      state: Visible(200),
      code_challenge: Visible(128),
      request: Type.Optional(Visible(100)),
      /** The hosted pages: the page's device key (base64url JSON JWK), registered when the sign-in finishes. */
      device_key: Type.Optional(Type.String({ minLength: 40, maxLength: 400, pattern: '^[A-Za-z0-9_-]+$' })),
      /** Applications: the page finishes the sign-in with its device key (DEVICE_KEY_NEEDED). */
      remember_device: Type.Optional(Type.Literal('1')),
    },
    { additionalProperties: false },
  ),
  response: {
    303: { description: 'to the provider, with the flow cookie set' },
    400: refusedPage,
    ...errorResponses(401, 403, 404, 429, ...SERVER_ERRORS),
  },
};
const CallbackResponses = {
  303: { description: "to the page's return URL with the result in its fragment (status, state, and code, sessionId or link)" },
  400: refusedPage,
  ...errorResponses(...SERVER_ERRORS),
};

const ConnectionsAnswer = wireBody<UpstreamConnectionList>()(
  Type.Object({
    connections: Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        preset: Type.Unsafe<(typeof CONNECTION_PRESETS)[number]>({ type: 'string', enum: [...CONNECTION_PRESETS] }),
      }),
    ),
  }),
);
const DeviceIdField = Type.String({ description: 'the device the code is bound to (at MFA_REQUIRED: its id once the step passes)' });
/** The link and device steps' answer: a code or the MFA step, with `deviceId` as given (optional at the link step, always after a ticket). */
const signedInAnswer = <D extends TSchema>(deviceId: D) =>
  Type.Union([
    Type.Object({ status: Type.Literal('SUCCESS'), message: Type.String(), success: Type.Literal(true), code: Type.String(), deviceId }),
    Type.Object({
      status: Type.Literal('MFA_REQUIRED'),
      message: Type.String(),
      sessionId: Type.String(),
      method: Type.String(),
      deviceId,
    }),
  ]);
const ConfirmLinkAnswer = wireBody<ConfirmLinkResponse>()(signedInAnswer(Type.Optional(DeviceIdField)));
const DeviceAnswer = wireBody<UpstreamDeviceResponse>()(signedInAnswer(DeviceIdField));
// EC P-256 public members only, so no private `d` can be sent.
const DevicePublicKey = Type.Object(
  { kty: Type.Literal('EC'), crv: Type.Literal('P-256'), x: Base64Url, y: Base64Url },
  { additionalProperties: false },
);

/** The link and device steps' answer: the sign-in goes on as any other (a code, or the MFA step). */
function answerOf(result: SignedInResult, done: string): ConfirmLinkResponse {
  const device = result.status !== 'ERROR' && result.deviceId ? { deviceId: result.deviceId } : {};
  if (result.status === 'SUCCESS') return { status: 'SUCCESS', message: done, success: true, code: result.code, ...device };
  if (result.status === 'MFA_REQUIRED')
    return {
      status: 'MFA_REQUIRED',
      message: 'Verify with your second factor to finish signing in.',
      sessionId: result.sessionId,
      method: result.method,
      ...device,
    };
  throw new ServiceError('ERR_REQUEST_INVALID', result.message);
}

/** The flow cookie's name: __Host- pins it to this host with an https issuer. */
export const flowCookieName = (issuer: string) => (issuer.startsWith('https:') ? '__Host-service_upstream' : 'service_upstream');

/**
 * The top-level navigations of an upstream sign-in (docs/protocol.md, "Continue with an
 * upstream provider"): the start, which sends the browser to the provider, and the callback
 * (GET, or POST for a form_post provider: Apple), which sends it back to the page.
 */
export const upstreamRoutes: FastifyPluginAsyncTypebox<{
  upstream: UpstreamService;
  issuer: string;
  bindingCookie: string;
  cookies: (header: string | undefined) => Map<string, string>;
}> = async (app, { upstream, issuer, bindingCookie, cookies }) => {
  const secure = issuer.startsWith('https:');
  const name = flowCookieName(issuer);
  // SameSite=None where it can be (https): a form_post provider's answer is a cross-site POST,
  // which a Lax cookie would not join. The state in it, not the cookie's reach, is the binding.
  // A `__Host-` cookie must have Path=/ (RFC 6265bis 4.1.3.2), or browsers drop it and every callback
  // fails; its name keeps it apart. Over http (no prefix) it stays under /upstream.
  const flowCookie = (value: string, maxAge: number) =>
    `${name}=${value}; Path=${secure ? '/' : '/upstream'}; Max-Age=${maxAge}; HttpOnly; ${secure ? 'SameSite=None; Secure' : 'SameSite=Lax'}`;

  const refusedHere = (reply: FastifyReply, error: unknown) => {
    if (!(error instanceof ServiceError) || !error.expose) throw error;
    return sendPage(reply, 400, 'Sign-in refused', `<h1>Sign-in refused</h1><p>${escapeHtml(error.message)}</p>`);
  };

  // A malformed navigation gets the refusal page too, not the API's JSON body.
  const malformed = (reply: FastifyReply, error: Error) =>
    sendPage(
      reply,
      400,
      'Sign-in refused',
      `<h1>Sign-in refused</h1><p>${escapeHtml(`This sign-in link is malformed (${error.message}).`)}</p>`,
    );

  app.get(UpstreamPaths.start, { schema: StartSchema, attachValidation: true }, async (request, reply) => {
    if (request.validationError) return malformed(reply, request.validationError);
    const q = request.query;
    try {
      const go = await upstream.start(
        {
          connection: q.connection,
          key: q.key,
          returnTo: q.return_to,
          state: q.state,
          codeChallenge: q.code_challenge,
          ...(q.request !== undefined ? { request: q.request } : {}),
          ...(q.device_key !== undefined ? { deviceKey: q.device_key } : {}),
          ...(q.remember_device ? { rememberDevice: true } : {}),
          ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
        },
        cookies(request.headers.cookie).get(bindingCookie),
        request.ip,
      );
      if (go.cookie) reply.header('set-cookie', flowCookie(go.cookie, UPSTREAM_FLOW_TTL_SECONDS));
      return reply.code(303).header('location', go.location).send();
    } catch (error) {
      // A rate limit or a missing client keeps its own status (the error handler's answer).
      if (error instanceof ServiceError && !['ERR_REQUEST_INVALID', 'ERR_SESSION_INVALID', 'ERR_DEVICE_KEY_INVALID'].includes(error.code))
        throw error;
      return refusedHere(reply, error);
    }
  });

  const callback = async (params: URLSearchParams, cookieHeader: string | undefined, ip: string, reply: FastifyReply) => {
    try {
      const back = await upstream.callback(params, cookies(cookieHeader).get(name), ip);
      // The flow is over either way: its cookie goes.
      reply.header('set-cookie', flowCookie('', 0));
      return reply.code(303).header('location', back.location).send();
    } catch (error) {
      return refusedHere(reply, error);
    }
  };
  // RFC 6749 4.1.2 and 4.1.2.1, RFC 9207 `iss`, Apple's `user` (the name, first sign-in only); others pass through.
  const Param = Type.Optional(Type.String({ maxLength: 8000 }));
  const CallbackQuery = Type.Object(
    { code: Param, state: Param, iss: Param, error: Param, error_description: Param, error_uri: Param, user: Param },
    { additionalProperties: Type.String({ maxLength: 8000 }) },
  );
  app.get(
    UpstreamPaths.callback,
    { schema: { querystring: CallbackQuery, response: CallbackResponses }, attachValidation: true },
    async (request, reply) =>
      request.validationError
        ? malformed(reply, request.validationError)
        : callback(new URLSearchParams(request.query as Record<string, string>), request.headers.cookie, request.ip, reply),
  );
  app.post(
    UpstreamPaths.callback,
    { schema: { body: CallbackQuery, response: { ...CallbackResponses, ...errorResponses(413, 415) } } },
    async (request, reply) =>
      callback(new URLSearchParams(request.body as Record<string, string>), request.headers.cookie, request.ip, reply),
  );
};

/** The browser API's part (under /v1, publishable key): the buttons an application shows, and the link's emailed code. */
export const upstreamBrowserRoutes: FastifyPluginAsyncTypebox<{
  upstream: UpstreamService;
  connections: Pick<Connections, 'forClient'>;
  /** The hosted pages: the app whose pending request the page serves. */
  appOf: (requestId: string | undefined, binding: string | undefined) => Promise<string>;
  bindingCookie: string;
  cookies: (header: string | undefined) => Map<string, string>;
  requestHeader: string;
}> = async (app, { upstream, connections, appOf, bindingCookie, cookies, requestHeader }) => {
  app.get(
    UpstreamPaths.connections.slice('/v1'.length),
    { schema: { response: { 200: ConnectionsAnswer, ...errorResponses(400, 401, 403, ...SERVER_ERRORS) } } },
    async (request) => {
      const pending = request.headers[requestHeader];
      const clientId =
        request.client.id === HOSTED_CLIENT_ID
          ? await appOf(typeof pending === 'string' ? pending : undefined, cookies(request.headers.cookie).get(bindingCookie))
          : request.client.id;
      return { connections: await connections.forClient(clientId) };
    },
  );
  app.post(
    UpstreamPaths.confirmLink.slice('/v1'.length),
    {
      schema: {
        body: Type.Object(
          {
            link: Type.String({ minLength: 10, maxLength: 100 }),
            otp: Otp,
            devicePublicKey: Type.Optional(DevicePublicKey),
          },
          { additionalProperties: false },
        ),
        response: { 200: ConfirmLinkAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, 423, 429, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<ConfirmLinkResponse> => {
      const { link, otp, devicePublicKey } = request.body;
      const userAgent = request.headers['user-agent'];
      const device = devicePublicKey && { jwk: devicePublicKey, userAgent };
      return answerOf(await upstream.confirmLink(request.client, link, otp, device), 'Signed in; the identity is linked.');
    },
  );
  app.post(
    UpstreamPaths.device.slice('/v1'.length),
    {
      schema: {
        body: Type.Object(
          { ticket: Type.String({ minLength: 20, maxLength: 2000, pattern: '^[A-Za-z0-9_-]+$' }), devicePublicKey: DevicePublicKey },
          { additionalProperties: false },
        ),
        response: { 200: DeviceAnswer, ...errorResponses(...BODY_ERRORS, 401, 403, 423, 429, ...SERVER_ERRORS) },
      },
    },
    async (request): Promise<UpstreamDeviceResponse> => {
      const { ticket, devicePublicKey } = request.body;
      const device = { jwk: devicePublicKey, userAgent: request.headers['user-agent'] };
      const answer = answerOf(await upstream.finishWithDevice(request.client, ticket, device), 'Signed in; this browser is remembered.');
      // finishWithDevice always has a device: the page keeps its key under this id.
      return answer as UpstreamDeviceResponse;
    },
  );
};
