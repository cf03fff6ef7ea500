/**
 * The /metrics handler on its own: only its path, GET/HEAD, the client
 * allowlist, and 503 (never 500) when collection fails.
 */
import { describe, expect, it } from 'vitest';
import { ClientAllowlist } from '../../../src/auth/client-allowlist.js';
import { GatewayMetrics } from '../../../src/metrics/gateway.js';
import { createMetricsHandler, METRICS_FORBIDDEN, type MetricsHandlerOptions } from '../../../src/metrics/handler.js';

const ENV = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };

function handler(overrides: Partial<MetricsHandlerOptions> = {}) {
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  metrics.watch({ sessions: () => 3 });
  const seen: Array<{ request: Request; env: unknown }> = [];
  const handle = createMetricsHandler({
    metrics,
    allowedClients: new ClientAllowlist(['127.0.0.1', '::1']),
    clientAddress: (request, env) => {
      seen.push({ request, env });
      return (env as typeof ENV | undefined)?.incoming.socket.remoteAddress;
    },
    ...overrides,
  });
  return { handle, seen, metrics };
}

describe('createMetricsHandler', () => {
  it('answers only /metrics at the root; everything else is left to the app', () => {
    const { handle } = handler();
    for (const url of ['http://h/', 'http://h/core/metrics', 'http://h/metrics/x', 'http://h/paia/metrics', 'http://h/metricsx', 'http://h/healthz']) {
      expect(handle(new Request(url), ENV), url).toBeUndefined();
    }
    expect(handle(new Request('http://h/metrics?name[]=x'), ENV)).toBeDefined();
  });

  it('GET: 200 with the exposition text, its content type, no caching', async () => {
    const { handle, seen } = handler();
    const response = await handle(new Request('http://h/metrics'), ENV)!;
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toMatch(/^paia_auth_sessions 3$/m);
    // The address is asked of the request and the server's env, as for auth.allowedClients.
    expect(seen).toHaveLength(1);
    expect(seen[0]!.env).toBe(ENV);
  });

  it('HEAD: 200 without a body; other methods: 405 with Allow', async () => {
    const { handle } = handler();
    const head = await handle(new Request('http://h/metrics', { method: 'HEAD' }), ENV)!;
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await handle(new Request('http://h/metrics', { method: 'POST', body: 'x' }), ENV)!;
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('403 for a client outside metrics.allowedClients and for an unknown address; 200 for an allowed one', async () => {
    const { handle } = handler({ allowedClients: new ClientAllowlist(['10.0.0.0/8']) });
    const refused = await handle(new Request('http://h/metrics'), ENV)!;
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await refused.json()).toEqual({ status: 'error', error: METRICS_FORBIDDEN });
    expect((await handle(new Request('http://h/metrics'), undefined)!).status).toBe(403);
    const inside = { incoming: { socket: { remoteAddress: '::ffff:10.1.2.3' } } };
    expect((await handle(new Request('http://h/metrics'), inside)!).status).toBe(200);
  });

  it('an empty allowlist lets any client read', async () => {
    const { handle } = handler({ allowedClients: new ClientAllowlist([]) });
    expect((await handle(new Request('http://h/metrics'), { incoming: { socket: { remoteAddress: '203.0.113.9' } } })!).status).toBe(200);
  });

  it('503, never 500, when collection fails or the address cannot be read', async () => {
    const { handle, metrics } = handler();
    metrics.watch({ sessions: () => { throw new Error('boom'); } });
    const failed = await handle(new Request('http://h/metrics'), ENV)!;
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as { status: string }).status).toBe('error');
    const broken = handler({ clientAddress: () => { throw new Error('no socket'); } }).handle;
    expect((await broken(new Request('http://h/metrics'), ENV)!).status).toBe(503);
  });
});
