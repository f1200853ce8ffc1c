import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { type AdminClientBranding, type AdminSettings, Paths } from 'service-protocol';
import { Type } from 'typebox';
import {
  BRAND_NAME_MAX_LENGTH,
  BRANDING_ASSET_MAX_AGE_SECONDS,
  LOGO_MAX_BYTES,
  MAIL_SENDER_NAME_MAX_LENGTH,
  REDIRECT_URI_MAX_LENGTH,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { AdminRoutes } from '../http/admin-routes.js';
import { BODY_ERRORS, errorResponses, rawResponse, SERVER_ERRORS, wireBody } from '../http/schemas.js';
import type { Branding, BrandingChange, SettingsChange } from './service.js';

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const errors = errorResponses(400, 401, 403, 404, ...SERVER_ERRORS);
const bodyErrors = errorResponses(...BODY_ERRORS, 401, 403, 404, ...SERVER_ERRORS);
const Params = Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' }) });
/**
 * Base64 of up to twice LOGO_MAX_BYTES passes the schema, so an image a little too large gets
 * the service's own 400 naming the limit; a body far larger is refused unread (413).
 */
const LOGO_BASE64_MAX_LENGTH = Math.ceil((2 * LOGO_MAX_BYTES) / 3) * 4;

const BrandingAnswer = wireBody<AdminClientBranding>()(
  Type.Object({
    clientId: Type.String(),
    displayName: Nullable(Type.String()),
    accent: Nullable(Type.String({ description: '#rrggbb' })),
    accentText: Nullable(Type.String({ description: 'the label colour picked for a button on the accent' })),
    termsUrl: Nullable(Type.String()),
    privacyUrl: Nullable(Type.String()),
    mailSenderName: Nullable(Type.String()),
    logoUrl: Nullable(Type.String({ description: 'absolute, content-addressed, cached for a year' })),
  }),
);
const SettingsAnswer = wireBody<AdminSettings>()(
  Type.Object({
    productName: Type.String(),
    policyUrl: Nullable(Type.String({ description: "discovery's op_policy_uri" })),
    termsUrl: Nullable(Type.String({ description: "discovery's op_tos_uri" })),
    documentationUrl: Nullable(Type.String({ description: "discovery's service_documentation" })),
  }),
);
const SettingsBody = Type.Object(
  {
    productName: Type.Optional(Type.String({ maxLength: BRAND_NAME_MAX_LENGTH * 2 })),
    policyUrl: Type.Optional(Nullable(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH * 2 }))),
    termsUrl: Type.Optional(Nullable(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH * 2 }))),
    documentationUrl: Type.Optional(Nullable(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH * 2 }))),
  },
  { additionalProperties: false, minProperties: 1, description: 'a field left out stays as it is; null (or "") clears a URL' },
);

const BrandingBody = Type.Object(
  {
    displayName: Type.Optional(Nullable(Type.String({ maxLength: BRAND_NAME_MAX_LENGTH * 2 }))),
    accent: Type.Optional(Nullable(Type.String({ maxLength: 100, description: '#RRGGBB; WCAG AA contrast checked' }))),
    termsUrl: Type.Optional(Nullable(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH * 2 }))),
    privacyUrl: Type.Optional(Nullable(Type.String({ maxLength: REDIRECT_URI_MAX_LENGTH * 2 }))),
    mailSenderName: Type.Optional(Nullable(Type.String({ maxLength: MAIL_SENDER_NAME_MAX_LENGTH * 2 }))),
    logo: Type.Optional(
      Nullable(
        Type.String({
          maxLength: LOGO_BASE64_MAX_LENGTH,
          pattern: '^[A-Za-z0-9+/]*={0,2}$',
          description: `base64 of a PNG, JPEG or WebP image of at most ${LOGO_MAX_BYTES} bytes (SVG is refused); null or "" removes it`,
        }),
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1, description: 'a field left out stays as it is; null (or "") clears it' },
);

/**
 * /admin/v1/settings and /admin/v1/clients/{id}/branding: what `service-idp settings` and
 * `clients update --logo --accent …` do, registered inside the admin routes (their admin-key
 * hook applies). Every value is checked before anything is stored (operations → branding).
 */
export const brandingAdminRoutes =
  ({
    branding,
    operations,
  }: {
    branding: Branding;
    operations: {
      setBranding(clientId: string, change: BrandingChange, actor: string): Promise<AdminClientBranding>;
      updateSettings(change: SettingsChange, actor: string): Promise<AdminSettings>;
    };
  }): AdminRoutes =>
  async (app) => {
    const notFound = (run: () => Promise<AdminClientBranding>) =>
      run().catch((error: unknown) => {
        if (error instanceof Error && !(error instanceof ServiceError) && /^no client /.test(error.message))
          throw new ServiceError('ERR_NOT_FOUND', `${error.message}.`);
        throw error;
      });

    app.get('/settings', { schema: { response: { 200: SettingsAnswer, ...errors } } }, async () => branding.settings());

    app.patch(
      '/settings',
      {
        schema: {
          body: SettingsBody,
          response: { 200: SettingsAnswer, ...bodyErrors },
        },
      },
      async (request) => operations.updateSettings(request.body, request.adminActor),
    );

    app.get('/clients/:id/branding', { schema: { params: Params, response: { 200: BrandingAnswer, ...errors } } }, async (request) =>
      notFound(() => branding.show(request.params.id)),
    );

    app.patch(
      '/clients/:id/branding',
      {
        // The one admin body that may carry an image: room for LOGO_MAX_BYTES as base64 and the other fields.
        bodyLimit: LOGO_BASE64_MAX_LENGTH + 16 * 1024,
        schema: { params: Params, body: BrandingBody, response: { 200: BrandingAnswer, ...bodyErrors } },
      },
      async (request) => {
        const { logo, ...fields } = request.body;
        const change: BrandingChange = {
          ...fields,
          ...(logo === undefined ? {} : { logo: logo === null || logo === '' ? null : Buffer.from(logo, 'base64') }),
        };
        return operations.setBranding(request.params.id, change, request.adminActor);
      },
    );
  };

/** A content-addressed asset: stored by any cache for a year, never revalidated. */
const IMMUTABLE = `public, max-age=${BRANDING_ASSET_MAX_AGE_SECONDS}, immutable`;
const File = Type.Object({ file: Type.String({ maxLength: 100 }) });
const LogoResponse = {
  description: "an application's logo, of the type read from its bytes",
  content: Object.fromEntries(['image/png', 'image/jpeg', 'image/webp'].map((type) => [type, { schema: { type: 'string' } }])),
};

/**
 * The public branding assets: an application's logo by its content hash (pages and mails link
 * it; a new logo is a new URL) and the stylesheet of an accent colour (custom properties only,
 * so the pages' strict CSP, `style-src 'self'`, stays). Each answer is an image or a
 * stylesheet and nothing else: its own type, `nosniff` (every answer), and a CSP that lets it run nothing.
 */
export const brandingAssetRoutes: FastifyPluginAsyncTypebox<{ branding: Branding }> = async (app, { branding }) => {
  const missing = () => new ServiceError('ERR_NOT_FOUND', 'No such branding file.');
  app.get(
    `${Paths.brandingLogos}/:file`,
    {
      schema: {
        params: File,
        response: { 200: LogoResponse, ...errorResponses(404, ...SERVER_ERRORS) },
      },
    },
    async (request, reply) => {
      const logo = await branding.logo(request.params.file);
      if (!logo) throw missing();
      return reply
        .header('cache-control', IMMUTABLE)
        .header('content-security-policy', "default-src 'none'; sandbox")
        .type(logo.type)
        .send(logo.bytes);
    },
  );
  app.get(
    `${Paths.brandingAccent}/:file`,
    {
      schema: { params: File, response: { 200: rawResponse('text/css', "an accent colour's custom properties"), ...errorResponses(404) } },
    },
    async (request, reply) => {
      const css = branding.accentStylesheet(request.params.file);
      if (!css) throw missing();
      return reply.header('cache-control', IMMUTABLE).type('text/css; charset=utf-8').send(css);
    },
  );
};
