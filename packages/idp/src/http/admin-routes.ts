import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Who acts in an admin API request, set by the admin API's credential hook (admin/routes.ts)
     * and recorded in events: the admin key's id, or `operator:<email>` for the operator console.
     */
    adminActor: string;
  }
}

/**
 * One group of admin API routes (/admin/v1/…), the one convention for every wing's admin
 * routes: a factory takes the group's services and returns a plugin without options, which the
 * admin API (admin/routes.ts) registers inside its credential hook, so every group is behind an
 * admin key or a console session, answers no-store and is documented as such. A route reads who
 * acts from `request.adminActor`.
 */
export type AdminRoutes = FastifyPluginAsyncTypebox;
