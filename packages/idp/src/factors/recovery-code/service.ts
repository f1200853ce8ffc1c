import { randomInt } from 'node:crypto';
import { RECOVERY_CODE_PATTERN } from 'service-protocol';
import { randomToken, type SecretHasher } from '../../crypto/secrets.js';
import { RECOVERY_CODE_ALPHABET, RECOVERY_CODE_COUNT, RECOVERY_CODE_GROUP_LENGTH, RECOVERY_CODE_LENGTH } from '../../defaults.js';
import type { EventLog } from '../../events/service.js';
import type { Mailer } from '../../mail/mailer.js';
import type { MailTemplates } from '../../mail/templates.js';
import type { IssueCause, RecoveryCodeFactor } from '../../sign-in/factor.js';
import type { EnabledUserStore } from '../../users/enabled-store.js';
import type { RecoveryCodeStore } from './store.js';

/** True when `text` has the shape of a recovery code (not of a 6-digit code): the MFA steps tell the two apart by it. */
export const isRecoveryCode = (text: string): boolean => RECOVERY_CODE_PATTERN.test(text);

/** One code from the CSPRNG (randomInt rejects modulo bias), shown as XXXXX-XXXXX. */
export function drawRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < RECOVERY_CODE_LENGTH; i++) {
    if (i > 0 && i % RECOVERY_CODE_GROUP_LENGTH === 0) code += '-';
    code += RECOVERY_CODE_ALPHABET[randomInt(RECOVERY_CODE_ALPHABET.length)];
  }
  return code;
}

/** The code as stored: upper case, without separators, with Crockford's aliases (I and L read as 1, O as 0). */
export function normalizeRecoveryCode(text: string): string {
  return text.toUpperCase().replace(/[- ]/g, '').replace(/[IL]/g, '1').replace(/O/g, '0');
}

export interface RecoveryCodeDeps {
  store: RecoveryCodeStore;
  enabledUsers: EnabledUserStore;
  hash: SecretHasher;
  events: EventLog;
  mailer: Mailer;
  templates: MailTemplates;
  now: () => number;
}

/**
 * Recovery codes: RECOVERY_CODE_COUNT single-use look-up secrets (NIST SP 800-63B 5.1.2) that
 * stand in for the MFA method in force when it is lost. Issued at enrollment and on
 * regeneration (the new set replaces the old atomically), shown once, stored only as HMACs
 * bound to the user, used at most once each (atomic UPDATE). The guess rules are the MFA
 * session's (sign-in/mfa-session.ts): counted before checking, under the account lock-out.
 */
export function createRecoveryCodes(deps: RecoveryCodeDeps): RecoveryCodeFactor {
  const { store, enabledUsers, hash, events, now } = deps;
  const hashOf = (userId: string, code: string) => hash('recovery-code', `${userId}:${normalizeRecoveryCode(code)}`);

  /** Mails the account's address; a lost notice must not undo what happened. */
  async function notify(userId: string, template: 'recovery-code-used' | 'recovery-codes-regenerated', values: Record<string, string>) {
    const user = await enabledUsers.findById(userId);
    if (!user) return;
    await deps.mailer.send(deps.templates.render(template, user.email, { client: '', ...values })).catch(() => undefined);
  }

  return {
    name: 'recovery-code',
    second: ['recovery_code'],
    isCode: isRecoveryCode,

    /** Draws a new set, replaces the old one (which stops working at once), records why; returns the codes to show once. */
    async issue(userId: string, cause: IssueCause): Promise<string[]> {
      const codes = new Set<string>();
      while (codes.size < RECOVERY_CODE_COUNT) codes.add(drawRecoveryCode());
      const list = [...codes];
      await store.replaceSet(
        userId,
        list.map((code) => ({ id: randomToken('rc_', 12), codeHash: hashOf(userId, code) })),
        now(),
      );
      await events.record({
        type: cause.type,
        userId,
        ...('clientId' in cause ? { clientId: cause.clientId } : { actor: cause.actor }),
        detail: { count: list.length },
      });
      if (cause.type === 'recovery_codes.regenerated') await notify(userId, 'recovery-codes-regenerated', { client: cause.clientName });
      return list;
    },

    /** Spends the code if it is one of the user's unused codes: true for exactly one caller. */
    consume: (userId: string, code: string) => store.consume(userId, hashOf(userId, code), now()),

    /** After a code passed an MFA step: the audit event and the user's notice, with how many are left. */
    async recordUse(userId: string, client: { id: string; name: string; app?: { id: string } | undefined }): Promise<number> {
      const remaining = await store.remaining(userId);
      // At the hosted sign-in, `app` is the application it served (the account page names it).
      const detail: Record<string, number | string> = client.app ? { remaining, app: client.app.id } : { remaining };
      await events.record({ type: 'recovery_codes.used', userId, clientId: client.id, detail });
      await notify(userId, 'recovery-code-used', { client: client.name, remaining: String(remaining) });
      return remaining;
    },

    /** The set goes with the factor it backs up (operator reset): a new enrollment issues a new one. */
    removeAll: (userId: string) => store.removeAll(userId),
  };
}

export type { IssueCause, RecoveryCodeFactor as RecoveryCodes };
