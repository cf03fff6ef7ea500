import type { Context } from 'hono';

/**
 * The answers of the operations endpoints (/healthz, /readyz, /metrics):
 * plain JSON, never cached, none of the PAIA headers; no body for HEAD.
 */
export function operationsReply(
  c: Context,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(c.req.method === 'HEAD' ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  });
}
