import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OTP_TTL_SECONDS } from '../defaults.js';

/**
 * Mail templates. The built-in ones below can be replaced, one file at a time, by files in
 * the folder named by SERVICE_IDP_MAIL_TEMPLATES: `NAME.txt` (its first line may be
 * `Subject: …`) and `NAME.html`. Placeholders: {{code}}, {{client}}, {{minutes}}, {{method}};
 * values are HTML-escaped in the HTML part. Every code template must contain {{code}}: checked
 * at start-up.
 */
export type TemplateName = 'sign-in-code' | 'mfa-code' | 'mfa-changed';

/** Templates that carry a one-time code: each must contain {{code}}. */
const CODE_TEMPLATES: TemplateName[] = ['sign-in-code', 'mfa-code'];

interface Template {
  subject: string;
  text: string;
  html: string;
}

const page = (body: string) => `<!doctype html><html><body style="font-family:system-ui,sans-serif">\n${body}\n</body></html>\n`;
const bigCode = '<p style="font-size:28px;letter-spacing:6px;font-weight:bold">{{code}}</p>';

const BUILT_IN: Record<TemplateName, Template> = {
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
  },
};

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
    values: { code: string; client: string; method?: string },
  ): { to: string; subject: string; text: string; html: string };
}

/** Loads the templates once; throws (at start-up) on a template without {{code}}. */
export function loadMailTemplates(dir?: string): MailTemplates {
  const templates = { ...BUILT_IN };
  if (dir) {
    for (const name of Object.keys(BUILT_IN) as TemplateName[]) {
      const text = readOverride(dir, `${name}.txt`);
      const html = readOverride(dir, `${name}.html`);
      const subjectLine = text?.match(/^Subject: (.*)\r?\n/);
      templates[name] = {
        subject: subjectLine?.[1] ?? BUILT_IN[name].subject,
        text: text === undefined ? BUILT_IN[name].text : text.slice(subjectLine?.[0].length ?? 0),
        html: html ?? BUILT_IN[name].html,
      };
      for (const part of ['text', 'html'] as const) {
        if (CODE_TEMPLATES.includes(name) && !templates[name][part].includes('{{code}}'))
          throw new Error(`mail template ${name} (${part}) in ${dir} has no {{code}}`);
      }
    }
  }
  return {
    render(name, to, { code, client, method = '' }) {
      const values = { code, client, method, minutes: String(OTP_TTL_SECONDS / 60) };
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
