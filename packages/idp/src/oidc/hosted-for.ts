import { type ClientService, HOSTED_CLIENT_ID } from '../clients/service.js';
import type { ClientRecord } from '../clients/store.js';
import { ServiceError } from '../errors.js';
import type { OidcService } from './service.js';

/**
 * The hosted client as it acts for a pending request (the app's name and MFA policy) and the
 * app's id, for a first factor that leaves the page (factors/upstream/). `binding`: checked
 * against the request's binding cookie; undefined: not asked again (ERR_SESSION_INVALID otherwise).
 */
export const hostedSignInFor =
  (oidc: OidcService, clients: Pick<ClientService, 'findById'>) =>
  async (requestId: string, binding: string | undefined): Promise<{ client: ClientRecord; appClientId: string }> => {
    if (binding !== undefined) await oidc.hostedCeremonyContext(requestId, binding || undefined);
    const [pending, hosted] = await Promise.all([oidc.pendingRequest(requestId), clients.findById(HOSTED_CLIENT_ID)]);
    if (!pending || !hosted) throw new ServiceError('ERR_SESSION_INVALID', 'This sign-in has expired. Go back to the app and start again.');
    return { client: await oidc.hostedClientFor(hosted, requestId), appClientId: pending.client.id };
  };
