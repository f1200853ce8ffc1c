import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomDigits, randomToken, type SecretHasher, safeEqual } from '../crypto/secrets.js';
import {
  ACCOUNT_LOCKOUT_SECONDS,
  ACCOUNT_MAX_FAILURES,
  OTP_DIGITS,
  OTP_TTL_SECONDS,
  SEND_PER_IP,
  SEND_PER_RECIPIENT,
  SEND_PER_SUBNET,
  SEND_SPACING_PER_PURPOSE,
  SMS_COST_WINDOW_SECONDS,
  SMS_PRICE_SCALE,
} from '../defaults.js';
import { ServiceError } from '../errors.js';
import { currentRequest } from '../events/request-context.js';
import type { EventLog } from '../events/service.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailTemplates } from '../mail/templates.js';
import type { SmsTransport } from '../sms/transport.js';
import type { Limit, Throttle } from '../throttle/service.js';
import type { EnabledUserStore } from '../users/enabled-store.js';
import { type BudgetChannel, type SendBudgets, subnetOf } from './send-budgets.js';
import type { ChallengeThresholds, SendChallenges } from './send-challenge.js';
import {
  admitMail,
  admitSms,
  type ClientSendRules,
  NO_CLIENT_SEND_RULES,
  priceOf,
  type SendRules,
  type SmsRecipient,
} from './send-rules.js';

/** Weight of the newest delivery in the moving average of delivery times: smooths one slow SMTP answer. */
const DELIVERY_TIME_WEIGHT = 0.2;

/**
 * What a code is for. The per-recipient spacing applies to repeated sends of one purpose (a
 * resend), never to the next step of the same sign-in (the email OTP, then the MFA code).
 */
export type OtpPurpose = 'sign-in' | 'mfa' | 'mfa-enroll' | 'mfa-change-current' | 'mfa-change' | 'mfa-proof' | 'link';

export type OtpChannel = { kind: 'email'; to: string } | { kind: 'sms'; to: string };

export interface OtpDeps {
  enabledUsers: EnabledUserStore;
  throttle: Throttle;
  mailer: Mailer;
  templates: MailTemplates;
  sms: SmsTransport;
  hash: SecretHasher;
  events: EventLog;
  now: () => number;
  /** The resend spacing in force: SEND_SPACING_PER_PURPOSE's window unless SERVICE_IDP_SEND_SPACING_SECONDS sets another. */
  sendSpacingSeconds: number;
  /** What the service and each application may send (defaults.ts MAIL_BUDGET_SERVICE …, or the operator's settings). */
  budgets: SendBudgets;
  /** The proof of work a browser's send may have to solve first, and when (defaults.ts SEND_CHALLENGE_AFTER_*). */
  challenges: SendChallenges;
  challengeThresholds: ChallengeThresholds;
  /** Where codes may go (otp/send-rules.ts): the service's rules, and each application's own (its clients row). */
  sendRules: SendRules;
  clientSendRules: (clientId: string) => Promise<ClientSendRules | undefined>;
}

/**
 * The sends a browser asks for while signing in, where a challenge can be demanded: the
 * new-device email code (and its resends) and the MFA codes of the sign-in. The others come
 * after a sign-in (account center changes), from an SP backend (no IP), or from an upstream
 * provider's redirect, which can carry no header and needs that provider's sign-in first.
 */
const CHALLENGED_PURPOSES: ReadonlySet<OtpPurpose> = new Set(['sign-in', 'mfa', 'mfa-enroll']);

/** The flow's storage of one challenge: where the code's HMAC lives and where guesses are counted. */
export interface OtpSend {
  /** The keyed id of the challenge; the code's HMAC covers it, so a code works only for its own challenge. */
  challengeId: string;
  purpose: OtpPurpose;
  channel: OtpChannel;
  /** The browser's address; absent for a delegated change (an SP backend speaks for all its users). */
  ip: string | undefined;
  /** The application the code is sent for: its send budget is spent. */
  clientId: string;
  clientName: string;
  /** Stores the code's HMAC and expiry on the challenge; false when the challenge has ended. */
  arm(otpHash: string, expiresAt: number): Promise<boolean>;
  /** Forgets a code that was not delivered, so it can never be used. */
  disarm(): Promise<void>;
  /**
   * A disabled account (users/): the same throttles and answer, but the challenge is armed with
   * the HMAC of a value nobody holds and nothing is delivered; the answer waits as long as a
   * delivery takes, so its speed does not tell that the account exists and is disabled.
   */
  silent?: boolean;
}

/** The result of comparing a guess: right, wrong, or (TOTP) right but of a time step already used. */
export type OtpMatch<T> = { kind: 'match'; value: T } | { kind: 'wrong' } | { kind: 'used' };

export interface OtpCheck<S, T> {
  /** Whose consecutive failures count towards the account lock-out. */
  email: string;
  maxAttempts: number;
  /** False when no code is live: nothing to guess, so nothing is counted. */
  live: boolean;
  /** Spends one guess atomically (increment and cap in one statement); undefined when none is left. */
  spend(): Promise<S | undefined>;
  compare(spent: S): Promise<OtpMatch<T>>;
  /** Gives back the guess spent on a code that was right but already used (it proves no ignorance). */
  refund(): Promise<void>;
  /** Completes the challenge for exactly one caller. */
  complete(spent: S): Promise<boolean>;
  /** The number of guesses spent so far, for attemptsRemaining. */
  attemptsOf(spent: S): number;
}

export interface OtpService {
  hashOf: (challengeId: string, code: string) => string;
  /**
   * Refuses a recipient the send rules exclude for this application (an SMS country it does not
   * allow, a premium or unallocated number, a mail domain it does not take, a disposable one):
   * ERR_REQUEST_INVALID (phone) or ERR_EMAIL_INVALID (mail), nothing counted or stored. `send`
   * asks it first; the routes that take a new phone number ask it before they store anything.
   */
  admit(clientId: string, channel: OtpChannel): Promise<SmsRecipient | undefined>;
  /** Throttles, draws a code, arms the challenge with its HMAC and sends it. Returns the code (test mode shows it). */
  send(request: OtpSend): Promise<string>;
  /** Compares a guess with a stored code's HMAC in constant time. */
  matchesStored(challengeId: string, otpHash: string | null, code: string): boolean;
  /**
   * The one guess check: refused while the account is locked; nothing counted without a live
   * code; one guess spent (atomically, capped) before comparing; a wrong code recorded against
   * the account; a right code of a used TOTP step refunded and named; a right code completes
   * the challenge for exactly one caller and clears the account's failures.
   */
  check<S, T>(
    check: OtpCheck<S, T>,
  ): Promise<{
    spent: S;
    value: T;
  }>;
}

/**
 * Every one-time code of the service: drawn from the CSPRNG, stored only as an HMAC bound to
 * its challenge, sent by mail or SMS within the send limits, and checked with the one rule
 * (lock-out, one guess spent before comparing, constant-time compare, failure recorded).
 * A new device's sign-in (the email OTP), the MFA step, enrollment and delegated changes all use it;
 * each keeps its challenge in its own table and passes the atomic steps in.
 */
export function createOtpService(deps: OtpDeps): OtpService {
  const { enabledUsers, throttle, mailer, templates, sms, hash, events, now } = deps;
  const sendSpacing = [{ max: SEND_SPACING_PER_PURPOSE[0].max, windowSeconds: deps.sendSpacingSeconds }];
  const accountKey = (email: string) => hash('account', email);
  /** A mailbox shares the account's key (one budget however the address was spelled); a phone has its own. */
  const recipientKey = (channel: OtpChannel) => (channel.kind === 'email' ? accountKey(channel.to) : hash('recipient', channel.to));

  const hashOf = (challengeId: string, code: string) => hash('otp', `${challengeId}:${code}`);

  const busy = 'Too many codes are being sent right now. Try again later.';
  /** The operator hears once per window that a budget is spent: an event (and its webhooks); metrics count every refusal. */
  const exhausted = (channel: BudgetChannel, scope: 'service' | 'application', clientId?: string) => async (limit: Limit) => {
    await events.record({
      type: 'send_budget.exhausted',
      ...(clientId ? { clientId } : {}),
      detail: { channel, scope, max: limit.max, window_seconds: limit.windowSeconds },
    });
  };
  /**
   * The application's budget, then the service's: a send refused by its application's budget
   * spends nothing of the service's, so one application's flood cannot spend the others' share.
   */
  /** The recipient the rules admit (an SMS's country and number block), or a refusal. */
  async function admit(clientId: string, channel: OtpChannel): Promise<SmsRecipient | undefined> {
    const client = (await deps.clientSendRules(clientId)) ?? NO_CLIENT_SEND_RULES;
    if (channel.kind === 'sms') return admitSms(channel.to, deps.sendRules, client);
    admitMail(channel.to, deps.sendRules, client);
    return undefined;
  }

  /**
   * The number block's limit (SMS_PER_PREFIX) before the budgets; the day's cost (each SMS its
   * country's price) after them, so an SMS a budget refused costs nothing. A spent cost cap is
   * a spent budget to the caller and to the operator (scope `cost`).
   */
  async function spendSmsLimits(sms: SmsRecipient, stage: 'prefix' | 'cost') {
    const rules = deps.sendRules.sms;
    if (stage === 'prefix') {
      await throttle.consume(`send:sms-prefix:${sms.prefix}`, rules.perPrefix, busy);
      return;
    }
    if (!rules.cost) return;
    await throttle.consume(
      'send:sms-cost',
      [{ max: rules.cost.dailyCap, windowSeconds: SMS_COST_WINDOW_SECONDS }],
      busy,
      async (limit) => {
        await events.record({
          type: 'send_budget.exhausted',
          detail: { channel: 'sms', scope: 'cost', max: limit.max / SMS_PRICE_SCALE, window_seconds: limit.windowSeconds },
        });
      },
      priceOf(rules.cost, sms.country),
    );
  }

  async function spendBudgets(channel: BudgetChannel, clientId: string) {
    const budget = deps.budgets[channel];
    await throttle.consume(
      `send:budget:application:${channel}:${clientId}`,
      budget.application,
      busy,
      exhausted(channel, 'application', clientId),
    );
    await throttle.consume(`send:budget:service:${channel}`, budget.service, busy, exhausted(channel, 'service'));
  }

  /**
   * Raised risk demands a solved challenge before anything is counted as sent: each browser
   * request for a code counts towards its address's, its network's and the service's
   * thresholds, and past any of them it must carry an unspent solution bound to this recipient
   * and route, else it is refused with a fresh challenge.
   */
  async function demandChallenge(request: OtpSend, ip: string) {
    const thresholds = deps.challengeThresholds;
    const over = [
      await throttle.exceeds(`challenge:ip:${ip}`, thresholds.ip),
      await throttle.exceeds(`challenge:subnet:${subnetOf(ip)}`, thresholds.subnet),
      await throttle.exceeds(`challenge:service:${request.channel.kind}`, thresholds.service[request.channel.kind]),
    ];
    if (!over.includes(true)) return;
    const origin = currentRequest();
    const binding = { address: request.channel.to, endpoint: origin?.route ?? '' };
    if (await deps.challenges.redeem(origin?.challengeSolution, binding)) return;
    throw new ServiceError('ERR_CHALLENGE_REQUIRED', 'Solve the challenge, then send the same request again with its solution.', {
      challenge: await deps.challenges.issue(binding),
    });
  }

  /** How long a delivery (and its event) takes on this node, per channel: a moving average that silent sends wait out. */
  const deliveryMs: Record<OtpChannel['kind'], number | undefined> = { email: undefined, sms: undefined };
  const timeDelivery = (kind: OtpChannel['kind'], since: number) => {
    const took = performance.now() - since;
    const average = deliveryMs[kind];
    deliveryMs[kind] = average === undefined ? took : average + (took - average) * DELIVERY_TIME_WEIGHT;
  };

  async function deliver(channel: OtpChannel, purpose: OtpPurpose, code: string, clientName: string) {
    if (channel.kind === 'email') {
      await mailer.send(
        templates.render(purpose === 'sign-in' || purpose === 'link' ? 'sign-in-code' : 'mfa-code', channel.to, {
          code,
          client: clientName,
        }),
      );
    } else {
      await sms.send({
        to: channel.to,
        body: `${code} is your ${clientName} verification code. It expires in ${OTP_TTL_SECONDS / 60} minutes.`,
      });
    }
  }

  return {
    hashOf,

    admit,

    async send(request: OtpSend): Promise<string> {
      // The rules read the recipient alone and count nothing: a refusal changes no state and says nothing of an account.
      const sms = await admit(request.clientId, request.channel);
      if (request.ip !== undefined && CHALLENGED_PURPOSES.has(request.purpose)) await demandChallenge(request, request.ip);
      if (request.ip !== undefined) {
        await throttle.consume(`send:ip:${request.ip}`, SEND_PER_IP, 'Too many codes were requested from this network. Try again later.');
        await throttle.consume(
          `send:subnet:${subnetOf(request.ip)}`,
          SEND_PER_SUBNET,
          'Too many codes were requested from this network. Try again later.',
        );
      }
      const recipient = recipientKey(request.channel);
      await throttle.consume(
        `send:to:${request.purpose}:${recipient}`,
        sendSpacing,
        'A code was sent moments ago. Wait before asking for another.',
      );
      await throttle.consume(`send:to:${recipient}`, SEND_PER_RECIPIENT, 'Too many codes were sent to this address. Try again later.');
      if (sms) await spendSmsLimits(sms, 'prefix');
      // A silent send (a disabled account) spends budgets as a real one does: the answers stay alike.
      await spendBudgets(request.channel.kind, request.clientId);
      if (sms) await spendSmsLimits(sms, 'cost');
      const code = randomDigits(OTP_DIGITS);
      const armed = request.silent ? randomToken('unsendable_') : code;
      if (!(await request.arm(hashOf(request.challengeId, armed), now() + OTP_TTL_SECONDS * 1000))) {
        throw new ServiceError('ERR_SESSION_INVALID', 'This verification has ended. Start again.');
      }
      if (request.silent) {
        await sleep(deliveryMs[request.channel.kind] ?? 0);
        return code;
      }
      const started = performance.now();
      try {
        await deliver(request.channel, request.purpose, code, request.clientName);
      } catch (error) {
        await request.disarm();
        throw new ServiceError(
          'ERR_DELIVERY_FAILED',
          `The code could not be sent by ${request.channel.kind === 'sms' ? 'SMS' : 'email'}. Try again shortly.`,
          {},
          error,
        );
      }
      await events.record({ type: 'otp.sent', detail: { channel: request.channel.kind, purpose: request.purpose } });
      timeDelivery(request.channel.kind, started);
      return code;
    },

    matchesStored(challengeId: string, otpHash: string | null, code: string): boolean {
      return otpHash !== null && safeEqual(otpHash, hashOf(challengeId, code));
    },

    async check<S, T>(check: OtpCheck<S, T>): Promise<{ spent: S; value: T }> {
      const key = accountKey(check.email);
      const lockedUntil = await enabledUsers.lockedUntil(key, now());
      if (lockedUntil !== undefined) {
        throw new ServiceError('ERR_ACCOUNT_LOCKED', 'Too many wrong codes for this account. Try again later.', {
          retryAfter: Math.ceil((lockedUntil - now()) / 1000),
        });
      }
      if (!check.live) throw new ServiceError('ERR_OTP_EXPIRED', 'This code has expired. Ask for a new one.');
      const spent = await check.spend();
      if (!spent) throw new ServiceError('ERR_OTP_EXPIRED', 'This code has expired or too many wrong codes were tried. Start again.');
      const match = await check.compare(spent);
      if (match.kind === 'used') {
        await check.refund();
        throw new ServiceError('ERR_OTP_USED', 'This code was already used. Wait for the next code in your app.', {
          attemptsRemaining: check.maxAttempts - check.attemptsOf(spent) + 1,
        });
      }
      if (match.kind === 'wrong') {
        await enabledUsers.recordFailure(key, ACCOUNT_MAX_FAILURES, now() + ACCOUNT_LOCKOUT_SECONDS * 1000);
        throw new ServiceError('ERR_OTP_INVALID', 'The code is not correct.', {
          attemptsRemaining: check.maxAttempts - check.attemptsOf(spent),
        });
      }
      if (!(await check.complete(spent))) throw new ServiceError('ERR_SESSION_STEP', 'This code was already accepted.');
      await enabledUsers.clearFailures(key);
      return { spent, value: match.value };
    },
  };
}
