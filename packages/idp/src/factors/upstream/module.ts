import type { FactorModule } from '../module.js';
import { upstreamFactor } from './factor.js';
import { upstreamBrowserRoutes, upstreamRoutes } from './routes.js';

/** A sign-in at an upstream identity provider: a first factor only (amr `fed`), linked to the account on the account page. */
export const upstreamModule: FactorModule = {
  ...upstreamFactor,
  metrics: { first: 'upstream' },
  tables: ['linked_identities', 'upstream_link_proofs'],
  routes: {
    // The buttons an application shows and the link's emailed code (/v1), and the provider's start and callback (/upstream).
    browser: async (app, deps) =>
      app.register(upstreamBrowserRoutes, {
        upstream: deps.upstream,
        connections: deps.connections,
        appOf: (requestId, binding) => deps.upstream.hostedApp(requestId, binding),
        bindingCookie: deps.bindingCookie,
        cookies: deps.cookies,
        requestHeader: deps.requestHeader,
      }),
    root: async (app, deps) =>
      app.register(upstreamRoutes, {
        upstream: deps.upstream,
        issuer: deps.issuer,
        bindingCookie: deps.bindingCookie,
        cookies: deps.cookies,
      }),
  },
};
