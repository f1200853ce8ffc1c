import { ServiceError } from '../../errors.js';
import type { EventLog } from '../../events/service.js';
import type { LinkedIdentity, UpstreamStore } from './store.js';

/**
 * A user's linked identities, as the account center (for the signed-in user) and the operator
 * (CLI, admin API) see and unlink them. Every account keeps its address, so its emailed code
 * remains a way in after any unlink: no unlink can lock a user out.
 */
export interface Identities {
  list(userId: string): Promise<LinkedIdentity[]>;
  /** ERR_NOT_FOUND when this user has no such identity; records identity.unlinked (and its webhooks). */
  unlink(userId: string, connectionId: string, subject: string, actor: string): Promise<void>;
}

export function createIdentities({
  store,
  events,
}: {
  store: Pick<UpstreamStore, 'listForUser' | 'unlink'>;
  events: EventLog;
}): Identities {
  return {
    list: (userId) => store.listForUser(userId),
    async unlink(userId, connectionId, subject, actor) {
      if (!(await store.unlink(userId, connectionId, subject))) throw new ServiceError('ERR_NOT_FOUND', 'No such linked identity.');
      await events.record({ type: 'identity.unlinked', userId, detail: { connection: connectionId, actor } });
    },
  };
}
