/**
 * The send challenge (CHALLENGE_REQUIRED: many codes were asked lately). The proof of work is
 * solved here without a visible step, the live region saying "Checking your browser…" while it
 * runs. The operator's CAPTCHA (Turnstile or hCaptcha) is the provider's widget, shown under
 * the status line, which asks the user to complete it; its token is the solution. Either way the same call is then
 * made again with the solution.
 */
import type { CaptchaChallenge, SendChallenge } from 'service-web';
import { solveChallenge } from 'service-web/challenge';
import { t } from './i18n.js';
import { $, config, say } from './page.js';

/** What Turnstile's and hCaptcha's explicit render API share (their `window.turnstile` / `window.hcaptcha`). */
interface WidgetApi {
  render(container: HTMLElement, options: Record<string, unknown>): string;
  remove?(id: string): void;
}

let widgetApi: Promise<WidgetApi | undefined> | undefined;

/** Loads the provider's script once (its URL is the service's, in the page's meta tag; the CSP allows its origin). */
function loadWidgetApi(kind: CaptchaChallenge['kind']): Promise<WidgetApi | undefined> {
  widgetApi ??= new Promise((resolve) => {
    if (!config.captchaScript) return resolve(undefined);
    const script = document.createElement('script');
    script.src = config.captchaScript;
    script.async = true;
    script.onload = () => resolve((globalThis as unknown as Record<string, WidgetApi | undefined>)[kind]);
    script.onerror = () => resolve(undefined);
    document.head.append(script);
  });
  return widgetApi;
}

/** Shows the widget and resolves with its token, or undefined when it cannot be shown or fails. */
async function captchaToken(challenge: CaptchaChallenge): Promise<string | undefined> {
  const api = await loadWidgetApi(challenge.kind);
  if (!api) return undefined;
  const box = $('captcha');
  box.replaceChildren();
  box.hidden = false;
  say(t('hosted.captcha.prompt'));
  try {
    return await new Promise<string | undefined>((resolve) => {
      api.render(box, {
        sitekey: challenge.siteKey,
        // Turnstile checks it (the service compares what siteverify returns); hCaptcha ignores it.
        ...(challenge.kind === 'turnstile' ? { action: challenge.action } : {}),
        language: document.documentElement.lang,
        hl: document.documentElement.lang,
        callback: (token: string) => resolve(token),
        'error-callback': () => resolve(undefined),
        'expired-callback': () => resolve(undefined),
      });
    });
  } catch {
    return undefined;
  } finally {
    box.hidden = true;
    box.replaceChildren();
  }
}

/** `send` once; if the service asks for a challenge first, solves it and sends again with the solution. */
export async function solvingChallenge<R extends { status: string; challenge?: SendChallenge | CaptchaChallenge }>(
  send: (challengeSolution?: string) => Promise<R>,
): Promise<R> {
  const first = await send();
  const { challenge } = first;
  if (first.status !== 'CHALLENGE_REQUIRED' || !challenge) return first;
  let challengeSolution: string | undefined;
  if (challenge.kind === 'turnstile' || challenge.kind === 'hcaptcha') {
    // Not solved: the caller says so (failureText of CHALLENGE_REQUIRED), and the user may submit again.
    challengeSolution = await captchaToken(challenge);
    if (!challengeSolution) return first;
    say(t('hosted.status.checking'));
  } else {
    say(t('hosted.status.checking'));
    challengeSolution = await solveChallenge(challenge);
  }
  if (!challengeSolution) return first;
  const again = await send(challengeSolution);
  say('');
  return again;
}
