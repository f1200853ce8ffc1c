/**
 * service-web/dpop: DPoP proofs (RFC 9449) signed by this browser's device key, the
 * non-extractable key service-web keeps in IndexedDB for a remembered user. Tokens bound to it
 * (`cnf.jkt`) are as bound as the device: a copy of them is worth nothing without the browser
 * that holds the key. In its own entry point so that the core stays within its size budget.
 *
 * @example
 * ```ts
 * import { ServiceDpop } from 'service-web/dpop';
 * const dpop = new ServiceDpop();
 * await dpop.init('pk_...', 'https://id.example.com');
 * const r = await dpop.dpop({ userid: 'ann@example.com', method: 'POST', url: 'https://id.example.com/oauth/token', nonce });
 * if (r.status === 'SUCCESS') await fetch('/api/login', { method: 'POST', body: JSON.stringify({ code, dpop: r.headers.DPoP }) });
 * ```
 *
 * @packageDocumentation
 */
export { type DpopInput, type DpopResult, ServiceDpop } from './dpop/client.js';
