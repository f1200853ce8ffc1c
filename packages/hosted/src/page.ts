/**
 * The page shell every step module shares: its configuration (the meta tag the service fills
 * in), element lookup, which step shows, the status line, and a step form's submit handling.
 */

import { t } from './i18n.js';

/** What the service wrote into `<meta name="service-sign-in">` (oidc/routes.ts). */
export interface PageConfig {
  issuer: string;
  publishableKey: string;
  /** The pending authorization request this page serves. */
  request: string;
  /** The operator's CAPTCHA widget script, when one replaces the proof of work (empty otherwise). */
  captchaScript: string;
}

function readConfig(): PageConfig {
  const data = document.querySelector<HTMLMetaElement>('meta[name="service-sign-in"]')?.dataset ?? {};
  return {
    issuer: data.issuer ?? '',
    publishableKey: data.publishableKey ?? '',
    request: data.request ?? '',
    captchaScript: data.captchaScript ?? '',
  };
}

export const config: PageConfig = readConfig();

/** The page's steps, one form each; exactly one shows at a time. */
export const STEPS = [
  'email-step',
  'otp-step',
  'enroll-step',
  'mfa-step',
  'codes-step',
  'passkey-mfa-step',
  'passkey-step',
  'link-step',
] as const;
export type Step = (typeof STEPS)[number];

/** The element with this id (the page has every id the modules name). */
export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

/** An `<input>` of the page. */
export const input = (id: string) => $<HTMLInputElement>(id);

/** Shows one step and moves keyboard focus to its first field (or its heading, when it has none). */
export function show(step: Step): void {
  for (const id of STEPS) $(id).hidden = id !== step;
  const form = $(step);
  (form.querySelector<HTMLElement>('input:not([type="checkbox"])') ?? form.querySelector<HTMLElement>('[tabindex="-1"]'))?.focus();
}

/** Whether this step is the one showing. */
export const showing = (step: Step) => !$(step).hidden;

/** Says something in the status line (read out by screen readers: role="status"). */
export function say(message: string): void {
  $('status').textContent = message;
}

/** The generic failure, when nothing more useful can be said. */
export const somethingWentWrong = () => t('hosted.error.generic');

/** Runs a step's call with its button disabled; a failure is said, not thrown. */
export function onSubmit(form: Step, run: () => Promise<unknown>): void {
  $(form).addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = $(form).querySelector('button');
    if (button) button.disabled = true;
    say('');
    try {
      await run();
    } catch {
      say(somethingWentWrong());
    } finally {
      if (button) button.disabled = false;
    }
  });
}

/** A page served from an IP address: WebAuthn's relying party id is a domain, so no passkeys there. */
export const onIpAddress = () => /^[\d.]+$|:|^\[/.test(location.hostname);
