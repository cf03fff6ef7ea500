import type { MiddlewareHandler } from 'hono';

/**
 * The control endpoint listens on 127.0.0.1 only, but since it serves a page
 * a tester opens in the browser they also browse the web with, two browser
 * attacks reach it: a page elsewhere posting to it (a plain-text POST needs
 * no preflight, and the routes read JSON whatever the content type), and DNS
 * rebinding (a name of the attacker's resolving to 127.0.0.1, which makes
 * GET /traffic, patron barcodes and terminal users included, same-origin for
 * it). So a request must name a loopback host, and one that changes state and
 * comes from a browser (it carries Origin) must come from a loopback origin.
 * curl, scripts and tests send no Origin and are unaffected.
 */

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

export function loopbackOnly(): MiddlewareHandler {
  return async (c, next) => {
    if (!isLoopback(c.req.header('host'))) return c.json({ error: 'the control endpoint answers 127.0.0.1 only' }, 403);
    if (!READS.has(c.req.method)) {
      const origin = c.req.header('origin');
      if (origin !== undefined && !isLoopback(hostOf(origin)))
        return c.json({ error: 'changes come from the control page or a local client only' }, 403);
    }
    await next();
  };
}

function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

/** host[:port], as in a Host header or a URL's host. */
function isLoopback(host: string | undefined): boolean {
  if (host === undefined) return false;
  const name = host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.replace(/:\d+$/, '');
  return LOOPBACK.has(name.toLowerCase());
}
