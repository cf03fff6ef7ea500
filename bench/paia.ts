import type { Dispatcher } from 'undici';

/**
 * The few PAIA calls the benchmarks make, over an undici dispatcher (Pool or
 * Client). Tokens are returned to the caller and never printed.
 */

export interface Answer {
  status: number;
  text: string;
}

export async function call(
  http: Dispatcher,
  method: 'GET' | 'POST',
  path: string,
  options: { token?: string; json?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  }
  const response = await http.request({ method, path, headers, body });
  const text = await response.body.text();
  return { status: response.statusCode, text };
}

/**
 * POST /auth/login; the access token, or an error with the status (never the password). `base`: a library's
 * path (`/DE-001`) on a gateway with several libraries.
 */
export async function login(http: Dispatcher, username: string, password: string, base = ''): Promise<string> {
  const answer = await call(http, 'POST', `${base}/auth/login`, {
    json: { username, password, grant_type: 'password' },
  });
  if (answer.status !== 200) throw new Error(`login ${username}: HTTP ${answer.status} ${describeError(answer.text)}`);
  const token = (JSON.parse(answer.text) as { access_token?: unknown }).access_token;
  if (typeof token !== 'string') throw new Error(`login ${username}: no access_token in the answer`);
  return token;
}

/** POST /auth/logout for the patron; the HTTP status. */
export async function logout(http: Dispatcher, token: string, patron: string): Promise<number> {
  return (await call(http, 'POST', '/auth/logout', { token, json: { patron } })).status;
}

/** GET /core/PATRON/items: the documents, or an error with the status. */
export async function items(http: Dispatcher, token: string, patron: string): Promise<unknown[]> {
  const answer = await call(http, 'GET', `/core/${encodeURIComponent(patron)}/items`, { token });
  if (answer.status !== 200) throw new Error(`items ${patron}: HTTP ${answer.status} ${describeError(answer.text)}`);
  const doc = (JSON.parse(answer.text) as { doc?: unknown }).doc;
  if (!Array.isArray(doc)) throw new Error(`items ${patron}: no doc array`);
  return doc;
}

/** The error and error_description of a PAIA error answer (never contains a secret), for messages. */
function describeError(text: string): string {
  try {
    const json = JSON.parse(text) as { error?: unknown; error_description?: unknown };
    return [json.error, json.error_description].filter((part) => typeof part === 'string').join(': ');
  } catch {
    return text.slice(0, 120);
  }
}
