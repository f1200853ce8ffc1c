import { isSupportedCountry } from 'libphonenumber-js/max';
import { CLIENT_MAIL_DOMAINS_MAX, CLIENT_SMS_COUNTRIES_MAX } from '../defaults.js';

/** An application's own rules (its clients row; otp/send-rules.ts applies them); null: the service's (countries) or none (domains). */
export interface ClientSendRules {
  smsCountries: string[] | null;
  mailDomains: string[] | null;
}

export const NO_CLIENT_SEND_RULES: ClientSendRules = { smsCountries: null, mailDomains: null };

/** An operator's country list (`US,GB,FR`, any case): ISO 3166 alpha-2 codes libphonenumber knows. Throws with the reason. */
export function parseCountries(list: readonly string[]): string[] {
  const countries = [...new Set(list.map((code) => code.trim().toUpperCase()).filter(Boolean))];
  const unknown = countries.find((code) => !/^[A-Z]{2}$/.test(code) || !isSupportedCountry(code));
  if (unknown !== undefined) throw new Error(`${unknown} is not an ISO 3166 country code with phone numbers (e.g. US, GB, FR)`);
  if (countries.length > CLIENT_SMS_COUNTRIES_MAX) throw new Error(`at most ${CLIENT_SMS_COUNTRIES_MAX} countries`);
  return countries.sort();
}

/** An operator's mail domain list (`example.com,corp.example.com`): lower-cased host names. Throws with the reason. */
export function parseMailDomains(list: readonly string[]): string[] {
  const domains = [...new Set(list.map((domain) => domain.trim().toLowerCase()).filter(Boolean))];
  const bad = domains.find(
    (domain) => !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)+$/.test(domain),
  );
  if (bad !== undefined) throw new Error(`${bad} is not a mail domain (e.g. example.com)`);
  // An empty list would refuse every address: the rule is removed (null), not emptied.
  if (domains.length === 0) throw new Error('name at least one mail domain (removing the rule lets any domain in)');
  if (domains.length > CLIENT_MAIL_DOMAINS_MAX) throw new Error(`at most ${CLIENT_MAIL_DOMAINS_MAX} mail domains`);
  return domains.sort();
}
