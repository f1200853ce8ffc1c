/** Test doubles shared by the service-web suites: an in-memory fake service behind an injected fetch. */

export interface RecordedCall {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | undefined;
}

export type Route = (call: RecordedCall) => { status: number; body: unknown } | Promise<{ status: number; body: unknown }>;

/** A fetch that answers from `routes` (keyed `METHOD /path`) and records every call. */
export function fakeFetch(routes: Record<string, Route>): { fetch: typeof fetch; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const fetchFn = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init?.headers ?? {}) as Record<string, string>)) headers[k.toLowerCase()] = v;
    const call: RecordedCall = {
      method: init?.method ?? 'GET',
      path: url.pathname,
      headers,
      body: typeof init?.body === 'string' ? JSON.parse(init.body) : undefined,
    };
    calls.push(call);
    const route = routes[`${call.method} ${call.path}`];
    if (!route) return json(404, { code: 'ERR_NOT_FOUND', message: 'Not found' });
    const answer = await route(call);
    return json(answer.status, answer.body);
  };
  return { fetch: fetchFn as typeof fetch, calls };
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

export const CLIENT_ROUTE: Record<string, Route> = {
  'GET /v1/client': (call) =>
    call.headers['x-service-key'] === 'pk_test'
      ? { status: 200, body: { clientId: 'client_1', name: 'Demo', issuer: 'http://127.0.0.1:8080' } }
      : { status: 401, body: { code: 'ERR_CLIENT_KEY_INVALID', message: 'Unknown key' } },
};

export const BASE_URL = 'http://127.0.0.1:8080';
