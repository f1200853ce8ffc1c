/**
 * The hosted sign-in pages' own routes (Paths.signInComplete, signInContinue,
 * signInPasskeyOptions, signInPasskey): what the page posts and what it gets back. Every body
 * names the pending authorization request (`request`, the page's `/signin?request=…`); the
 * binding cookie and the Origin header go with it (same origin only). docs/protocol.md
 * ("Sign-in with redirects").
 */
import type { DevicePublicJwk } from './bodies.js';
import type { PasskeyAttestationJson, PasskeyCreationOptionsJson } from './passkeys.js';

/** POST /signin/complete: the hosted code service-web got, and its PKCE verifier. */
export interface SignInCompleteRequest {
  request: string;
  code: string;
  codeVerifier: string;
  /** true: redeem the hosted code and hold the sign-in (the page shows recovery codes or the passkey offer); /signin/continue finishes it. */
  hold?: boolean;
  /**
   * The public half of the page's new non-extractable WebCrypto key (P-256): the session this
   * sign-in sets is bound to it (the fallback of DBSC), so it lives only with a short cookie the
   * page renews by proof (POST /signin/session/renew). Without it the session is unbound.
   */
  sessionKey?: DevicePublicJwk;
}

/** The end of a hosted sign-in: where the browser goes. */
export interface SignInRedirect {
  /** The app's redirect_uri with its code, state and iss; with `form`, the redirect_uri alone. */
  location: string;
  /** response_mode=form_post: the page posts these fields (code, state, iss) to `location` instead of navigating to it. */
  form?: Record<string, string>;
}

/** /signin/complete with `hold`: the sign-in is held on the pending request. */
export interface SignInHeld {
  held: true;
  /** The user has no passkey for the hosted pages (and did not sign in with one): the page may offer to add one. */
  passkeyOffer: boolean;
}

export type SignInCompleteResponse = SignInRedirect | SignInHeld;

/** POST /signin/continue: the pending request, and the page's session key as at /signin/complete. */
export interface SignInContinueRequest {
  request: string;
  sessionKey?: DevicePublicJwk;
}

export type SignInContinueResponse = SignInRedirect;

/** POST /signin/passkey/options: the pending request alone. */
export interface SignInPasskeyOptionsRequest {
  request: string;
}

export interface SignInPasskeyOptionsResponse {
  options: PasskeyCreationOptionsJson;
}

/** POST /signin/passkey: the new passkey of the held sign-in's user. */
export interface SignInPasskeyRequest {
  request: string;
  credential: PasskeyAttestationJson;
}

export interface SignInPasskeyResponse {
  added: true;
  /** The passkey is synced (backed up). */
  synced: boolean;
}

/**
 * POST /signin/session/renew (the renewal interstitial): `proof`, a JWT signed by the page's
 * session key (header alg ES256, typ dbsc+jwt; payload jti = the interstitial's challenge), renews
 * the short cookie. Without `proof` (this browser holds no key): the session cookies are dropped
 * in this browser, so /authorize asks it to sign in.
 */
export interface SessionRenewRequest {
  proof?: string;
}

export interface SessionRenewResponse {
  /** true: a new short cookie is set; false: this browser's session cookies are dropped. */
  renewed: boolean;
}
