import {
  ACCENT_SURFACE_CONTRAST_MIN,
  ACCENT_TEXT_CONTRAST_MIN,
  ACCENT_TEXT_DARK,
  ACCENT_TEXT_LIGHT,
  BRAND_NAME_MAX_LENGTH,
  LOGO_MAX_BYTES,
  MAIL_SENDER_NAME_MAX_LENGTH,
  PAGE_BACKGROUND_DARK,
  PAGE_BACKGROUND_LIGHT,
  REDIRECT_URI_MAX_LENGTH,
} from '../defaults.js';

/**
 * The checks of every branding value, shared by the CLI and the admin API (branding/service.ts).
 * Each throws a plain Error naming the rule (never repeating a URL's user info); the service
 * turns it into ERR_REQUEST_INVALID, a 400 or exit 2, before anything is stored.
 */

/** `#RRGGBB` in lower case. */
export function checkAccent(input: string): { accent: string; text: string } {
  if (!/^#[0-9a-fA-F]{6}$/.test(input)) throw new Error('the accent colour must be #RRGGBB (six hex digits), such as #0a64d8');
  const accent = input.toLowerCase();
  const text = accentText(accent);
  const onText = contrast(accent, text);
  if (onText < ACCENT_TEXT_CONTRAST_MIN)
    throw new Error(
      `the accent colour ${accent} gives its button label ${onText.toFixed(2)}:1 (WCAG AA needs ${ACCENT_TEXT_CONTRAST_MIN}:1)`,
    );
  for (const [theme, background] of [
    ['light', PAGE_BACKGROUND_LIGHT],
    ['dark', PAGE_BACKGROUND_DARK],
  ] as const) {
    const ratio = contrast(accent, background);
    if (ratio < ACCENT_SURFACE_CONTRAST_MIN)
      throw new Error(
        `the accent colour ${accent} has ${ratio.toFixed(2)}:1 against the ${theme} page background ${background} (WCAG AA needs ${ACCENT_SURFACE_CONTRAST_MIN}:1 for a button or focus ring; pick a colour of middle lightness)`,
      );
  }
  return { accent, text };
}

/** The button label colour on the accent: white or near-black, whichever contrasts more. */
export function accentText(accent: string): string {
  return contrast(accent, ACCENT_TEXT_LIGHT) >= contrast(accent, ACCENT_TEXT_DARK) ? ACCENT_TEXT_LIGHT : ACCENT_TEXT_DARK;
}

/** WCAG 2.1 contrast ratio of two `#rrggbb` colours (1 to 21). */
export function contrast(a: string, b: string): number {
  const [high, low] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (high + 0.05) / (low + 0.05);
}

/** WCAG 2.1 relative luminance of `#rrggbb` (sRGB). */
function luminance(hex: string): number {
  const channel = (offset: number) => {
    const c = Number.parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

export type LogoType = 'image/png' | 'image/jpeg' | 'image/webp';
export const LOGO_EXTENSIONS: Record<LogoType, string> = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/webp': 'webp' };

/**
 * A logo's type, read from its first bytes (never from a file name or a declared type): PNG,
 * JPEG or WebP. SVG is refused: it is a document that can carry script and links, and a raster
 * image is all a sign-in page and a mail need. Three fixed signatures are a few lines; a
 * sniffing library (file-type) would bring dozens of formats and a stream tokenizer for them.
 */
export function checkLogo(bytes: Buffer): LogoType {
  if (bytes.length === 0) throw new Error('the logo is empty');
  if (bytes.length > LOGO_MAX_BYTES) throw new Error(`the logo is ${bytes.length} bytes; at most ${LOGO_MAX_BYTES} are accepted`);
  const ascii = (from: number, to: number) => bytes.subarray(from, to).toString('latin1');
  if (bytes.length >= 8 && bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))) return 'image/png';
  if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'image/jpeg';
  if (bytes.length >= 12 && ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return 'image/webp';
  const head = ascii(0, 512)
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (head.startsWith('<svg') || head.startsWith('<?xml') || head.includes('<svg'))
    throw new Error('SVG logos are refused (an SVG can carry script); upload a PNG, JPEG or WebP image');
  throw new Error('the logo is not a PNG, JPEG or WebP image');
}

/** A display, product or sender name: trimmed, printable (no control character: no header or line injection), bounded. */
export function checkName(input: string, what: string, max = BRAND_NAME_MAX_LENGTH): string {
  const name = input.trim();
  if (!name || name.length > max) throw new Error(`${what} must be 1 to ${max} characters`);
  // Cc and Cf (bidirectional overrides, zero-width characters) and the line and paragraph separators.
  if (/[\p{Cc}\p{Cf}\u2028\u2029]/u.test(name)) throw new Error(`${what} must hold no control or invisible formatting characters`);
  return name;
}

/**
 * The name a mail's From shows for the application: a name as above, and none of the
 * characters an address header gives meaning to (`"<>@,;:\`), so it can never read as an
 * address or a second recipient, whatever the mail library does with it.
 */
export function checkSenderName(input: string): string {
  const name = checkName(input, 'the mail sender name', MAIL_SENDER_NAME_MAX_LENGTH);
  if (/["<>@,;:\\]/.test(name)) throw new Error('the mail sender name must hold none of " < > @ , ; : \\');
  return name;
}

/** A terms or privacy page: an absolute https URL without user info, kept as given. */
export function checkPageUrl(input: string, what: string): string {
  if (input.length > REDIRECT_URI_MAX_LENGTH) throw new Error(`${what} is longer than ${REDIRECT_URI_MAX_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    throw new Error(`${what} must be an absolute https URL`);
  }
  if (url.protocol !== 'https:') throw new Error(`${what} must be an https URL`);
  if (url.username || url.password) throw new Error(`${what} must have no user name or password (https://${url.host})`);
  if (!/^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/.test(input))
    throw new Error(`${what} must hold only URI characters (RFC 3986): percent-encode a space or any other (https://${url.host})`);
  return input;
}
