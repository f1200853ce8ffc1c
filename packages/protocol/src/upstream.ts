/**
 * Upstream identity providers ("Continue with Google", any OpenID Connect provider): the
 * operator's connections (admin API), the browser's way in and out (a top-level navigation to
 * the service, then back to the page with the result in the URL fragment) and the linked
 * identities. docs/protocol.md, "Continue with an upstream provider".
 */
import type { DevicePublicJwk } from './bodies.js';

/** The kinds of connection: any OpenID Connect provider from its issuer, or a preset. */
export const CONNECTION_PRESETS = ['oidc', 'google', 'microsoft', 'apple', 'github'] as const;
export type ConnectionPreset = (typeof CONNECTION_PRESETS)[number];

/** Paths of the upstream sign-in, relative to the service's base URL (top-level navigations, not fetches). */
export const UpstreamPaths = {
  /** GET: starts a sign-in with a connection (query: UpstreamStartQuery); redirects to the provider. */
  start: '/upstream/start',
  /** GET (query) or POST (form_post, Apple): the provider's answer; redirects back to the page. */
  callback: '/upstream/callback',
  /** POST (browser API, publishable key): the emailed code that proves the account to link. */
  confirmLink: '/v1/upstream/link',
  /** GET (browser API, publishable key): the connections this application shows as buttons. */
  connections: '/v1/upstream/connections',
  /**
   * POST (browser API, publishable key): after DEVICE_KEY_NEEDED, the page that started the
   * sign-in finishes it with its device key (UpstreamDeviceRequest).
   */
  device: '/v1/upstream/device',
} as const;

/** The query of GET /upstream/start. */
export interface UpstreamStartQuery {
  /** The connection's id. */
  connection: string;
  /** The application's publishable key (a navigation carries no header). */
  key: string;
  /** Where the result goes: a URL on one of the application's registered origins. */
  return_to: string;
  /** The page's own value, echoed back in the fragment (its login-CSRF check). */
  state: string;
  /** S256 challenge: the code in the fragment is bound to the page's verifier. */
  code_challenge: string;
  /** The hosted pages only: the pending authorization request (checked against the browser's binding cookie). */
  request?: string;
  /**
   * Applications only (`1`): remember this browser. The result is then DEVICE_KEY_NEEDED, and the
   * page that started the sign-in finishes it with its device key (POST UpstreamPaths.device).
   * No key rides in the navigation: a link anyone can craft must not choose a user's device key.
   */
  remember_device?: '1';
}

/**
 * The result the service puts in the return URL's fragment (`#status=…&…`, form-encoded):
 * SUCCESS with `code`; MFA_REQUIRED with `sessionId`, `method` and `userid` (then initiateMfa and
 * verifyMfa as after authenticate); LINK_NEEDED with `link` and `userid` (an account already has
 * this address: a code was emailed to it, POST it to confirmLink); DEVICE_KEY_NEEDED with
 * `ticket` and `userid` (remember_device: POST the ticket with the device key to finish); or an
 * error with `code` as error code (ERR_*) and `message`. Always `state`, as the page sent it.
 */
export type UpstreamResultStatus = 'SUCCESS' | 'MFA_REQUIRED' | 'LINK_NEEDED' | 'DEVICE_KEY_NEEDED' | 'ERROR';

/** POST /v1/upstream/link. */
export interface ConfirmLinkRequest {
  link: string;
  otp: string;
  /** The device key to register with this sign-in (P-256 public members only). */
  devicePublicKey?: DevicePublicJwk;
}

/**
 * POST /v1/upstream/link and /v1/upstream/device: the sign-in goes on as any other (a code, or
 * the MFA step). `deviceId` when a device key was sent: the device the code is bound to, or (at
 * MFA_REQUIRED) the id the device gets once the MFA step passes.
 */
export type ConfirmLinkResponse =
  | { status: 'SUCCESS'; message: string; success: true; code: string; deviceId?: string }
  | { status: 'MFA_REQUIRED'; message: string; sessionId: string; method: string; deviceId?: string };

/** POST /v1/upstream/device: the fragment's single-use ticket and this browser's device key. */
export interface UpstreamDeviceRequest {
  ticket: string;
  devicePublicKey: DevicePublicJwk;
}

/** POST /v1/upstream/device: always with the device's id. */
export type UpstreamDeviceResponse = ConfirmLinkResponse & { deviceId: string };

/** GET /v1/upstream/connections: one button each. */
export interface UpstreamConnectionList {
  connections: { id: string; name: string; preset: ConnectionPreset }[];
}

/** A connection as the admin API and `service-idp connections list --json` show it: never its secrets. */
export interface AdminConnection {
  id: string;
  name: string;
  preset: ConnectionPreset;
  /** The provider's issuer (discovery at issuer + /.well-known/openid-configuration); GitHub: its site. */
  issuer: string;
  clientId: string;
  /** Whether a client secret (or Apple's signing key) is stored, sealed. */
  hasSecret: boolean;
  scopes: string[];
  /** The applications (client ids) that show this connection. */
  clients: string[];
  /** The provider's tokens are kept (sealed) with the linked identity. Off unless the operator turns it on. */
  keepTokens: boolean;
  /** Apple: the team id and key id of the Sign in with Apple key. */
  appleTeamId: string | null;
  appleKeyId: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface AdminConnectionList {
  connections: AdminConnection[];
}

/** A user's identity at a connection, linked by the provider's subject (never the address). */
export interface AdminLinkedIdentity {
  connectionId: string;
  subject: string;
  userId: string;
  /** The address the provider gave when it was linked (for display only). */
  email: string | null;
  /** The person's name as the provider gave it (Apple sends it on the first sign-in only; it is kept). */
  name: string | null;
  linkedAt: number;
  lastUsedAt: number | null;
}

export interface AdminLinkedIdentityList {
  identities: AdminLinkedIdentity[];
}
