import type { OperatorRole } from 'service-protocol';
import type { OperatorRecord } from '../admin/operator-store.js';
import type { Operators } from '../admin/operators.js';
import { CONSOLE_CLIENT_ID } from '../clients/service.js';
import { randomToken } from '../crypto/secrets.js';
import {
  CONSOLE_SESSION_ABSOLUTE_LIFETIME_SECONDS,
  CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS,
  CONSOLE_SESSION_TOUCH_RESOLUTION_SECONDS,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { EventLog } from '../events/service.js';
import { createFirstPartySignIn, type FirstPartyDeps } from '../oidc/first-party-sign-in.js';
import type { ConsoleSessionStore } from './store.js';

/** Where the console lives and where the hosted sign-in sends operators back to. */
export const CONSOLE_PATH = '/admin';
export const CONSOLE_CALLBACK_PATH = '/admin/callback';

/** Who calls the admin API through a console session. */
export interface ConsoleCaller {
  operator: OperatorRecord;
  /** Recorded in events: `operator:<email>`. */
  actor: string;
  role: OperatorRole;
  expiresAt: number;
}

export interface ConsoleService {
  /** Creates or refreshes the console's built-in client (its redirect URI follows the issuer, or the console listener's URL). */
  ensureClient(): Promise<void>;
  /** The hosted sign-in to send the browser to, and the value of the cookie that holds its state and PKCE verifier. */
  beginSignIn(): { location: string; login: string };
  /**
   * The redirect back from the hosted sign-in: the code (PKCE-bound to this browser's login
   * cookie, its state compared) becomes a console session when its user is an operator and
   * signed in with an authenticator app or a passkey (never the mailbox). ERR_FORBIDDEN otherwise, recorded.
   */
  finishSignIn(input: { code: string; state: string; iss: string | undefined; login: string | undefined }): Promise<{ session: string }>;
  /**
   * The live session behind the cookie: not ended, within its idle and absolute limits, what
   * signed in (device or passkey) still trusted, the user enabled, and still an operator with
   * the same address. Undefined otherwise: a removed operator's session stops at its next call.
   */
  authenticate(cookie: string | undefined): Promise<ConsoleCaller | undefined>;
  /** The per-session token the console's calls carry (x-console-csrf): a keyed hash of the cookie. */
  csrfToken(cookie: string): string;
  /** Whether `token` is this cookie's token (constant time). */
  checkCsrf(cookie: string, token: string | undefined): boolean;
  signOut(cookie: string): Promise<void>;
  sweep(at: number): Promise<void>;
}

/**
 * The amr values of a second factor the console takes: an authenticator app (`totp`), a passkey's
 * user verification (`user`, as the first factor counted as two or as the MFA method), or a
 * recovery code standing in for either.
 */
const CONSOLE_SECOND_FACTORS = ['totp', 'user', 'recovery_code'] as const;

const actorOf = (operator: OperatorRecord) => `operator:${operator.email}`;

/**
 * The operator console's sign-in and sessions (docs/operations.md, "The operator console").
 * Operators sign in as people do, through the service's own hosted sign-in, as the built-in
 * console client whose policy requires MFA by an authenticator app or a passkey (an operator
 * with neither sets one up at the sign-in); what comes back is checked again here (amr).
 */
export function createConsoleService(
  deps: FirstPartyDeps & { operators: Operators; store: ConsoleSessionStore; events: EventLog; consoleUrl?: string | undefined },
): ConsoleService {
  const { operators, store, events, hash, now } = deps;
  const signIn = createFirstPartySignIn(deps, {
    clientId: CONSOLE_CLIENT_ID,
    name: 'Operator console',
    callbackPath: CONSOLE_CALLBACK_PATH,
    // On its own listener (config.console), the hosted sign-in sends operators back there.
    baseUrl: deps.consoleUrl,
    mfaPolicy: 'required',
    purpose: 'console',
  });
  const refused = (message: string) => new ServiceError('ERR_FORBIDDEN', message);

  return {
    ensureClient: signIn.ensureClient,

    // Always a fresh sign-in: the SSO session of an app never opens the console by itself.
    beginSignIn: () => signIn.begin({ prompt: 'login' }),

    async finishSignIn(input) {
      const { user, signedIn } = await signIn.redeem(input);
      const { amr, deviceId } = signedIn;
      const operator = await operators.findByEmail(user.email);
      const refuse = async (reason: string, message: string) => {
        await events.record({ type: 'operator.refused', userId: user.id, detail: { reason } });
        return refused(message);
      };
      if (!operator) throw await refuse('not_operator', 'This account is not an operator of this service.');
      // The console client's policy asks for MFA by an app or a passkey (sign-in/pipeline.ts
      // acceptedMethods); checked again here: never the mailbox (an emailed code) nor SMS.
      if (!amr.includes('mfa') || !CONSOLE_SECOND_FACTORS.some((value) => amr.includes(value)) || !deviceId)
        throw await refuse('no_second_factor', 'The console needs a sign-in with an authenticator app or a passkey.');
      const session = randomToken('');
      const at = now();
      await store.insert({
        idHash: hash('console-session', session),
        operatorId: operator.id,
        userId: user.id,
        deviceId,
        createdAt: at,
        lastUsedAt: at,
        expiresAt: at + CONSOLE_SESSION_ABSOLUTE_LIFETIME_SECONDS * 1000,
      });
      await events.record({
        type: 'operator.signed_in',
        userId: user.id,
        deviceId,
        actor: actorOf(operator),
        detail: { role: operator.role, amr: amr.join(' ') },
      });
      return { session };
    },

    async authenticate(cookie) {
      if (!cookie || cookie.length > 100) return undefined;
      const at = now();
      const session = await store.findLive(hash('console-session', cookie), at, at - CONSOLE_SESSION_IDLE_TIMEOUT_SECONDS * 1000);
      if (!session) return undefined;
      const [operator, user] = await Promise.all([
        operators.findById(session.operatorId),
        signIn.boundUser(session.userId, session.deviceId, at),
      ]);
      // Removed (or re-added under another address), disabled, or what signed in revoked: the session is over.
      if (!operator || !user || user.email !== operator.email) return undefined;
      if (at - session.lastUsedAt >= CONSOLE_SESSION_TOUCH_RESOLUTION_SECONDS * 1000) await store.touch(session.idHash, at);
      return { operator, actor: actorOf(operator), role: operator.role, expiresAt: session.expiresAt };
    },

    csrfToken: signIn.csrfToken,
    checkCsrf: signIn.checkCsrf,

    signOut: (cookie) => store.end(hash('console-session', cookie), now()),

    sweep: (at) => store.deleteExpired(at),
  };
}
