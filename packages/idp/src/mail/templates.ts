import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEVICE_NOTICE_LINK_TTL_SECONDS, OTP_TTL_SECONDS } from '../defaults.js';
import { DEFAULT_LOCALE, type Locales, loadLocales, type Values } from '../i18n/locales.js';
import type { MessageKey } from '../i18n/messages/en.js';
import type { OutgoingMail } from './mailer.js';

/**
 * Mail templates: every mail the service sends is one of these, written as messages of the
 * language catalogues (i18n/messages/, `mail.*`) and sent in the recipient's language
 * (mail/localized-mailer.ts). Each one can be replaced by files in the folder named by
 * SERVICE_IDP_MAIL_TEMPLATES: `NAME.txt` (its first line may be `Subject: …`) and `NAME.html`
 * for every language, `NAME.<lang>.txt` / `.html` for one (docs/operations.md lists them; a test
 * checks that it lists every one). Placeholders: {{client}}, {{minutes}}, {{days}} (the "this
 * wasn't me" link's lifetime) and the values the sender gives ({{code}}, {{method}}, new-device's
 * {{device}}, {{time}}, {{place}}, {{link}}; passkey-added's {{time}}; recovery-code-used's
 * {{remaining}}); values are HTML-escaped in the HTML part. A template's `required`
 * placeholders must stay in every override: checked at start-up.
 */
interface Override {
  subject: string | undefined;
  text: string | undefined;
  html: string | undefined;
}

/** One paragraph of a built-in mail: a message, or the code in large type; `muted`/`warn` colour it in HTML. */
type Part = MessageKey | { key: MessageKey; tone: 'muted' | 'warn' } | 'CODE';
interface BuiltIn {
  subject: MessageKey;
  parts: Part[];
  /** Placeholders an operator's file may not drop (the mail would lose its point). */
  required: string[];
}
const muted = (key: MessageKey): Part => ({ key, tone: 'muted' });
const warn = (key: MessageKey): Part => ({ key, tone: 'warn' });

const BUILT_IN = {
  // The code stays out of subjects: mail servers log them and phones show them on lock screens.
  'sign-in-code': {
    subject: 'mail.sign-in-code.subject',
    parts: ['mail.sign-in-code.intro', 'CODE', 'mail.expires', muted('mail.sign-in-code.ignore')],
    required: ['code'],
  },
  'mfa-code': {
    subject: 'mail.mfa-code.subject',
    parts: ['mail.mfa-code.intro', 'CODE', 'mail.expires', muted('mail.mfa-code.warn')],
    required: ['code'],
  },
  // ASVS 2.5.5: a change of authentication factor is notified on the address we know.
  'mfa-changed': {
    subject: 'mail.mfa-changed.subject',
    parts: ['mail.mfa-changed.body', 'mail.mfa-changed.ok', warn('mail.contactSupport')],
    required: ['method'],
  },
  // Every new trusted device is told to the address we know, with a way to take it back.
  'new-device': {
    subject: 'mail.new-device.subject',
    parts: ['mail.new-device.body', 'mail.new-device.device', 'mail.nothingToDo', 'mail.new-device.revoke'],
    required: ['link'],
  },
  // An organization's invitation (organizations/invitations.ts): the link is its only copy.
  'organization-invitation': {
    subject: 'mail.organization-invitation.subject',
    parts: ['mail.organization-invitation.body', 'mail.organization-invitation.accept', muted('mail.organization-invitation.ignore')],
    required: ['link'],
  },
  // ASVS 2.5.5 as well: a passkey is a new way in, added on the hosted sign-in page.
  'passkey-added': {
    subject: 'mail.passkey-added.subject',
    parts: ['mail.passkey-added.body', 'mail.passkey-added.use', 'mail.nothingToDo', warn('mail.passkey-added.warn')],
    required: [],
  },
  // ASVS 2.5.5 as well: a second factor added where the user may not have added it.
  'mfa-enrolled': {
    subject: 'mail.mfa-enrolled.subject',
    parts: ['mail.mfa-enrolled.body', 'mail.mfa-enrolled.ok', warn('mail.contactSupport')],
    required: ['method'],
  },
  // Operator recovery (service-idp users reset-mfa): the user learns that the factor is gone.
  'mfa-reset': {
    subject: 'mail.mfa-reset.subject',
    parts: ['mail.mfa-reset.body', 'mail.mfa-reset.again', warn('mail.mfa-reset.warn')],
    required: ['method'],
  },
  // A passkey-MFA user's last passkey was revoked: the factor falls back to email, never silently.
  'mfa-passkey-fallback': {
    subject: 'mail.mfa-passkey-fallback.subject',
    parts: ['mail.mfa-passkey-fallback.body', 'mail.mfa-passkey-fallback.again', warn('mail.mfa-passkey-fallback.warn')],
    required: [],
  },
  // A recovery code stands in for the second factor: its owner must learn of every use.
  'recovery-code-used': {
    subject: 'mail.recovery-code-used.subject',
    parts: [
      'mail.recovery-code-used.body',
      'mail.recovery-code-used.left',
      'mail.recovery-code-used.advice',
      warn('mail.recovery-code-used.warn'),
    ],
    required: ['remaining'],
  },
  'recovery-codes-regenerated': {
    subject: 'mail.recovery-codes-regenerated.subject',
    parts: ['mail.recovery-codes-regenerated.body', 'mail.recovery-codes-regenerated.ok', warn('mail.contactSupport')],
    required: [],
  },
} satisfies Record<string, BuiltIn>;

export type TemplateName = keyof typeof BUILT_IN;
/** Every mail the service can send. */
export const TEMPLATE_NAMES = Object.keys(BUILT_IN) as TemplateName[];

/** A time as the mails write it: `2026-11-26 21:30 UTC`. */
export const mailTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

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

/** A rendered mail that can be rendered again in another language (the mailer picks the recipient's). */
export interface LocalizableMail extends OutgoingMail {
  /** The mail in `locale`; `app`: the name of the application it is sent for, in place of the sender's `client`. */
  localize(locale: string, app?: string): OutgoingMail;
}

export interface MailTemplates {
  /** The mail in English; the localizing mailer sends `localize(recipient's language)`. */
  render(name: TemplateName, to: string, values: { client: string } & Record<string, string>): LocalizableMail;
}

/** "Chrome on macOS" in `locale` (devices/user-agent.ts defaultDeviceName, translated). */
export function deviceName(locales: Locales, locale: string, browser: string | null, os: string | null): string {
  if (browser && os) return locales.text(locale, 'device.name', { browser, os });
  return browser ?? os ?? locales.text(locale, 'device.unknown');
}

const TONES = { muted: '#666', warn: '#a00' } as const;
const page = (lang: string, body: string) =>
  `<!doctype html><html lang="${escapeHtml(lang)}"><body style="font-family:system-ui,sans-serif">\n${body}\n</body></html>\n`;

/**
 * Loads the templates once; throws (at start-up) on an override that drops a required
 * placeholder. `locales`: the service's languages (default: the built-in ones).
 */
export function loadMailTemplates(dir?: string, locales: Locales = loadLocales()): MailTemplates {
  const overrides = new Map<string, Override>();
  if (dir) {
    for (const name of TEMPLATE_NAMES) {
      for (const lang of ['', ...locales.supported]) {
        const suffix = lang ? `.${lang}` : '';
        const text = readOverride(dir, `${name}${suffix}.txt`);
        const html = readOverride(dir, `${name}${suffix}.html`);
        if (text === undefined && html === undefined) continue;
        const subjectLine = text?.match(/^Subject: (.*)\r?\n/);
        overrides.set(`${name}${suffix}`, {
          subject: subjectLine?.[1],
          text: text?.slice(subjectLine?.[0].length ?? 0),
          html,
        });
        for (const [part, content] of [
          ['text', text],
          ['html', html],
        ] as const) {
          for (const placeholder of BUILT_IN[name].required)
            if (content !== undefined && !content.includes(`{{${placeholder}}}`))
              throw new Error(`mail template ${name}${suffix} (${part}) in ${dir} has no {{${placeholder}}}`);
        }
      }
    }
  }

  /** The built-in mail in `locale`, from the catalogue's messages. */
  function builtIn(name: TemplateName, locale: string, given: Record<string, string>) {
    const t = BUILT_IN[name] as BuiltIn;
    // A method's word in the mail's language where the catalogue has one (a factor's own, factors/module.ts messages, too).
    const word = `mail.method.${given.method}`;
    const method = word in locales.messages(locale, 'mail.method.') ? locales.text(locale, word as MessageKey) : given.method;
    // new-device names the device by its browser and OS, in the mail's language.
    const device =
      'browser' in given || 'os' in given ? deviceName(locales, locale, given.browser || null, given.os || null) : given.device;
    const values: Values = {
      client: '',
      time: '',
      code: '',
      link: '',
      ...given,
      method: method ?? '',
      device: device ?? '',
      place: given.place ? locales.text(locale, 'mail.new-device.place', { place: given.place }) : '',
      minutes: OTP_TTL_SECONDS / 60,
      days: DEVICE_NOTICE_LINK_TTL_SECONDS / 86_400,
      remaining: Number(given.remaining ?? 0),
    };
    const link = given.link ?? '';
    const text: string[] = [];
    const html: string[] = [];
    for (const part of t.parts) {
      if (part === 'CODE') {
        text[text.length - 1] += ` ${given.code ?? ''}`;
        html.push(`<p style="font-size:28px;letter-spacing:6px;font-weight:bold">${escapeHtml(given.code ?? '')}</p>`);
        continue;
      }
      const key = typeof part === 'string' ? part : part.key;
      text.push(locales.text(locale, key, values, { link: (content) => `${content}:\n${link}` }));
      const style = typeof part === 'string' ? '' : ` style="color:${TONES[part.tone]}"`;
      html.push(
        `<p${style}>${locales.html(locale, key, values, { b: ['<strong>', '</strong>'], link: [`<a href="${escapeHtml(link)}">`, '</a>'] })}</p>`,
      );
    }
    const [first = '', ...rest] = text;
    return {
      subject: locales.text(locale, t.subject, values),
      text: `${[first, '', ...rest].join('\n')}\n`,
      html: page(locale, html.join('\n')),
    };
  }

  function renderIn(name: TemplateName, locale: string, given: Record<string, string>) {
    const override = overrides.get(`${name}.${locale}`) ?? overrides.get(name);
    if (!override) return builtIn(name, locale, given);
    const built =
      override.subject === undefined || override.text === undefined || override.html === undefined
        ? builtIn(name, locale, given)
        : undefined;
    // Operator templates get the values as the sender gave them (English place, device and method).
    const values: Record<string, string> = {
      ...given,
      place: given.place ? ` (approximately: ${given.place})` : '',
      minutes: String(OTP_TTL_SECONDS / 60),
      days: String(DEVICE_NOTICE_LINK_TTL_SECONDS / 86_400),
    };
    return {
      subject: override.subject === undefined ? (built?.subject ?? '') : fill(override.subject, values, (s) => s),
      text: override.text === undefined ? (built?.text ?? '') : fill(override.text, values, (s) => s),
      html: override.html === undefined ? (built?.html ?? '') : fill(override.html, values, escapeHtml),
    };
  }

  return {
    render(name, to, given) {
      return {
        to,
        ...renderIn(name, DEFAULT_LOCALE, given),
        localize: (locale, app) => ({ to, ...renderIn(name, locale, app && given.client ? { ...given, client: app } : given) }),
      };
    },
  };
}
