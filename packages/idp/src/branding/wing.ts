import type { ClientService } from '../clients/service.js';
import { defineWing } from '../composition/wing.js';
import type { Locales } from '../i18n/locales.js';
import type { Mailer } from '../mail/mailer.js';
import type { Db } from '../storage/schema.js';
import { createAppMailer } from './mailer.js';
import { brandingAssetRoutes } from './routes.js';
import { createBranding } from './service.js';
import { createBrandingStore } from './store.js';

/**
 * Each application's look (its name, logo and accent in pages and mails) and the service's
 * settings, and the mailer every wing sends through: in its reader's language (the saved one),
 * branded as the request's application, over the mail wing's transport. The admin routes take
 * the operations (registered by the admin wing).
 */
export const brandingWing = defineWing(
  'branding',
  ({
    db,
    clients,
    config,
    issuerName,
    now,
    locales,
    mailTransport,
    enabledUsers,
  }: {
    db: Db;
    clients: ClientService;
    config: { issuer: string };
    issuerName: string;
    now: () => number;
    locales: Locales;
    mailTransport: Mailer;
    /** The language a user chose (users/enabled-store.ts). */
    enabledUsers: { localeOf(email: string): Promise<string | undefined> };
  }) => {
    // The product name until the operator sets one: the issuer's host name.
    const branding = createBranding({
      store: createBrandingStore(db),
      clients,
      issuer: config.issuer,
      defaultProductName: issuerName,
      now,
    });
    const mailer = createAppMailer(mailTransport, {
      locales,
      issuer: config.issuer,
      brandOf: (app) => branding.brandOf(app),
      savedLocale: (email) => enabledUsers.localeOf(email),
    });
    return {
      services: { branding, mailer },
      routes: {
        root: () => async (app) => {
          await app.register(brandingAssetRoutes, { branding });
        },
      },
    };
  },
);
