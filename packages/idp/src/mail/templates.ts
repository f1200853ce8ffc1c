import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEVICE_NOTICE_LINK_TTL_SECONDS, OTP_TTL_SECONDS } from '../defaults.js';

/**
 * Mail templates: every mail the service sends is one of these. Each built-in one below can be
 * replaced, one file at a time, by files in the folder named by SERVICE_IDP_MAIL_TEMPLATES:
 * `NAME.txt` (its first line may be `Subject: …`) and `NAME.html` (docs/operations.md lists
 * them; a test checks that it lists every one). Placeholders: {{client}}, {{minutes}}, {{days}}
 * (the "this wasn't me" link's lifetime) and the values the sender gives ({{code}}, {{method}},
 * new-device's {{device}}, {{time}}, {{place}}, {{link}}; passkey-added's {{time}};
 * recovery-code-used's {{remaining}}); values are HTML-escaped in the HTML part.
 * A template's `required` placeholders must stay in every override: checked at start-up.
 */
interface Template {
  subject: string;
  text: string;
  html: string;
  /** Placeholders an operator's file may not drop (the mail would lose its point). */
  required: string[];
}

const page = (body: string) => `<!doctype html><html><body style="font-family:system-ui,sans-serif">\n${body}\n</body></html>\n`;
const bigCode = '<p style="font-size:28px;letter-spacing:6px;font-weight:bold">{{code}}</p>';

const BUILT_IN = {
  // The code stays out of subjects: mail servers log them and phones show them on lock screens.
  'sign-in-code': {
    subject: 'Your {{client}} sign-in code',
    text: `Your sign-in code for {{client}} is: {{code}}

It expires in {{minutes}} minutes and works once.
If you did not try to sign in, you can ignore this email: nobody can sign in without this code.
`,
    html: page(`<p>Your sign-in code for <strong>{{client}}</strong> is:</p>
${bigCode}
<p>It expires in {{minutes}} minutes and works once.</p>
<p style="color:#666">If you did not try to sign in, you can ignore this email: nobody can sign in without this code.</p>`),
    required: ['code'],
  },
  'mfa-code': {
    subject: 'Your {{client}} verification code',
    text: `Your verification code for {{client}} is: {{code}}

It expires in {{minutes}} minutes and works once.
If it was not you, do not share it, and consider changing your MFA method.
`,
    html: page(`<p>Your verification code for <strong>{{client}}</strong> is:</p>
${bigCode}
<p>It expires in {{minutes}} minutes and works once.</p>
<p style="color:#666">If it was not you, do not share it, and consider changing your MFA method.</p>`),
    required: ['code'],
  },
  // ASVS 2.5.5: a change of authentication factor is notified on the address we know.
  'mfa-changed': {
    subject: 'Your {{client}} two-step verification method changed',
    text: `The two-step verification method of your {{client}} account is now: {{method}}.

If you made this change, there is nothing to do.
If you did not, contact {{client}} support at once: someone may have access to your account.
`,
    html: page(`<p>The two-step verification method of your <strong>{{client}}</strong> account is now: <strong>{{method}}</strong>.</p>
<p>If you made this change, there is nothing to do.</p>
<p style="color:#a00">If you did not, contact {{client}} support at once: someone may have access to your account.</p>`),
    required: ['method'],
  },
  // Every new trusted device is told to the address we know, with a way to take it back.
  'new-device': {
    subject: 'A new device can now sign in to {{client}}',
    text: `A new device was registered for your {{client}} account:

  {{device}}, {{time}}{{place}}

If this was you, there is nothing to do.
If it was not, sign that device out here (the link works once, for {{days}} days):
{{link}}
`,
    html: page(`<p>A new device was registered for your <strong>{{client}}</strong> account:</p>
<p><strong>{{device}}</strong>, {{time}}{{place}}</p>
<p>If this was you, there is nothing to do.</p>
<p>If it was not, <a href="{{link}}">sign that device out</a> (the link works once, for {{days}} days).</p>`),
    required: ['link'],
  },
  // ASVS 2.5.5 as well: a passkey is a new way in, added on the hosted sign-in page.
  'passkey-added': {
    subject: 'A passkey was added to your account',
    text: `A passkey was added to your account on the sign-in page of {{client}}, {{time}}.
It now signs you in to the apps that use this sign-in page, without an emailed code.

If this was you, there is nothing to do.
If it was not, contact {{client}} support at once: someone may have access to your account.
`,
    html: page(`<p>A passkey was added to your account on the sign-in page of <strong>{{client}}</strong>, {{time}}.</p>
<p>It now signs you in to the apps that use this sign-in page, without an emailed code.</p>
<p>If this was you, there is nothing to do.</p>
<p style="color:#a00">If it was not, contact {{client}} support at once: someone may have access to your account.</p>`),
    required: [],
  },
  // ASVS 2.5.5 as well: a second factor added where the user may not have added it.
  'mfa-enrolled': {
    subject: 'Two-step verification is now on for your {{client}} account',
    text: `Two-step verification is now on for your {{client}} account, by: {{method}}.

If you set this up, there is nothing to do.
If you did not, contact {{client}} support at once: someone may have access to your account.
`,
    html: page(`<p>Two-step verification is now on for your <strong>{{client}}</strong> account, by: <strong>{{method}}</strong>.</p>
<p>If you set this up, there is nothing to do.</p>
<p style="color:#a00">If you did not, contact {{client}} support at once: someone may have access to your account.</p>`),
    required: ['method'],
  },
  // Operator recovery (service-idp users reset-mfa): the user learns that the factor is gone.
  'mfa-reset': {
    subject: 'Two-step verification was turned off for your {{client}} account',
    text: `Two-step verification ({{method}}) was turned off for your {{client}} account by its operator, as a recovery step.

You can turn it on again at your next sign-in on a new device.
If you did not ask for this, contact {{client}} support at once.
`,
    html: page(`<p>Two-step verification (<strong>{{method}}</strong>) was turned off for your <strong>{{client}}</strong> account by its operator, as a recovery step.</p>
<p>You can turn it on again at your next sign-in on a new device.</p>
<p style="color:#a00">If you did not ask for this, contact {{client}} support at once.</p>`),
    required: ['method'],
  },
  // A passkey-MFA user's last passkey was revoked: the factor falls back to email, never silently.
  'mfa-passkey-fallback': {
    subject: 'Your {{client}} sign-in now asks for a code by email',
    text: `The last passkey of your {{client}} account was removed, so two-step verification now sends a code to this address instead ({{method}}).

You can make a passkey your second factor again at your next sign-in on a new device.
If you did not remove it, contact {{client}} support at once: someone may have access to your account.
`,
    html: page(`<p>The last passkey of your <strong>{{client}}</strong> account was removed, so two-step verification now sends a code to this address instead (<strong>{{method}}</strong>).</p>
<p>You can make a passkey your second factor again at your next sign-in on a new device.</p>
<p style="color:#a00">If you did not remove it, contact {{client}} support at once: someone may have access to your account.</p>`),
    required: [],
  },
  // A recovery code stands in for the second factor: its owner must learn of every use.
  'recovery-code-used': {
    subject: 'A recovery code was used for your {{client}} account',
    text: `One of your recovery codes was just used instead of your two-step verification method for {{client}}.
Each code works once; you have {{remaining}} left.

If it was you, consider setting up a new method and new recovery codes if your device is lost.
If it was not, contact {{client}} support at once: someone has one of your recovery codes.
`,
    html: page(`<p>One of your recovery codes was just used instead of your two-step verification method for <strong>{{client}}</strong>.</p>
<p>Each code works once; you have <strong>{{remaining}}</strong> left.</p>
<p>If it was you, consider setting up a new method and new recovery codes if your device is lost.</p>
<p style="color:#a00">If it was not, contact {{client}} support at once: someone has one of your recovery codes.</p>`),
    required: ['remaining'],
  },
  'recovery-codes-regenerated': {
    subject: 'New recovery codes for your {{client}} account',
    text: `A new set of recovery codes was made for your {{client}} account. Your earlier codes no longer work.

If you did this, keep the new codes somewhere safe.
If you did not, contact {{client}} support at once: someone may have access to your account.
`,
    html: page(`<p>A new set of recovery codes was made for your <strong>{{client}}</strong> account. Your earlier codes no longer work.</p>
<p>If you did this, keep the new codes somewhere safe.</p>
<p style="color:#a00">If you did not, contact {{client}} support at once: someone may have access to your account.</p>`),
    required: [],
  },
} satisfies Record<string, Template>;

export type TemplateName = keyof typeof BUILT_IN;
/** Every mail the service can send. */
export const TEMPLATE_NAMES = Object.keys(BUILT_IN) as TemplateName[];

const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const fill = (template: string, values: Record<string, string>, encode: (s: string) => string) =>
  template.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => (name in values ? encode(values[name] as string) : whole));

function readOverride(dir: string, file: string): string | undefined {
  try {
    return readFileSync(join(dir, file), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

export interface MailTemplates {
  render(
    name: TemplateName,
    to: string,
    values: { client: string } & Record<string, string>,
  ): { to: string; subject: string; text: string; html: string };
}

/** Loads the templates once; throws (at start-up) on an override that drops a required placeholder. */
export function loadMailTemplates(dir?: string): MailTemplates {
  const templates: Record<TemplateName, Template> = { ...BUILT_IN };
  if (dir) {
    for (const name of TEMPLATE_NAMES) {
      const text = readOverride(dir, `${name}.txt`);
      const html = readOverride(dir, `${name}.html`);
      const subjectLine = text?.match(/^Subject: (.*)\r?\n/);
      const built = BUILT_IN[name];
      templates[name] = {
        subject: subjectLine?.[1] ?? built.subject,
        text: text === undefined ? built.text : text.slice(subjectLine?.[0].length ?? 0),
        html: html ?? built.html,
        required: built.required,
      };
      for (const part of ['text', 'html'] as const) {
        for (const placeholder of built.required)
          if (!templates[name][part].includes(`{{${placeholder}}}`))
            throw new Error(`mail template ${name} (${part}) in ${dir} has no {{${placeholder}}}`);
      }
    }
  }
  return {
    render(name, to, given) {
      const values = { ...given, minutes: String(OTP_TTL_SECONDS / 60), days: String(DEVICE_NOTICE_LINK_TTL_SECONDS / 86_400) };
      const t = templates[name];
      return {
        to,
        subject: fill(t.subject, values, (s) => s),
        text: fill(t.text, values, (s) => s),
        html: fill(t.html, values, escapeHtml),
      };
    },
  };
}
