import type { AdminEvent } from './admin.js';

/** Where the account center lives on the issuer, and the discovery field that gives its URL. */
export const ACCOUNT_PAGE_PATH = '/account';

/** GET /account/session: the signed-in user and the token every account call sends (header x-account-csrf). */
export interface AccountSessionInfo {
  email: string;
  csrfToken: string;
  /** The remembered browser or passkey this session signed in with ("this device"). */
  deviceId: string;
  /** Unix epoch milliseconds: the session's end, and the end of the window in which sensitive actions are allowed. */
  expiresAt: number;
  recentUntil: number;
}

/** GET /account/v1/activity: the user's own recent events, newest first. */
export interface AccountActivity {
  events: AdminEvent[];
}
