/** E.164 (ITU-T): a plus, a country code that does not start with 0, at most 15 digits in all. */
export const E164_PATTERN = /^\+[1-9]\d{6,14}$/;

/** Whether `phone` is already in E.164 form, e.g. `+14155550100` (no spaces or punctuation). */
export function isE164(phone: unknown): phone is string {
  return typeof phone === 'string' && E164_PATTERN.test(phone);
}

/**
 * Removes the spaces, dashes, dots and parentheses people type, keeps a leading plus, and returns
 * the E.164 number, or undefined when what is left is not E.164. No country code is guessed: a
 * national number without `+` is refused. Shared by the browser library and the service.
 *
 * @example normalizePhone('+1 (415) 555-0100') // '+14155550100'
 */
export function normalizePhone(input: unknown): string | undefined {
  if (typeof input !== 'string') return undefined;
  const phone = input.replace(/[\s\-.()]/g, '');
  return isE164(phone) ? phone : undefined;
}
