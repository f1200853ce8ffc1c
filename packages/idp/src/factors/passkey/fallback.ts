import { randomToken } from '../../crypto/secrets.js';
import type { EventLog } from '../../events/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { MailTemplates } from '../../mail/templates.js';
import type { MfaStore } from '../../sign-in/mfa-store.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import type { PasskeyStore } from './store.js';

export interface PasskeyFallbackDeps {
  store: Pick<MfaStore, 'replaceMethod'>;
  enabledUsers: EnabledUserStore;
  events: EventLog;
  mailer: Mailer;
  templates: MailTemplates;
  now: () => number;
  /** Named in the notice when no application is. */
  issuerName: string;
  /** How many active passkeys the user holds (any application): a passkey-MFA user keeps at least one, or falls back to email. */
  passkeys: Pick<PasskeyStore, 'countForUser'>;
}

export interface PasskeyFallback {
  /**
   * The last passkey of a user whose MFA method is a passkey was revoked (by the user, the
   * application's backend or an operator): the method falls back to email rather than lock the
   * user out, the user is told by mail (the fall-back is never silent), and the event is
   * recorded. Nothing happens while the user keeps another passkey or has another method.
   */
  revoked(userId: string, context: { clientId?: string; clientName?: string; actor?: string }): Promise<boolean>;
}

export function createPasskeyFallback(deps: PasskeyFallbackDeps): PasskeyFallback {
  const { store, enabledUsers, events, now } = deps;
  return {
    async revoked(userId, context) {
      if ((await deps.passkeys.countForUser(userId)) > 0) return false;
      const email = { method: 'email' as const, phone: null, totpSecretSealed: null, lastTotpStep: null, version: randomToken('', 12) };
      if (!(await store.replaceMethod(userId, 'passkey', email, now()))) return false;
      const user = await enabledUsers.findById(userId);
      const notice =
        user &&
        deps.templates.render('mfa-passkey-fallback', user.email, { client: context.clientName ?? deps.issuerName, method: 'email' });
      // A lost notice must not undo the fall-back (the event below records it).
      if (notice) await deps.mailer.send(notice).catch(() => undefined);
      await events.record({
        type: 'mfa.changed',
        userId,
        ...(context.clientId ? { clientId: context.clientId } : {}),
        ...(context.actor ? { actor: context.actor } : {}),
        detail: { method: 'email', from: 'passkey', reason: 'last_passkey_revoked' },
      });
      return true;
    },
  };
}
