/**
 * init()'s `authorizationRequest` (the service's hosted sign-in pages): every call of the core
 * client and of the passkey client sends the pending request in x-service-authorization-request
 * and the service origin's cookies (credentials 'same-origin'); without it, neither (no header,
 * credentials 'omit'). A value that is not a non-empty string is INVALID_REQUEST before any call.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ServiceClient } from '../src/client.ts';
import { ServicePasskeys } from '../src/passkeys.ts';
import { BASE_URL } from './helpers.ts';

interface Sent {
  path: string;
  header: string | null;
  credentials: RequestCredentials | undefined;
}

function recordingFetch() {
  const sent: Sent[] = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit) => {
    sent.push({
      path: new URL(String(input)).pathname,
      header: new Headers(init?.headers).get('x-service-authorization-request'),
      credentials: init?.credentials,
    });
    const body = new URL(String(input)).pathname.endsWith('/client')
      ? { clientId: 'cli_hosted', name: 'Hosted' }
      : { status: 'OTP_NEEDED', message: '', deviceToken: 'dt_0123456789' };
    return new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });
  };
  return { fetch: fetchFn as typeof fetch, sent };
}

test('ServiceClient sends the authorization request and same-origin cookies on every call', async () => {
  const { fetch, sent } = recordingFetch();
  const client = new ServiceClient({ fetch });
  assert.equal((await client.init('pk_test', BASE_URL, { authorizationRequest: 'req_123' })).status, 'INITIALIZED');
  assert.equal((await client.authenticate('ann@example.com')).status, 'OTP_NEEDED');
  assert.deepEqual(
    sent.map(({ header, credentials }) => ({ header, credentials })),
    [
      { header: 'req_123', credentials: 'same-origin' },
      { header: 'req_123', credentials: 'same-origin' },
    ],
  );
});

test('without it, ServiceClient sends no such header and no cookies', async () => {
  const { fetch, sent } = recordingFetch();
  const client = new ServiceClient({ fetch });
  await client.init('pk_test', BASE_URL);
  await client.authenticate('ann@example.com');
  assert.ok(sent.length === 2 && sent.every((s) => s.header === null && s.credentials === 'omit'), JSON.stringify(sent));
});

test('ServicePasskeys takes the same option', async () => {
  const { fetch, sent } = recordingFetch();
  const passkeys = new ServicePasskeys({ fetch });
  assert.equal((await passkeys.init('pk_test', BASE_URL, { authorizationRequest: 'req_123' })).status, 'INITIALIZED');
  assert.deepEqual(sent, [{ path: '/v1/client', header: 'req_123', credentials: 'same-origin' }]);
});

test('an authorizationRequest that is not a non-empty string is INVALID_REQUEST, before any call', async () => {
  for (const value of ['', 42]) {
    const { fetch, sent } = recordingFetch();
    const options = { authorizationRequest: value } as unknown as { authorizationRequest: string };
    assert.equal((await new ServiceClient({ fetch }).init('pk_test', BASE_URL, options)).status, 'INVALID_REQUEST');
    assert.equal((await new ServicePasskeys({ fetch }).init('pk_test', BASE_URL, options)).status, 'INVALID_REQUEST');
    assert.equal(sent.length, 0);
  }
});
