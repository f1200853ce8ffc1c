/**
 * service-web/account: the service's account page (`<issuer>/account`, discovery's `account_url`),
 * where the signed-in user manages their own devices and passkeys, sees their activity, exports
 * and deletes their account. Its own entry point: the core library's size budget has no room.
 * docs/protocol.md, "The account center".
 *
 * @example
 * ```ts
 * import { accountUrl, openAccount } from 'service-web/account';
 * link.href = accountUrl('https://id.example.com', { uiLocales: 'fr' });
 * button.onclick = () => openAccount('https://id.example.com');
 * ```
 *
 * @packageDocumentation
 */
import { ACCOUNT_PAGE_PATH } from 'service-protocol';

/** The account page's URL at `baseUrl` (the issuer); `uiLocales` picks its language (OIDC's ui_locales). */
export function accountUrl(baseUrl: string, options: { uiLocales?: string } = {}): string {
  const url = new URL(ACCOUNT_PAGE_PATH, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  if (options.uiLocales) url.searchParams.set('ui_locales', options.uiLocales);
  return url.toString();
}

/** Opens the account page in this tab (`newTab`: a new one, without an opener). */
export function openAccount(baseUrl: string, options: { uiLocales?: string; newTab?: boolean } = {}): void {
  const url = accountUrl(baseUrl, options);
  if (options.newTab) window.open(url, '_blank', 'noopener');
  else window.location.assign(url);
}
