/** What users see: languages and branding. Part of defaults.ts, which re-exports every name. */

/** How long the language switcher's cookie keeps a browser's choice (a year: a preference, no secret). */
export const LOCALE_COOKIE_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/**
 * Branding (branding/). A logo is stored in the database (base64) and served from
 * `/branding/logos/<sha256>.<ext>`: a few hundred pixels wide is plenty for a sign-in page
 * and a mail header, so 128 KiB keeps every page and mail light and the table small.
 */
export const LOGO_MAX_BYTES = 128 * 1024;
/** Content-addressed branding assets (logo, per-application stylesheet) never change: a year, immutable. */
export const BRANDING_ASSET_MAX_AGE_SECONDS = 365 * 24 * 60 * 60;
/** The product name, an application's display name and its mail sender name: characters. */
export const BRAND_NAME_MAX_LENGTH = 100;
export const MAIL_SENDER_NAME_MAX_LENGTH = 64;
/**
 * WCAG 2.1 AA: text (the button label on the accent) at least 4.5:1 (SC 1.4.3); the accent as
 * a non-text boundary (the primary button's fill, focus ring, selected field) at least 3:1
 * against the page background of both themes (SC 1.4.11).
 */
export const ACCENT_TEXT_CONTRAST_MIN = 4.5;
export const ACCENT_SURFACE_CONTRAST_MIN = 3;
/** The design system's page backgrounds (packages/hosted/src/signin.css --bg), light and dark. */
export const PAGE_BACKGROUND_LIGHT = '#ffffff';
export const PAGE_BACKGROUND_DARK = '#17171a';
/** The two label colours a button on the accent may take: the one with more contrast is picked. */
export const ACCENT_TEXT_LIGHT = '#ffffff';
export const ACCENT_TEXT_DARK = '#111111';
