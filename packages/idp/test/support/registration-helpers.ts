/** Requests of a client that registers itself (RFC 7591) and manages its registration (RFC 7592), as its code sends them. */
import type { TestService } from './helpers.js';

/** POST /oauth/register with `metadata` as JSON: the answer's status, body and headers. */
export async function register(service: TestService, metadata: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${service.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(metadata),
  });
  return { status: response.status, body: await response.json(), headers: response.headers };
}

/** `method` on a registration_client_uri (moved onto the test service's origin) with the registration access token. */
export async function manage(service: TestService, method: string, uri: string, token: string | undefined, body?: unknown) {
  const response = await fetch(uri.replace(/^https?:\/\/[^/]+/, service.url), {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
}
