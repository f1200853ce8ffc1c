import type { PasskeyAttestationJson, PasskeyCreationOptionsJson } from 'service-protocol';
import type { ClientRecord } from '../../clients/store.js';
import type { Mailer } from '../../mail/mailer.js';
import { type MailTemplates, mailTime } from '../../mail/templates.js';
import type { PasskeyService } from './service.js';

/** Whom a passkey is added for, as the caller already knows them, and the ceremony's binding. */
export interface KnownUser {
  userId: string;
  email: string;
  /** What the challenge is bound to (a held sign-in's pending request, an account session). */
  context: string;
  /** The application the mail names. */
  appName: string;
}

export interface KnownUserPasskeyDeps {
  passkeyService: Pick<PasskeyService, 'heldRegistrationOptions' | 'register'>;
  mailer: Mailer;
  templates: MailTemplates;
  now: () => number;
}

/**
 * A passkey added for a user the caller has already signed in (the hosted pages' offer after a
 * held sign-in, the account center's session): the ceremony bound to `context` (single-use
 * challenge, that user only), then the user told by mail, best effort as every notice.
 */
export function createKnownUserPasskeys(deps: KnownUserPasskeyDeps) {
  return {
    options: (client: ClientRecord, origin: string | undefined, who: KnownUser): Promise<PasskeyCreationOptionsJson> =>
      deps.passkeyService.heldRegistrationOptions(client, origin, { id: who.userId, email: who.email }, who.context),

    async add(
      client: ClientRecord,
      origin: string | undefined,
      credential: PasskeyAttestationJson,
      name: string | undefined,
      who: KnownUser,
    ): Promise<{ deviceId: string; synced: boolean }> {
      const added = await deps.passkeyService.register(client, origin, credential, name, { context: who.context, userId: who.userId });
      await deps.mailer
        .send(deps.templates.render('passkey-added', who.email, { client: who.appName, time: mailTime(deps.now()) }))
        .catch(() => undefined);
      return { deviceId: added.deviceId, synced: added.synced };
    },
  };
}
