import { request as httpRequest } from 'node:http';

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

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request on a TCP connection of its own (no keep-alive pool): a
 * shutdown test sees each request reach the listener anew, and the primary
 * of several workers hands each new connection to the next worker. Rejects
 * after 10 s (`timeoutMs`) without an answer, with an error whose message
 * starts "no answer within".
 */
export function sendOnOwnConnection(
  url: string,
  options: { method?: string; token?: string; json?: unknown; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    const body = options.json === undefined ? undefined : JSON.stringify(options.json);
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        agent: false,
        timeout: timeoutMs,
        headers: {
          ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
    req.on('error', reject);
    req.end(body);
  });
}
