/**
 * The account page's activity: every event type of the audit trail is either shown, in words in
 * the page's language (en, fr, de, es) with the application or provider it names, or hidden on
 * purpose (account-center/activity.ts, with why); the shown set is derived from the type list, so a new
 * type cannot slip in as a raw name or go missing. And the threat it answers: a sign-in to an
 * application by someone else (or with a recovery code) goes unnoticed by the user, because the
 * page never listed sign-ins to applications.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createPkcePair } from 'service-web';
import { ACTIVITY_HIDDEN, ACTIVITY_SHOWN } from '../../src/account-center/activity.js';
import { HOSTED_CLIENT_ID } from '../../src/clients/service.js';
import { EVENT_TYPES, type EventType } from '../../src/events/types.js';
import { escapeHtml } from '../../src/http/page.js';
import { BUILT_IN_CATALOGUES } from '../../src/i18n/locales.js';
import { accountSession, accountSuite } from '../support/account-helpers.js';
import type { TestService } from '../support/helpers.js';
import { uniqueEmail } from '../support/helpers.js';
import { appParams, authorize, hostedBrowser, registerApp } from '../support/oidc-helpers.js';

const LANGUAGES = ['en', 'fr', 'de', 'es'] as const;
const shownTypes = EVENT_TYPES.filter((type) => Object.hasOwn(ACTIVITY_SHOWN, type)) as (keyof typeof ACTIVITY_SHOWN)[];
const hiddenTypes = EVENT_TYPES.filter((type) => Object.hasOwn(ACTIVITY_HIDDEN, type)) as (keyof typeof ACTIVITY_HIDDEN)[];

describe('the account page`s activity', () => {
  let service: TestService;
  const { clock } = accountSuite((started) => {
    service = started;
  });

  /** The activity list items of the account page in `lang`: [data-event, text]. */
  async function activity(session: { session: string }, lang: string): Promise<{ type: string; html: string }[]> {
    const page = await fetch(`${service.url}/account?ui_locales=${lang}`, { headers: { cookie: `service_account=${session.session}` } });
    assert.equal(page.status, 200);
    const html = await page.text();
    const section = html.match(/<section aria-labelledby="h-activity">(.*?)<\/section>/s)?.[1] ?? '';
    return [...section.matchAll(/<li data-event="([^"]+)">(.*?)<\/li>/gs)].map((m) => ({ type: m[1] ?? '', html: m[2] ?? '' }));
  }

  /** A user who signed in to `app` through the hosted pages (a remembered browser), and their account session. */
  async function signedInAt(appName: string) {
    const app = await registerApp(service, appName);
    const email = uniqueEmail('activity');
    clock.tick();
    const browser = hostedBrowser(service);
    const start = await authorize(service, appParams(app.clientId, await createPkcePair()), browser.jar);
    assert.equal((await browser.signIn(start.location ?? '', email)).status, 200);
    const user = await service.ctx.users.find(email);
    const { devices } = await service.ctx.users.show(user.id);
    const deviceId = devices[0]?.id ?? '';
    return { app, browser, userId: user.id, deviceId, session: await accountSession(service, { userId: user.id, deviceId }, clock.now) };
  }

  it('places every event type: shown with words in every language, or hidden with why', () => {
    assert.deepEqual([...shownTypes, ...hiddenTypes].sort(), [...EVENT_TYPES].sort(), 'each type is shown or hidden');
    assert.deepEqual(
      shownTypes.filter((type) => hiddenTypes.includes(type as never)),
      [],
      'no type is both',
    );
    for (const type of hiddenTypes) assert.ok(ACTIVITY_HIDDEN[type].length > 20, `${type}: says why it is hidden`);
    for (const type of shownTypes)
      for (const lang of LANGUAGES) {
        const message = (BUILT_IN_CATALOGUES[lang] as Record<string, string>)[ACTIVITY_SHOWN[type]];
        assert.ok(message && !message.includes(type), `${type} in ${lang}: ${message}`);
      }
  });

  it('a sign-in to an application shows in words with the application`s name, in the page`s language, never a raw type', async () => {
    const { app, browser, session } = await signedInAt('Acme Wiki');
    // A second sign-in to the app from the SSO session (no page): listed too.
    assert.equal((await authorize(service, appParams(app.clientId, await createPkcePair()), browser.jar)).status, 303);
    const english = await activity(session, 'en');
    const signIns = english.filter((e) => e.type === 'sign_in.succeeded');
    assert.equal(signIns.length, 2, JSON.stringify(english));
    for (const signIn of signIns) assert.match(signIn.html, /^Signed in to Acme Wiki · /);
    assert.ok(english.some((e) => e.type === 'device.registered' && e.html.startsWith('Browser remembered')));
    assert.ok(english.some((e) => e.type === 'user.created' && e.html.startsWith('Account created')));
    assert.ok(english.some((e) => e.type === 'account.signed_in' && e.html.startsWith('Opened your account page')));
    const french = await activity(session, 'fr');
    assert.ok(french.some((e) => e.type === 'sign_in.succeeded' && e.html.startsWith('Connexion à Acme Wiki')));
    for (const lang of LANGUAGES)
      for (const { html } of await activity(session, lang))
        assert.ok(!EVENT_TYPES.some((type) => html.includes(type)) && !html.includes('<code>'), `${lang}: ${html}`);
  });

  it('shows every shown type in words in every language, the application named (a hosted sign-in`s app, too), and no hidden type', async () => {
    const { app, userId, session } = await signedInAt('Team Notes');
    const connection = await service.ctx.connections.create(
      { preset: 'google', name: 'Example Login', clientId: 'rp.apps.example', clientSecret: 'secret-secret' },
      'test',
    );
    const record = (type: EventType) =>
      service.ctx.events.record({
        type,
        userId,
        // As the hosted sign-in records a recovery code's use: its own client, the app it served in detail.app.
        ...(type === 'recovery_codes.used' ? { clientId: HOSTED_CLIENT_ID, detail: { remaining: 9, app: app.clientId } } : {}),
        ...(type === 'refresh_token.reused' ||
        type === 'account.app_signed_out' ||
        type.startsWith('consent.') ||
        type.startsWith('device.authorization_')
          ? { clientId: app.clientId }
          : {}),
        ...(type.startsWith('identity.') ? { detail: { connection: connection.id } } : {}),
      });
    // The page lists 20 at most: ten types at a time, each batch the newest.
    for (let at = 0; at < shownTypes.length; at += 10) {
      const batch = shownTypes.slice(at, at + 10);
      for (const type of batch) await record(type);
      for (const type of hiddenTypes) await record(type);
      for (const lang of LANGUAGES) {
        const listed = await activity(session, lang);
        for (const type of batch) {
          const words = escapeHtml(
            service.ctx.locales.text(lang, ACTIVITY_SHOWN[type], { app: 'Team Notes', connection: 'Example Login' }),
          );
          assert.ok(
            listed.some((e) => e.type === type && e.html.startsWith(`${words} · `)),
            `${type} in ${lang}: ${words} in ${JSON.stringify(listed)}`,
          );
        }
        assert.deepEqual(
          listed.filter((e) => hiddenTypes.includes(e.type as never)),
          [],
          'hidden types are never listed',
        );
      }
    }
  });
});
