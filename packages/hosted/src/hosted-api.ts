/**
 * The hosted pages' own routes (not service-web calls: they finish the authorization request
 * this page serves), with the request and answer types the service's routes are checked against
 * (service-protocol hosted.ts). Same origin: the browser sends the binding cookie and Origin.
 */
import type {
  Paths,
  SignInCompleteRequest,
  SignInCompleteResponse,
  SignInContinueRequest,
  SignInContinueResponse,
  SignInPasskeyOptionsRequest,
  SignInPasskeyOptionsResponse,
  SignInPasskeyRequest,
  SignInPasskeyResponse,
  SignInRedirect,
} from 'service-protocol';
import { t } from './i18n.js';
import { config, say } from './page.js';
import { newSessionKey } from './session-key.js';

/**
 * The routes' paths, checked against the protocol's Paths by type only: esbuild would keep the
 * whole Paths object in the bundle for four of its strings.
 */
export const Routes: Pick<typeof Paths, 'signInComplete' | 'signInContinue' | 'signInPasskeyOptions' | 'signInPasskey'> = {
  signInComplete: '/signin/complete',
  signInContinue: '/signin/continue',
  signInPasskeyOptions: '/signin/passkey/options',
  signInPasskey: '/signin/passkey',
};

interface HostedRoutes {
  [Routes.signInComplete]: [SignInCompleteRequest, SignInCompleteResponse];
  [Routes.signInContinue]: [SignInContinueRequest, SignInContinueResponse];
  [Routes.signInPasskeyOptions]: [SignInPasskeyOptionsRequest, SignInPasskeyOptionsResponse];
  [Routes.signInPasskey]: [SignInPasskeyRequest, SignInPasskeyResponse];
}

/** One POST of a hosted route: its answer, or undefined once the service's refusal is said. */
export async function post<P extends keyof HostedRoutes>(path: P, body: HostedRoutes[P][0]): Promise<HostedRoutes[P][1] | undefined> {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = (await response.json()) as HostedRoutes[P][1] & { message?: string };
  if (!response.ok) say(t('hosted.status.expired'));
  return response.ok ? answer : undefined;
}

/** Finishes the held sign-in: the app gets its code (once: the service consumes the request). */
export async function continueSignIn(): Promise<void> {
  say(t('hosted.status.signingIn'));
  const sessionKey = await newSessionKey();
  const done = await post(Routes.signInContinue, { request: config.request, ...(sessionKey ? { sessionKey } : {}) });
  if (done) goToApp(done);
}

/**
 * Back to the app with its response: a navigation to its redirect URI, or with
 * response_mode=form_post a form of the response's fields posted there (the page's CSP lets
 * forms go to that origin only for such a request).
 */
export function goToApp(done: SignInRedirect): void {
  if (!done.form) {
    location.assign(done.location);
    return;
  }
  const form = document.createElement('form');
  form.method = 'post';
  form.action = done.location;
  form.hidden = true;
  for (const [name, value] of Object.entries(done.form)) {
    const field = document.createElement('input');
    field.type = 'hidden';
    field.name = name;
    field.value = value;
    form.append(field);
  }
  document.body.append(form);
  form.submit();
}
