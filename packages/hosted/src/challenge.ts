/**
 * The send challenge (CHALLENGE_REQUIRED: many codes were asked lately): solved here without a
 * visible step, the live region saying "Checking your browser…" while it runs, then the same
 * call is made again with the solution. The user sees nothing else.
 */
import type { SendChallenge } from 'service-web';
import { solveChallenge } from 'service-web/challenge';
import { t } from './i18n.js';
import { say } from './page.js';

/** `send` once; if the service asks for a proof of work first, solves it and sends again with the solution. */
export async function solvingChallenge<R extends { status: string; challenge?: SendChallenge }>(
  send: (challengeSolution?: string) => Promise<R>,
): Promise<R> {
  const first = await send();
  if (first.status !== 'CHALLENGE_REQUIRED' || !first.challenge) return first;
  say(t('hosted.status.checking'));
  const challengeSolution = await solveChallenge(first.challenge);
  if (!challengeSolution) return first;
  const again = await send(challengeSolution);
  say('');
  return again;
}
