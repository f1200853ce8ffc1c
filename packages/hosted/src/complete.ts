/**
 * The end of a successful step: the hosted code service-web got is traded at /signin/complete
 * for the app's code. With recovery codes (an MFA enrollment), or where the page may offer to add
 * a passkey, the code is redeemed at once and the sign-in held by the service, so nothing expires
 * while the user copies the codes or makes a passkey; /signin/continue then finishes it.
 */
import { goToApp, post, Routes } from './hosted-api.js';
import { t } from './i18n.js';
import { config, say } from './page.js';
import { afterHold, showRecoveryCodes } from './recovery-codes.js';
import { newSessionKey } from './session-key.js';
import { passkeys, signIn } from './state.js';

/**
 * Whether this browser can create a passkey here: WebAuthn with a user-verifying platform
 * authenticator (fingerprint, face, screen lock), on a host name (never an IP address), and
 * the sign-in was not itself made with a passkey.
 */
async function canAddPasskey(): Promise<boolean> {
  if (signIn.passkeyFirst || !navigator.credentials?.create) return false;
  const support = await passkeys.support();
  return support.passkeys && support.platformAuthenticator;
}

/** A step's SUCCESS: its hosted code, and the recovery codes an enrollment shows once. */
export async function complete(result: { code: string; recoveryCodes?: string[] }): Promise<void> {
  const pkce = signIn.pkce;
  if (!pkce) throw new Error('no PKCE pair');
  const body = { request: config.request, code: result.code, codeVerifier: pkce.codeVerifier };
  const codes = result.recoveryCodes ?? [];
  const mayOffer = await canAddPasskey();
  if (codes.length || mayOffer) {
    const held = await post(Routes.signInComplete, { ...body, hold: true });
    if (!held) return;
    // The service says whether the user has no passkey for these pages yet.
    signIn.offerPasskey = mayOffer && 'held' in held && held.passkeyOffer === true;
    if (!codes.length) return afterHold();
    return showRecoveryCodes(codes);
  }
  say(t('hosted.status.signingIn'));
  // The session this answer sets is bound to a new key of this page (session-key.ts), where WebCrypto allows.
  const sessionKey = await newSessionKey();
  const done = await post(Routes.signInComplete, { ...body, ...(sessionKey ? { sessionKey } : {}) });
  if (done && 'location' in done) goToApp(done);
}
