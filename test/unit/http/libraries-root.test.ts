import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { librariesFetch } from '../../../src/http/libraries.js';
import { createLogger } from '../../../src/log.js';
import { HttpMetrics } from '../../../src/metrics/gateway.js';

/**
 * What the gateway with several libraries answers itself (issue 29): a URL
 * of no library. An auth URL answers as PAIA auth does (no `code` in the
 * body), and every such request is counted like a library's, by route "other".
 */
describe('the root of several libraries', () => {
  const registry = new Registry();
  const fetch = librariesFetch({
    basePath: '/paia',
    library: (id) => (id === 'DE-A' ? () => new Response('library') : undefined),
    logger: createLogger({ level: 'silent' }),
    health: { readiness: () => [] },
    requestMetrics: new HttpMetrics(registry),
  });
  const call = async (path: string, init?: RequestInit) => {
    const response = await fetch(new Request(`http://127.0.0.1${path}`, init), {});
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  it("answers an unknown library's auth URL in PAIA auth's error format, its core URL in core's", async () => {
    const auth = await call('/paia/DE-X/auth/login', { method: 'POST' });
    expect(auth.status).toBe(404);
    expect(auth.body).toMatchObject({ error: 'not_found' });
    expect(auth.body).not.toHaveProperty('code');
    const core = await call('/paia/DE-X/core/alice');
    expect(core).toMatchObject({ status: 404, body: { error: 'not_found', code: 404 } });
  });

  it('counts the requests it answers in paia_http_requests_total, by route "other" only', async () => {
    await call('/paia/DE-Y/auth/logout', { method: 'POST' });
    const text = await registry.getSingleMetricAsString('paia_http_requests_total');
    expect(text).toMatch(/^paia_http_requests_total\{method="POST",route="other",status="404"\} [1-9]/m);
    expect(text).not.toContain('DE-Y');
  });
});
