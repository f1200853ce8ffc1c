import type { Locales } from '../i18n/locales.js';
import { requestLanguage } from '../i18n/request-locale.js';
import type { Mailer, OutgoingMail } from './mailer.js';
import type { LocalizableMail } from './templates.js';

/**
 * Sends every templated mail in its recipient's language: the language the browser asking for
 * it chose (the switcher's cookie, or the language its hosted page was shown in), else the
 * recipient's saved choice, else the browser's Accept-Language, else English. A mail sent
 * outside a request (the CLI, a sweep) goes in the saved choice or English. Within a request
 * for an application, the mail names that application by its display name (branding).
 */
export function createLocalizedMailer(
  inner: Mailer,
  deps: {
    locales: Locales;
    savedLocale: (email: string) => Promise<string | undefined>;
    /** The name of the application the request acts for, as its users know it (its display name), if any. */
    appName?: () => Promise<string | undefined>;
  },
): Mailer {
  return {
    async send(mail: OutgoingMail | LocalizableMail) {
      if (!('localize' in mail)) return inner.send(mail);
      const context = requestLanguage();
      const saved = context?.chosen ? undefined : await deps.savedLocale(mail.to).catch(() => undefined);
      const locale = deps.locales.negotiate({
        ...(context?.chosen ? { chosen: context.chosen } : {}),
        ...(saved ? { saved } : {}),
        ...(context?.acceptLanguage ? { acceptLanguage: context.acceptLanguage } : {}),
      });
      // A mail names the application the user is signing in to by the name its users know, whatever name its sender had.
      const app = await deps.appName?.().catch(() => undefined);
      const { to, subject, text, html } = mail.localize(locale, app);
      return inner.send({ to, subject, text, html });
    },
    describe: () => inner.describe(),
    close: () => inner.close(),
  };
}
