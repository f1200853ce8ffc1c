import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

/**
 * The application a request acts for, kept for everything the request causes (a mail sent while
 * it is answered, branding/mailer.ts): set by the browser-client resolver once it knows the
 * client (for the hosted pages, the requesting application, never the built-in client).
 */
const current = new AsyncLocalStorage<{ app?: { id: string; name: string } }>();

/** The application of the request being answered, if one is known (none in the CLI or a sweep). */
export const requestApp = (): { id: string; name: string } | undefined => current.getStore()?.app;

/** Names the request's application (browser-client.ts, after resolving the client). */
export function setRequestApp(app: { id: string; name: string }): void {
  const store = current.getStore();
  // A copy: one object per request, so what is kept per application object lasts one request (branding/mailer.ts).
  if (store) store.app = { id: app.id, name: app.name };
}

/** Every request runs inside its own context (AsyncLocalStorage.run around the rest of its hooks and handler). */
export function trackRequestApp(app: FastifyInstance): void {
  app.addHook('onRequest', (_request, _reply, done) => {
    current.run({}, done);
  });
}
