/**
 * The admin API (/admin/v1) as an operator's script calls it: a bearer admin key, JSON in and
 * out. Answers are returned whatever their status, for tests to assert on.
 */
export function adminApi(serviceUrl: string, adminKey: string) {
  return async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const response = await fetch(`${serviceUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
}
