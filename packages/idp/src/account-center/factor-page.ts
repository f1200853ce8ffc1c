import type { MfaMethod } from 'service-protocol';
import { escapeHtml } from '../http/page.js';
import type { Locales, Values } from '../i18n/locales.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { ProvenAction } from './factors.js';

/** The account page's only script (packages/hosted/src/account-passkey.ts): "Add a passkey", and a step proven with the passkey. */
export const ACCOUNT_PASSKEY_SCRIPT = '/account/account-passkey.js';

/** What the account page's forms need to render in the user's language. */
export interface FormContext {
  locales: Locales;
  locale: string;
  csrf: string;
}

export const textOf =
  ({ locales, locale }: FormContext) =>
  (key: MessageKey, values?: Values) =>
    escapeHtml(locales.text(locale, key, values));

export const hidden = (name: string, value: string) => `<input type="hidden" name="${name}" value="${escapeHtml(value)}">`;

/** A form posted to /account/<action> with the session's CSRF token. */
export function accountForm(c: FormContext, action: string, button: string, fields = '', cls = 'secondary'): string {
  return (
    `<form method="post" action="/account/${action}">${hidden('csrf', c.csrf)}${fields}` +
    `<button type="submit" class="${cls}">${button}</button></form>`
  );
}

const methodName = (c: FormContext, method: string) => textOf(c)(`hosted.method.${method}` as MessageKey);

/** The second factor's form on the account page: choose a method (and a phone for SMS), then prove it on the next page. */
export function changeFactorForm(c: FormContext, methods: MfaMethod[], current: string | null): string {
  const t = textOf(c);
  const options = methods
    .map(
      (m, i) =>
        `<div class="choice"><input type="radio" id="mfa-${m}" name="method" value="${m}"${i === 0 ? ' checked' : ''}>` +
        `<label for="mfa-${m}">${methodName(c, m)}</label></div>`,
    )
    .join('');
  const phone = methods.includes('sms')
    ? `<label for="mfa-phone">${t('page.account.phoneLabel')}</label><input id="mfa-phone" name="phone" type="tel" autocomplete="tel" maxlength="20">`
    : '';
  return accountForm(
    c,
    'mfa/change',
    t(current ? 'page.account.mfaChange' : 'page.account.mfaEnroll'),
    `<fieldset><legend>${t('page.account.mfaChoose')}</legend>${options}</fieldset>${phone}`,
  );
}

/**
 * "Use your passkey" of a step whose factor in force is a passkey: hidden until the script (which
 * needs WebAuthn) shows it, so that without JavaScript the button is absent. The script asks
 * /account/proof/passkey for options bound to the step's session (`session`, `action`), then
 * posts the step's form (data-step) with the assertion in its `assertion` field.
 */
function passkeyButton(c: FormContext, passkey: { session: string; action: string }): string {
  const t = textOf(c);
  return (
    `<div id="passkey-proof" hidden data-csrf="${escapeHtml(c.csrf)}" data-session="${escapeHtml(passkey.session)}" ` +
    `data-action="${escapeHtml(passkey.action)}" data-working="${t('page.account.proofWorking')}" ` +
    `data-failed="${t('page.account.proofFailed')}" data-again="${t('page.account.recent')}">` +
    `<button type="button" class="primary">${t('page.account.usePasskey')}</button><p role="status" aria-live="polite"></p></div>`
  );
}

/**
 * A step that asks for a code: what to enter (the factor in force, its stand-in, or a new method
 * with its authenticator key), posted to `action` with `fields` carried along. A passkey in force
 * (`passkey`) is proven with the button instead; the code field stays for a recovery code where one
 * is allowed, and the form (data-step) then carries the assertion the script puts in it.
 */
export function codeStepHtml(
  c: FormContext,
  step: {
    heading: MessageKey;
    intro: string;
    action: string;
    fields: string;
    button: MessageKey;
    /** A recovery code may stand in (the factor in force at a change, export or deletion). */
    recovery: boolean;
    totp?: { secret: string; otpauthUri: string } | undefined;
    /** A wrong code's message, announced (role=alert) above the same step's form to retype it. */
    error?: string | undefined;
    /** The factor in force is a passkey: its step's session and action (`change`, or the proven action). */
    passkey?: { session: string; action: string } | undefined;
  },
): string {
  const t = textOf(c);
  const totp = step.totp
    ? `<p>${t('page.account.totpAdd')}</p><p><a href="${escapeHtml(step.totp.otpauthUri)}">${t('page.account.totpLink')}</a></p>` +
      `<p>${t('page.account.totpKey')} <code data-secret>${escapeHtml(step.totp.secret)}</code></p>`
    : '';
  const codeField =
    !step.passkey || step.recovery
      ? `<label for="code">${t(step.recovery ? 'page.account.codeOrRecovery' : 'page.account.codeLabel')}</label>` +
        '<input id="code" name="code" type="text" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="40" required>'
      : '';
  const form =
    `<form method="post" action="/account/${step.action}" data-step>${hidden('csrf', c.csrf)}${step.fields}` +
    `${step.passkey ? hidden('assertion', '') : ''}${codeField}<button type="submit" class="primary">${t(step.button)}</button></form>`;
  const passkey = step.passkey
    ? passkeyButton(c, step.passkey) +
      (step.recovery ? '' : `<noscript><p>${t('page.account.passkeyNeedsScript')}</p></noscript>`) +
      `<script src="${ACCOUNT_PASSKEY_SCRIPT}"></script>`
    : '';
  return (
    `<h1>${t(step.heading)}</h1>${step.error ? `<p role="alert">${escapeHtml(step.error)}</p>` : ''}<p>${step.intro}</p>${totp}` +
    // Without a code field the form only carries the assertion: the script sends it.
    `${passkey}${codeField ? form : `<div hidden>${form}</div>`}<p><a href="/account">${t('page.account.cancel')}</a></p>`
  );
}

/** What a step asks for, in words: a code sent by email or SMS, the app's code, or the passkey (a recovery code where one stands in). */
export function proveIntro(c: FormContext, method: string, inForce: boolean, recovery = true): string {
  const t = textOf(c);
  if (!inForce) return t('page.account.proveStandIn');
  if (method === 'passkey') return t(recovery ? 'page.account.provePasskey' : 'page.account.provePasskeyOnly');
  if (method === 'totp') return t('page.account.proveTotp');
  if (method === 'sms') return t('page.account.proveSms');
  // A method with no words of its own here (a factor added later) is asked for by the form alone.
  return method === 'email' ? t('page.account.proveEmail') : '';
}

/** A new set of recovery codes, shown once. */
export function recoveryCodesHtml(c: FormContext, codes: string[], heading: MessageKey): string {
  const t = textOf(c);
  return (
    `<h1>${t(heading)}</h1><p>${t('page.account.codesOnce')}</p>` +
    `<ul class="codes" data-recovery-codes>${codes.map((code) => `<li><code>${escapeHtml(code)}</code></li>`).join('')}</ul>` +
    `<p><a href="/account">${t('page.account.back')}</a></p>`
  );
}

/** A change's code step: the factor in force first (a recovery code may stand in), then the new method's first code. */
export function changeStepHtml(
  c: FormContext,
  step:
    | { kind: 'current'; sessionId: string; currentMethod: string }
    | { kind: 'new'; sessionId: string; method: string; otpauthUri?: string; secret?: string },
  error?: string,
): string {
  const t = textOf(c);
  // The step and method ride along for display only: a wrong code re-shows this step (the session decides what is checked).
  const shown = step.kind === 'current' ? step.currentMethod : step.method;
  const fields = hidden('session', step.sessionId) + hidden('step', step.kind) + hidden('method', shown);
  if (step.kind === 'current')
    return codeStepHtml(c, {
      heading: 'page.account.mfaProveTitle',
      intro: proveIntro(c, step.currentMethod, true),
      action: 'mfa/verify',
      fields,
      button: 'page.account.confirm',
      recovery: true,
      error,
      passkey: step.currentMethod === 'passkey' ? { session: step.sessionId, action: 'change' } : undefined,
    });
  const intro = step.method === 'sms' ? t('page.account.newSms') : step.method === 'email' ? t('page.account.newEmail') : '';
  return codeStepHtml(c, {
    heading: 'page.account.mfaNewTitle',
    intro,
    action: 'mfa/verify',
    fields,
    button: 'page.account.confirm',
    recovery: false,
    totp: step.otpauthUri && step.secret ? { otpauthUri: step.otpauthUri, secret: step.secret } : undefined,
    error,
  });
}

/** The heading of each proven action's code page. */
const PROOF_HEADING: Record<ProvenAction, MessageKey> = {
  export: 'page.account.proveExport',
  delete: 'page.account.proveDelete',
  'recovery-codes': 'page.account.proveRecovery',
};

/** The code step of a proven action (/account/proof), or the same step again after a wrong code (`error`). */
export function proofStepHtml(
  c: FormContext,
  action: ProvenAction,
  proof: { sessionId: string; method: string; inForce: boolean },
  confirm: string,
  error?: string,
): string {
  const recovery = proof.inForce && action !== 'recovery-codes';
  return codeStepHtml(c, {
    heading: PROOF_HEADING[action],
    intro: proveIntro(c, proof.method, proof.inForce, recovery),
    action,
    fields: hidden('session', proof.sessionId) + (action === 'delete' ? hidden('confirm', confirm) : ''),
    button: action === 'delete' ? 'page.account.deleteButton' : 'page.account.confirm',
    recovery,
    error,
    passkey: proof.inForce && proof.method === 'passkey' ? { session: proof.sessionId, action } : undefined,
  });
}
