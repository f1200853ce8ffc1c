/** Signing in with a passkey: with or without an address, or from the address field's autofill (conditional UI). */
import { normalizeEmail, PasskeyPaths, type PasskeyRequestOptionsJson } from 'service-protocol';
import { isBadPkce, isEmail } from '../checks.js';
import { request } from '../http.js';
import { invalid, invalidEmail, unexpected } from '../results.js';
import { assertionJson, requestOptions } from '../webauthn-json.js';
import { ceremony, credentialsOf, notSupported, passkeyFailure, support } from './ceremony.js';
import type { PasskeyFailureResult, PasskeySession, PasskeySignInOptions, PasskeySignInResult } from './types.js';

export async function signIn(
  session: PasskeySession,
  options: PasskeySignInOptions | undefined,
  mediation: 'conditional' | undefined,
): Promise<PasskeySignInResult | PasskeyFailureResult> {
  const { userid, code_challenge: codeChallenge, code_challenge_method: method, signal } = options ?? {};
  if (userid !== undefined && !isEmail(userid)) return invalidEmail();
  if (isBadPkce(codeChallenge, method)) return invalid('code_challenge must be an S256 challenge');
  const credentials = credentialsOf(session.deps);
  if (!credentials || (mediation && !(await support(session.deps)).conditionalUi)) return notSupported();
  const asked = await request(session.http, PasskeyPaths.authenticationOptions, {});
  if (asked.failure) return passkeyFailure(asked);
  const made = await ceremony(
    () =>
      credentials.get({
        publicKey: requestOptions(asked.body.options as PasskeyRequestOptionsJson),
        ...(mediation ? { mediation } : {}),
        ...(signal ? { signal } : {}),
      }),
    false,
  );
  if (made.status) return made;
  const answer = await request(session.http, PasskeyPaths.authenticate, {
    credential: assertionJson(made.credential),
    userid: userid === undefined ? undefined : normalizeEmail(userid),
    codeChallenge,
    codeChallengeMethod: codeChallenge && 'S256',
  });
  if (answer.failure) return passkeyFailure(answer);
  const { status, message, code, sessionId, method: mfaMethod, userid: user } = answer.body;
  if (status === 'SUCCESS' && typeof code === 'string')
    return { status: 'SUCCESS', message: String(message), success: true, code, iss: session.iss };
  if (status === 'MFA_REQUIRED' && typeof sessionId === 'string' && typeof user === 'string')
    return { status: 'MFA_REQUIRED', message: String(message), sessionId, method: mfaMethod, userid: user } as PasskeySignInResult;
  return unexpected();
}
