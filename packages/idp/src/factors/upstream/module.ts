import type { FactorModule } from '../module.js';
import { upstreamFactor } from './factor.js';
import { upstreamBrowserRoutes, upstreamRoutes } from './routes.js';
import { createUpstreamStore } from './store.js';

/** A sign-in at an upstream identity provider: a first factor only (amr `fed`), linked to the account on the account page. */
export const upstreamModule: FactorModule = {
  ...upstreamFactor,
  // What the provider checked is not known here: no more than an emailed code.
  acr: { fed: 'otp' },
  metrics: { first: 'upstream' },
  tables: [
    { name: 'linked_identities', userColumn: 'user_id' },
    { name: 'upstream_link_proofs', userColumn: 'user_id' },
  ],
  sweep: (db, at) => createUpstreamStore(db).deleteExpired(at),
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
