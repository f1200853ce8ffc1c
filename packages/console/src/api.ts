import type { ConsoleSessionInfo } from 'service-protocol';

/** A refusal from the admin API: its `{ code, message }`, shown as is. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSessionEnded: () => void = () => {};

/** The signed-in operator and the per-session token every admin call carries. */
export async function loadSession(ended: () => void): Promise<ConsoleSessionInfo | undefined> {
  onSessionEnded = ended;
  const response = await fetch('/admin/session', { credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (!response.ok) return undefined;
  const session = (await response.json()) as ConsoleSessionInfo;
  csrfToken = session.csrfToken;
  return session;
}

/**
 * One admin API call (/admin/v1) on the console's session cookie, with its token. The referrer
 * policy lets the browser send this page's Origin, which the service checks.
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', 'x-console-csrf': csrfToken };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`/admin/v1${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    referrerPolicy: 'same-origin',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  if (response.status === 204) return undefined as T;
  const answer = (await response.json().catch(() => ({}))) as { code?: string; message?: string };
  if (!response.ok) {
    if (response.status === 401) onSessionEnded();
    throw new ApiError(response.status, answer.code ?? 'ERR_INTERNAL', answer.message ?? `HTTP ${response.status}`);
  }
  return answer as T;
}

export async function signOut(): Promise<void> {
  await fetch('/admin/signout', {
    method: 'POST',
    credentials: 'same-origin',
    referrerPolicy: 'same-origin',
    headers: { 'x-console-csrf': csrfToken },
  });
}

export const query = (params: Record<string, string | number | undefined>) => {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
};
