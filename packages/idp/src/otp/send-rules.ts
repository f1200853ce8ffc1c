import { isDisposableEmailDomain } from 'disposable-email-domains-js';
import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { type ClientSendRules, NO_CLIENT_SEND_RULES, parseCountries } from '../clients/send-rules.js';
import { SMS_COST_CAP_MAX, SMS_PREFIX_NATIONAL_DIGITS, SMS_PRICE_MAX, SMS_PRICE_SCALE, SMS_REFUSED_NUMBER_TYPES } from '../defaults.js';
import { ServiceError } from '../errors.js';
import type { Limit } from '../throttle/service.js';

export { type ClientSendRules, NO_CLIENT_SEND_RULES };

/**
 * The service-wide send rules (config.ts): where SMS may go and what they may cost, and whether
 * disposable mail domains are refused. Each application adds its own (ClientSendRules).
 */
export interface SendRules {
  sms: {
    /**
     * The countries (ISO 3166 alpha-2) SMS may go to for an application without a list of its
     * own (SERVICE_IDP_SMS_COUNTRIES). `'any'`: unset with the development outbox, which
     * reaches nobody and bills nothing; unset with a real transport: `[]`, no SMS at all.
     */
    countries: readonly string[] | 'any';
    /** SMS per number block (SMS_PER_PREFIX, or SERVICE_IDP_SMS_PER_PREFIX). */
    perPrefix: readonly Limit[];
    /** The daily cost cap, in 1/SMS_PRICE_SCALE units, with each country's price; undefined: no cap. */
    cost: SmsCost | undefined;
  };
  /** SERVICE_IDP_REFUSE_DISPOSABLE_MAIL: no code to a domain of the disposable-email-domains list. */
  refuseDisposableMail: boolean;
}

export interface SmsCost {
  /** 1/SMS_PRICE_SCALE units a day (SERVICE_IDP_SMS_DAILY_COST_CAP). */
  dailyCap: number;
  /** One SMS's price to a country without a price of its own, in 1/SMS_PRICE_SCALE units. */
  defaultPrice: number;
  /** Prices per country (ISO 3166 alpha-2), in 1/SMS_PRICE_SCALE units. */
  byCountry: Readonly<Record<string, number>>;
}

/** A number SMS may go to: its country (for the price) and its number block (for the per-prefix limit). */
export interface SmsRecipient {
  country: string;
  prefix: string;
}

/**
 * Checks an SMS recipient against the rules, before anything is counted: a valid, allocated
 * number (full metadata), not premium-rate or shared-cost, in a country the application (or,
 * without a list of its own, the service) allows. Refused: ERR_REQUEST_INVALID naming the
 * rule, never the number.
 */
export function admitSms(to: string, rules: SendRules, client: ClientSendRules): SmsRecipient {
  const phone = parsePhoneNumberFromString(to);
  if (!phone?.isValid() || !phone.country) {
    throw new ServiceError('ERR_REQUEST_INVALID', 'This phone number is not a valid, allocated number. Check it and try again.');
  }
  const type = phone.getType();
  if (type !== undefined && (SMS_REFUSED_NUMBER_TYPES as readonly string[]).includes(type)) {
    throw new ServiceError('ERR_REQUEST_INVALID', 'Codes are not sent to premium-rate or shared-cost numbers. Use a mobile number.');
  }
  const allowed = client.smsCountries ?? rules.sms.countries;
  if (allowed !== 'any' && !allowed.includes(phone.country)) {
    throw new ServiceError('ERR_REQUEST_INVALID', 'Codes are not sent by SMS to this country for this application.');
  }
  return {
    country: phone.country,
    prefix: `+${phone.countryCallingCode}${phone.nationalNumber.slice(0, SMS_PREFIX_NATIONAL_DIGITS)}`,
  };
}

/**
 * Checks a mail recipient against the rules, before anything is counted: a domain the
 * application allows (when it names any: exact match) and, when the operator turned it on,
 * not a disposable one. The rule reads the address alone, so a known and an unknown address
 * get the same answer. Refused: ERR_EMAIL_INVALID.
 */
export function admitMail(to: string, rules: SendRules, client: ClientSendRules): void {
  const domain = to.slice(to.lastIndexOf('@') + 1).toLowerCase();
  if (client.mailDomains && !client.mailDomains.includes(domain)) {
    throw new ServiceError('ERR_EMAIL_INVALID', 'This application accepts addresses of its own organisation only.');
  }
  if (rules.refuseDisposableMail && isDisposableEmailDomain(domain)) {
    throw new ServiceError('ERR_EMAIL_INVALID', 'Addresses of disposable mail services are not accepted. Use another address.');
  }
}

/** What one SMS to this country costs, in 1/SMS_PRICE_SCALE units. */
export const priceOf = (cost: SmsCost, country: string): number => cost.byCountry[country] ?? cost.defaultPrice;

/** An amount of the operator's currency (`0.05`, at most four decimals) in 1/SMS_PRICE_SCALE units, at most `max` units. */
function parseAmount(text: string, max: number): number {
  if (!/^\d{1,6}(\.\d{1,4})?$/.test(text.trim())) throw new Error(`"${text.trim()}" is not an amount such as 0.05 (four decimals at most)`);
  const amount = Math.round(Number(text) * SMS_PRICE_SCALE);
  if (amount < 1 || amount > max * SMS_PRICE_SCALE) throw new Error(`"${text.trim()}" is not above 0 and at most ${max}`);
  return amount;
}

/**
 * SERVICE_IDP_SMS_DAILY_COST_CAP and SERVICE_IDP_SMS_PRICES (`default=0.05,GB=0.04,FR=0.07`):
 * the cap needs a default price (a country without a price would cost nothing otherwise).
 */
export function parseSmsCost(cap: string, prices: string): SmsCost {
  const dailyCap = parseAmount(cap, SMS_COST_CAP_MAX);
  let defaultPrice: number | undefined;
  const byCountry: Record<string, number> = {};
  for (const part of prices.split(',').filter((entry) => entry.trim())) {
    const [name = '', amount = ''] = part.split('=');
    const key = name.trim().toUpperCase();
    if (key === 'DEFAULT') defaultPrice = parseAmount(amount, SMS_PRICE_MAX);
    else byCountry[parseCountries([key])[0] as string] = parseAmount(amount, SMS_PRICE_MAX);
  }
  if (defaultPrice === undefined) throw new Error('SERVICE_IDP_SMS_PRICES needs default=<price> (the price of a country not listed)');
  return { dailyCap, defaultPrice, byCountry };
}
