/**
 * The page's language: the service renders the page in it (`<html lang>`) and puts the messages
 * this script says (the catalogue's `hosted.*` keys, ICU MessageFormat) in a JSON data block,
 * which the CSP allows (it is never run). intl-messageformat formats them, plurals included,
 * without eval.
 */
import { IntlMessageFormat } from 'intl-messageformat';

const messages: Record<string, string> = JSON.parse(document.getElementById('service-messages')?.textContent || '{}');
const lang = document.documentElement.lang || 'en';

/** The message `key` (one of the catalogue's `hosted.*` keys) with its values. */
export function t(key: `hosted.${string}`, values?: Record<string, string | number>): string {
  const message = messages[key];
  if (message === undefined) return key;
  const formatted = new IntlMessageFormat(message, lang).format(values);
  return Array.isArray(formatted) ? formatted.join('') : String(formatted);
}

/** What a failed service-web call says, in the page's language (its English `message` is never shown). */
export function failureText(result: { status: string; attemptsRemaining?: number; retryAfter?: number }): string {
  switch (result.status) {
    case 'INVALID_OTP':
      return result.attemptsRemaining === undefined
        ? t('hosted.error.INVALID_OTP')
        : t('hosted.error.INVALID_OTP.left', { attempts: result.attemptsRemaining });
    case 'RATE_LIMITED':
      return result.retryAfter ? t('hosted.error.RATE_LIMITED.wait', { seconds: result.retryAfter }) : t('hosted.error.RATE_LIMITED');
    case 'INVALID_EMAIL':
    case 'INVALID_REQUEST':
    case 'OTP_EXPIRED':
    case 'SESSION_EXPIRED':
    case 'ACCOUNT_LOCKED':
    case 'MFA_UNAVAILABLE':
    case 'NETWORK_ERROR':
    // A send challenge the page could not pass (the CAPTCHA widget failed or was not solved).
    case 'CHALLENGE_REQUIRED':
      return t(`hosted.error.${result.status}`);
    default:
      return t('hosted.error.generic');
  }
}
