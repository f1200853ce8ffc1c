import type { CaptchaChallenge } from 'service-protocol';
import type { SecretHasher } from '../crypto/secrets.js';
import { CAPTCHA_TOKEN_TTL_SECONDS } from '../defaults.js';
import { ServiceError } from '../errors.js';
import { currentRequest } from '../events/request-context.js';
import type { SpentTokenStore } from '../spent-tokens/store.js';
import type { ChallengeBinding, SendChallenges } from './send-challenge.js';

/** The operator's CAPTCHA in place of the proof of work (SERVICE_IDP_SEND_CHALLENGE=turnstile|hcaptcha). */
export interface CaptchaConfig {
  kind: CaptchaChallenge['kind'];
  siteKey: string;
  /** Never logged nor sent anywhere but `verifyUrl`. */
  secret: string;
  /** The provider's siteverify endpoint (a test points it at a local server). */
  verifyUrl: string;
  /** The widget's script, which the hosted pages load; its origin joins their CSP. */
  scriptUrl: string;
  /** A siteverify call that takes longer fails closed: no code is sent. */
  timeoutMs: number;
}

/** The providers' own endpoints, and the origins their widget loads from (their CSP documentation). */
export const CAPTCHA_PROVIDERS = {
  turnstile: {
    verifyUrl: 'https://challenges.cloudflare.com/turnstile/v0/siteverify',
    scriptUrl: 'https://challenges.cloudflare.com/turnstile/v0/api.js?render=explicit',
    origins: ['https://challenges.cloudflare.com'],
  },
  hcaptcha: {
    verifyUrl: 'https://api.hcaptcha.com/siteverify',
    scriptUrl: 'https://js.hcaptcha.com/1/api.js?render=explicit',
    origins: ['https://hcaptcha.com', 'https://*.hcaptcha.com'],
  },
} as const;

/** The origins the hosted pages' CSP opens for the widget: the provider's, or the configured script's own. */
export function captchaOrigins(captcha: CaptchaConfig): string[] {
  const provider = CAPTCHA_PROVIDERS[captcha.kind];
  return captcha.scriptUrl === provider.scriptUrl ? [...provider.origins] : [new URL(captcha.scriptUrl).origin];
}

/** Tokens are about 2 kB (Turnstile's limit is 2048 characters); anything far longer is not one. */
const TOKEN_MAX_LENGTH = 8192;

/** Turnstile's action: letters, digits, `-` and `_`, at most 32; the route without its version prefix. */
export const actionOf = (endpoint: string) =>
  endpoint
    .replace(/^\/(?:v1\/)?/, '')
    .replace(/[^A-Za-z0-9_-]/g, '-')
    .slice(-32) || 'send';

/**
 * The send challenge as the operator's CAPTCHA: the widget's token, checked once with the
 * provider's siteverify (the only outbound call, with the client's IP), must be a success for
 * the hostname of the page that made the request (its Origin, which the browser client checked
 * against the application's registered origins) and, on Turnstile, for this endpoint's action.
 * The token is then spent in the replay table, so it works once here whatever the provider says.
 * An unreachable, slow or garbled provider fails closed (503 ERR_UNAVAILABLE, nothing sent).
 */
export function createCaptchaChallenges(deps: {
  captcha: CaptchaConfig;
  hash: SecretHasher;
  spent: SpentTokenStore;
  now: () => number;
}): SendChallenges {
  const { captcha, hash, spent, now } = deps;

  async function siteverify(token: string, ip: string | undefined): Promise<Record<string, unknown>> {
    const form = new URLSearchParams({ secret: captcha.secret, response: token, sitekey: captcha.siteKey });
    if (ip) form.set('remoteip', ip);
    let response: Response;
    try {
      response = await fetch(captcha.verifyUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: form,
        redirect: 'error',
        signal: AbortSignal.timeout(captcha.timeoutMs),
      });
    } catch (error) {
      // The cause names the failure (a timeout, a refused connection), never the request's body.
      throw unavailable(`${captcha.kind} siteverify unreachable: ${(error as Error).name}`);
    }
    // The timeout's signal covers the body too: a provider that stalls mid-answer fails closed here.
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok || typeof body !== 'object' || body === null) {
      throw unavailable(`${captcha.kind} siteverify answered HTTP ${response.status}`);
    }
    return body as Record<string, unknown>;
  }

  return {
    async issue(binding) {
      return { kind: captcha.kind, siteKey: captcha.siteKey, action: actionOf(binding.endpoint) };
    },

    async redeem(token, binding: ChallengeBinding) {
      if (!token || token.length > TOKEN_MAX_LENGTH) return false;
      const origin = currentRequest();
      const pageHostname = hostnameOf(origin?.pageOrigin);
      if (!pageHostname) return false;
      const result = await siteverify(token, origin?.ip);
      if (result.success !== true) return false;
      if (result.hostname !== pageHostname) return false;
      if (captcha.kind === 'turnstile' && result.action !== actionOf(binding.endpoint)) return false;
      return spent.spend(
        { purpose: 'send-captcha', idHash: hash('send-captcha', token), expiresAt: now() + CAPTCHA_TOKEN_TTL_SECONDS * 1000 },
        now(),
      );
    },
  };
}

const unavailable = (cause: string) =>
  new ServiceError('ERR_UNAVAILABLE', 'The challenge could not be checked. Try again later.', { retryAfter: 5 }, new Error(cause));

function hostnameOf(origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  try {
    return new URL(origin).hostname;
  } catch {
    return undefined;
  }
}
