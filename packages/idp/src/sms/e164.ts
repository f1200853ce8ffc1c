/** Phone numbers are checked with the same rule in the browser library and the service. */
export { isE164, normalizePhone } from 'service-protocol';
