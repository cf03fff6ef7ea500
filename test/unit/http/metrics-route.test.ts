/**
 * The /metrics route on its own: only its path, GET/HEAD, the client
 * allowlist, and 503 (never 500) when collection fails.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ClientAllowlist } from '../../../src/auth/client-allowlist.js';
import { socketAddressOf } from '../../../src/http/app.js';
import { METRICS_FORBIDDEN, type MetricsRouteOptions, mountMetrics } from '../../../src/http/routes/metrics.js';
import { GatewayMetrics } from '../../../src/metrics/gateway.js';

const ENV = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };

function route(overrides: Partial<MetricsRouteOptions> = {}) {
  const metrics = new GatewayMetrics({ defaultMetrics: false });
  metrics.watch({ sessions: () => 3 });
  const seen: unknown[] = [];
  const app = new Hono();
  mountMetrics(app, {
    metrics,
    allowedClients: new ClientAllowlist(['127.0.0.1', '::1']),
    clientAddress: (c) => {
      seen.push(c.env);
      return socketAddressOf(c.env);
    },
    ...overrides,
  });
  const handle = (url: string, init: RequestInit = {}, env: unknown = ENV) => app.request(url, init, env as object);
  return { handle, seen, metrics };
}

describe('the /metrics route', () => {
  it('answers only /metrics at the root', async () => {
    const { handle } = route();
    for (const url of [
      'http://h/',
      'http://h/core/metrics',
      'http://h/metrics/x',
      'http://h/paia/metrics',
      'http://h/metricsx',
      'http://h/healthz',
    ]) {
      expect((await handle(url)).status, url).toBe(404);
    }
    expect((await handle('http://h/metrics?name[]=x')).status).toBe(200);
  });

  it('GET: 200 with the exposition text, its content type, no caching', async () => {
    const { handle, seen } = route();
    const response = await handle('http://h/metrics');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-store');
    expect(await response.text()).toMatch(/^paia_auth_sessions 3$/m);
    // The address is asked of the server's env, as for auth.allowedClients.
    expect(seen).toEqual([ENV]);
  });

  it('HEAD: 200 without a body; other methods: 405 with Allow', async () => {
    const { handle } = route();
    const head = await handle('http://h/metrics', { method: 'HEAD' });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    const post = await handle('http://h/metrics', { method: 'POST', body: 'x' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('403 for a client outside metrics.allowedClients and for an unknown address; 200 for an allowed one', async () => {
    const { handle } = route({ allowedClients: new ClientAllowlist(['10.0.0.0/8']) });
    const refused = await handle('http://h/metrics');
    expect(refused.status).toBe(403);
    expect(refused.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await refused.json()).toEqual({ status: 'error', error: METRICS_FORBIDDEN });
    expect((await handle('http://h/metrics', {}, {})).status).toBe(403);
    const inside = { incoming: { socket: { remoteAddress: '::ffff:10.1.2.3' } } };
    expect((await handle('http://h/metrics', {}, inside)).status).toBe(200);
  });

  it('an empty allowlist lets any client read', async () => {
    const { handle } = route({ allowedClients: new ClientAllowlist([]) });
    expect(
      (await handle('http://h/metrics', {}, { incoming: { socket: { remoteAddress: '203.0.113.9' } } })).status,
    ).toBe(200);
  });

  it('503, never 500, when collection fails or the address cannot be read', async () => {
    const { handle, metrics } = route();
    metrics.watch({
      sessions: () => {
        throw new Error('boom');
      },
    });
    const failed = await handle('http://h/metrics');
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as { status: string }).status).toBe('error');
    const broken = route({
      clientAddress: () => {
        throw new Error('no socket');
      },
    }).handle;
    expect((await broken('http://h/metrics')).status).toBe(503);
  });
});
