import { createHash } from 'node:crypto';
import { type AdminClientBranding, type AdminSettings, Paths } from 'service-protocol';
import { HOSTED_CLIENT_ID, isBuiltInClient } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import type { BrandingFields, BrandingStore, BrandingWrite } from './store.js';
import {
  accentText,
  checkAccent,
  checkLogo,
  checkName,
  checkPageUrl,
  checkSenderName,
  LOGO_EXTENSIONS,
  type LogoType,
} from './validate.js';

/** A change of an application's branding: undefined leaves a field as it is, null clears it. */
export interface BrandingChange {
  displayName?: string | null;
  accent?: string | null;
  termsUrl?: string | null;
  privacyUrl?: string | null;
  mailSenderName?: string | null;
  /** The image's bytes (its type is read from them). */
  logo?: Buffer | null;
}

/** How pages and mails present the application a user is signing in to (or the service, without one). */
export interface Brand {
  /** The application's display name, else its client name; the product name where there is no application. */
  name: string;
  productName: string;
  accent: string | null;
  accentText: string | null;
  /** Paths on the issuer (mails make them absolute): the logo, and the stylesheet that sets the accent. */
  logoPath: string | null;
  stylesheetPath: string | null;
  termsUrl: string | null;
  privacyUrl: string | null;
  mailSenderName: string | null;
}

const PRODUCT_NAME = 'product-name';
/** The service's own policy and terms pages (OIDC Discovery `op_policy_uri`, `op_tos_uri`). */
const POLICY_URL = 'policy-url';
const TERMS_URL = 'terms-url';
/** The developers' documentation (OIDC Discovery `service_documentation`). */
const DOCUMENTATION_URL = 'documentation-url';

/** A change of the service's settings: undefined leaves one as it is, null (or "") clears a URL. */
export interface SettingsChange {
  productName?: string;
  policyUrl?: string | null;
  termsUrl?: string | null;
  documentationUrl?: string | null;
}

export interface Branding {
  /** The operator's product name (`settings set product-name`), else the issuer's host name. */
  productName(): Promise<string>;
  /** Every service-wide setting, as the admin API shows them. */
  settings(): Promise<AdminSettings>;
  /** Checks every value of the change first (a refusal stores nothing), then writes them. */
  updateSettings(change: SettingsChange): Promise<AdminSettings>;
  /** An application's branding as the admin API shows it; `no client ID` for an unknown or built-in one. */
  show(clientId: string): Promise<AdminClientBranding>;
  /** Checks every value of the change first (a refusal stores nothing), then writes them in one statement. */
  update(clientId: string, change: BrandingChange): Promise<AdminClientBranding>;
  /** Checks every value of the change as `update` does, storing nothing (a client's creation checks its branding first). */
  check(change: BrandingChange): void;
  /** The brand of a client (the built-in hosted client stands for no application: the product's). */
  brandOf(client: Pick<ClientRecord, 'id' | 'name'> | undefined): Promise<Brand>;
  /** A served logo by its file name (`<sha256>.<ext>`), or undefined. */
  logo(file: string): Promise<{ type: LogoType; bytes: Buffer } | undefined>;
  /** The stylesheet of an accent file name (`<rrggbb>.css`) that passes the contrast check, or undefined. */
  accentStylesheet(file: string): string | undefined;
}

/**
 * Per-application branding and the service's product name (docs/operations.md, Branding). The
 * values are checked here (validate.ts), for the CLI and the admin API alike; the pages and
 * mails read them through `brandOf`.
 */
export function createBranding({
  store,
  clients,
  issuer,
  defaultProductName,
  now,
}: {
  store: BrandingStore;
  clients: { findById(id: string): Promise<ClientRecord | undefined> };
  issuer: string;
  defaultProductName: string;
  now: () => number;
}): Branding {
  const known = async (clientId: string) => {
    // The built-in clients (the hosted pages, the console, the account center) are the service's own: not the operators' to brand.
    const client = isBuiltInClient(clientId) ? undefined : await clients.findById(clientId);
    if (!client) throw new Error(`no client ${clientId}`);
    return client;
  };
  const logoPath = (row: BrandingFields | undefined) =>
    row?.logo_sha256 && row.logo_type ? `${Paths.brandingLogos}/${row.logo_sha256}.${LOGO_EXTENSIONS[row.logo_type as LogoType]}` : null;
  const shown = (clientId: string, row: BrandingFields | undefined): AdminClientBranding => {
    const logo = logoPath(row);
    return {
      clientId,
      displayName: row?.display_name ?? null,
      accent: row?.accent ?? null,
      accentText: row?.accent ? accentText(row.accent) : null,
      termsUrl: row?.terms_url ?? null,
      privacyUrl: row?.privacy_url ?? null,
      mailSenderName: row?.mail_sender_name ?? null,
      logoUrl: logo ? new URL(logo, issuer).href : null,
    };
  };
  const productName = async () => (await store.setting(PRODUCT_NAME)) ?? defaultProductName;
  /** null clears; a string is checked. */
  const optional = <T>(value: string | null | undefined, check: (v: string) => T) =>
    value === undefined ? undefined : value === null || value === '' ? null : check(value);

  /** The columns a change writes, every value checked (a refusal throws, naming the rule). */
  const checkedWrite = (change: BrandingChange): BrandingWrite => {
    const write: BrandingWrite = {};
    const displayName = optional(change.displayName, (v) => checkName(v, 'the display name'));
    if (displayName !== undefined) write.display_name = displayName;
    const accent = optional(change.accent, (v) => checkAccent(v).accent);
    if (accent !== undefined) write.accent = accent;
    const terms = optional(change.termsUrl, (v) => checkPageUrl(v, 'the terms URL'));
    if (terms !== undefined) write.terms_url = terms;
    const privacy = optional(change.privacyUrl, (v) => checkPageUrl(v, 'the privacy URL'));
    if (privacy !== undefined) write.privacy_url = privacy;
    const sender = optional(change.mailSenderName, checkSenderName);
    if (sender !== undefined) write.mail_sender_name = sender;
    if (change.logo === null) Object.assign(write, { logo_base64: null, logo_type: null, logo_sha256: null });
    else if (change.logo !== undefined) {
      const type = checkLogo(change.logo);
      write.logo_base64 = change.logo.toString('base64');
      write.logo_type = type;
      write.logo_sha256 = createHash('sha256').update(change.logo).digest('hex');
    }
    if (Object.keys(write).length === 0) throw new Error('nothing to change');
    return write;
  };

  return {
    productName,

    async settings(): Promise<AdminSettings> {
      const [name, policyUrl, termsUrl, documentationUrl] = await Promise.all([
        productName(),
        store.setting(POLICY_URL),
        store.setting(TERMS_URL),
        store.setting(DOCUMENTATION_URL),
      ]);
      return { productName: name, policyUrl: policyUrl ?? null, termsUrl: termsUrl ?? null, documentationUrl: documentationUrl ?? null };
    },

    async updateSettings(change: SettingsChange): Promise<AdminSettings> {
      const writes: Array<[string, string | null]> = [];
      if (change.productName !== undefined) writes.push([PRODUCT_NAME, checkName(change.productName, 'the product name')]);
      const policy = optional(change.policyUrl, (v) => checkPageUrl(v, 'the policy URL'));
      if (policy !== undefined) writes.push([POLICY_URL, policy]);
      const terms = optional(change.termsUrl, (v) => checkPageUrl(v, 'the terms URL'));
      if (terms !== undefined) writes.push([TERMS_URL, terms]);
      const documentation = optional(change.documentationUrl, (v) => checkPageUrl(v, 'the documentation URL'));
      if (documentation !== undefined) writes.push([DOCUMENTATION_URL, documentation]);
      const at = now();
      for (const [name, value] of writes) await (value === null ? store.deleteSetting(name) : store.putSetting(name, value, at));
      return this.settings();
    },

    async show(clientId: string): Promise<AdminClientBranding> {
      await known(clientId);
      return shown(clientId, await store.find(clientId));
    },

    async update(clientId: string, change: BrandingChange): Promise<AdminClientBranding> {
      await known(clientId);
      await store.write(clientId, checkedWrite(change), now());
      return shown(clientId, await store.find(clientId));
    },

    check(change: BrandingChange): void {
      checkedWrite(change);
    },

    async brandOf(client: Pick<ClientRecord, 'id' | 'name'> | undefined): Promise<Brand> {
      const product = await productName();
      const row = client && client.id !== HOSTED_CLIENT_ID ? await store.find(client.id) : undefined;
      const accent = row?.accent ?? null;
      return {
        name: row?.display_name ?? (client && client.id !== HOSTED_CLIENT_ID ? client.name : product),
        productName: product,
        accent,
        accentText: accent ? accentText(accent) : null,
        logoPath: logoPath(row),
        stylesheetPath: accent ? `${Paths.brandingAccent}/${accent.slice(1)}.css` : null,
        termsUrl: row?.terms_url ?? null,
        privacyUrl: row?.privacy_url ?? null,
        mailSenderName: row?.mail_sender_name ?? null,
      };
    },

    async logo(file: string) {
      const match = /^([0-9a-f]{64})\.(png|jpg|webp)$/.exec(file);
      if (!match) return undefined;
      const found = await store.logo(match[1] as string);
      if (!found || LOGO_EXTENSIONS[found.type as LogoType] !== match[2]) return undefined;
      return { type: found.type as LogoType, bytes: Buffer.from(found.base64, 'base64') };
    },

    accentStylesheet(file: string): string | undefined {
      const match = /^([0-9a-f]{6})\.css$/.exec(file);
      if (!match) return undefined;
      try {
        const { accent, text } = checkAccent(`#${match[1]}`);
        return `/* The accent of an application (docs/operations.md, Branding). */\n:root {\n  --accent: ${accent};\n  --accent-text: ${text};\n}\n`;
      } catch {
        return undefined;
      }
    },
  };
}
