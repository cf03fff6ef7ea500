/**
 * One HTTP call to a gateway process that never hangs and never throws: the
 * answer's status (or why there was none), Retry-After and JSON body. For
 * tests that sort every answer of a run (outages, floods) rather than expect
 * one.
 */

/** Every call gives up after this. */
const REQUEST_TIMEOUT_MS = 10_000;

export interface Answer {
  /** HTTP status, or why there was none. */
  status: number | 'timeout' | 'network error';
  retryAfter: string | null;
  /** The JSON body; {} when there was none or it was not JSON (the assertions on the body say so). */
  body: Record<string, unknown>;
}

export async function call(
  base: string,
  method: 'GET' | 'POST',
  path: string,
  options: { token?: string; json?: unknown } = {},
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (options.token !== undefined) headers.Authorization = `Bearer ${options.token}`;
  if (options.json !== undefined) headers['Content-Type'] = 'application/json';
  try {
    const response = await fetch(new URL(path, base), {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // not JSON
    }
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body };
  } catch (error) {
    const name = (error as Error).name;
    return { status: name === 'TimeoutError' ? 'timeout' : 'network error', retryAfter: null, body: {} };
  }
}
