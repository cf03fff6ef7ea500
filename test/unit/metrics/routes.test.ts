/**
 * The `route` label: a fixed set of names from hono's matched route
 * pattern, never text from the URL; and the HTTP middleware recording one
 * sample per request through the real app (in-process).
 */
import { describe, expect, it } from 'vitest';
import { DaiaService } from '../../../src/backend/daia/service.js';
import { compileUriTemplates } from '../../../src/backend/uris.js';
import { classifyRoute, ROUTE_LABELS, type RouteLabel, routeTable } from '../../../src/metrics/routes.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { loadDialect } from '../../../src/sip2/dialect.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import type { ItemInformation, ItemInformationResponse } from '../../../src/sip2/spec.js';
import { bearer, jsonPost, login, makeApp, type TestApp } from '../http/helpers.js';

interface Recorded {
  method: string;
  route: RouteLabel;
  status: number;
  seconds: number;
}

function recorder() {
  const recorded: Recorded[] = [];
  return {
    recorded,
    metrics: {
      record: (method: string, route: RouteLabel, status: number, seconds: number) =>
        void recorded.push({ method, route, status, seconds }),
    },
  };
}

const daia = (() => {
  const uris = compileUriTemplates({
    item: 'https://lib.example.org/item/{barcode}',
    edition: 'https://lib.example.org/title/{title}',
    storage: null,
    patronType: null,
  });
  const answer = (message: ItemInformation): Promise<ItemInformationResponse> =>
    Promise.resolve({
      code: '18',
      circulationStatus: 3,
      securityMarker: 2,
      feeType: 1,
      transactionDate: sip2DateFrom(new Date(2026, 0, 1)),
      itemIdentifier: message.itemIdentifier,
      titleIdentifier: 'Faust',
      extra: [],
    } as ItemInformationResponse);
  return {
    service: new DaiaService({
      send: answer,
      messages: new Sip2Messages({ institutionId: 'DEMO' }),
      dialect: loadDialect('generic'),
      uris,
      institution: 'DEMO',
    }),
  };
})();

describe('routeTable / classifyRoute', () => {
  it('maps each PAIA and DAIA route pattern to its method name, below any base path', () => {
    for (const base of ['', '/paia']) {
      const table = routeTable({ corePrefix: `${base}/core`, authPrefix: `${base}/auth`, daiaPath: `${base}/daia` });
      expect(Object.fromEntries(table)).toEqual({
        [`${base}/auth/login`]: 'login',
        [`${base}/auth/logout`]: 'logout',
        [`${base}/auth/change`]: 'change',
        [`${base}/core/:patron`]: 'patron',
        [`${base}/core/:patron/items`]: 'items',
        [`${base}/core/:patron/fees`]: 'fees',
        [`${base}/core/:patron/renew`]: 'renew',
        [`${base}/core/:patron/request`]: 'request',
        [`${base}/core/:patron/cancel`]: 'cancel',
        [`${base}/daia`]: 'daia',
      });
      // Every label but `other` is reachable, and only through the table.
      expect(new Set([...table.values(), 'other'])).toEqual(new Set(ROUTE_LABELS));
    }
  });

  it('is other for the catch-all, unknown patterns, a concrete URL and no route at all', () => {
    const table = routeTable({ corePrefix: '/core', authPrefix: '/auth', daiaPath: null });
    expect(classifyRoute(table, '*')).toBe('other');
    expect(classifyRoute(table, '/daia')).toBe('other'); // DAIA not served
    expect(classifyRoute(table, '/core/alice')).toBe('other'); // a URL, not a pattern
    expect(classifyRoute(table, '')).toBe('other');
    expect(classifyRoute(table, undefined)).toBe('other');
  });

  it('covers every route the app registers (no PAIA method can fall into other)', () => {
    for (const basePath of ['', '/paia']) {
      const { app } = makeApp({ basePath, daia });
      // The API description and its page (/openapi.json, /docs) are no PAIA method: they count as other.
      const docs = (path: string) => path === `${basePath}/openapi.json` || path.startsWith(`${basePath}/docs`);
      const patterns = new Set(
        app.routes.map((route) => route.path).filter((path) => path !== '*' && path !== '/*' && !docs(path)),
      );
      const table = routeTable({
        corePrefix: `${basePath}/core`,
        authPrefix: `${basePath}/auth`,
        daiaPath: `${basePath}/daia`,
      });
      expect(patterns.size).toBe(table.size);
      for (const path of patterns) expect(classifyRoute(table, path), path).not.toBe('other');
    }
  });
});

describe('HTTP metrics middleware (in-process app)', () => {
  async function setup(basePath = ''): Promise<{ t: TestApp; recorded: Recorded[]; token: string; patron: string }> {
    const { recorded, metrics } = recorder();
    const t = makeApp({ basePath, metrics, daia });
    const { token, patron } = await login(t);
    recorded.length = 0;
    return { t, recorded, token, patron };
  }

  it('records each PAIA method under its route with its method and status, one sample per request', async () => {
    const { t, recorded, token, patron } = await setup();
    const auth = bearer(token);
    const doc = { doc: [{ item: 'https://lib.example.org/item/it-1' }] };
    const calls: Array<[string, RequestInit]> = [
      [`/core/${patron}`, { headers: auth }],
      [`/core/${patron}/items`, { headers: auth }],
      [`/core/${patron}/fees`, { headers: auth }],
      [`/core/${patron}/renew`, jsonPost(doc, auth)],
      [`/core/${patron}/request`, jsonPost(doc, auth)],
      [`/core/${patron}/cancel`, jsonPost(doc, auth)],
      ['/daia?format=json&id=it-1', {}],
      ['/auth/change', jsonPost({})],
      ['/auth/login', jsonPost({ username: 'alice', password: 'wrong-pass', grant_type: 'password' })],
      ['/auth/logout', jsonPost({ patron }, auth)],
    ];
    for (const [path, init] of calls) await t.app.request(path, init);
    expect(recorded.map(({ method, route, status }) => [method, route, status])).toEqual([
      ['GET', 'patron', 200],
      ['GET', 'items', 200],
      ['GET', 'fees', 200],
      ['POST', 'renew', 200],
      ['POST', 'request', 200],
      ['POST', 'cancel', 200],
      ['GET', 'daia', 200],
      ['POST', 'change', 501],
      ['POST', 'login', 403],
      ['POST', 'logout', 200],
    ]);
    for (const { seconds } of recorded) expect(seconds).toBeGreaterThanOrEqual(0);
  });

  it('keeps the route of refusals inside a method (401, 405, OPTIONS, HEAD) and puts unknown URLs in other', async () => {
    const { t, recorded, patron } = await setup();
    await t.app.request(`/core/${patron}`); // no token
    await t.app.request(`/core/${patron}/items`, { method: 'DELETE' });
    await t.app.request(`/core/${patron}/renew`, { method: 'OPTIONS' });
    await t.app.request('/auth/login', { method: 'GET' });
    await t.app.request(`/core/${patron}`, { method: 'HEAD' });
    await t.app.request(`/core/${patron}/nothing-here`);
    await t.app.request('/favicon.ico');
    await t.app.request('/core/alice', { method: 'BREW' });
    expect(recorded.map(({ method, route, status }) => [method, route, status])).toEqual([
      ['GET', 'patron', 401],
      ['DELETE', 'items', 405],
      ['OPTIONS', 'renew', 200],
      ['GET', 'login', 405],
      ['HEAD', 'patron', 401],
      ['GET', 'other', 404],
      ['GET', 'other', 404],
      ['BREW', 'patron', 405],
    ]);
  });

  it('classifies below a base path, and the paths outside it as other', async () => {
    const { t, recorded, token, patron } = await setup('/paia');
    await t.app.request(`/paia/core/${patron}`, { headers: bearer(token) });
    await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    expect(recorded.map(({ route, status }) => [route, status])).toEqual([
      ['patron', 200],
      ['other', 404],
    ]);
  });

  it('never hands a patron id, token or URL text to the recorder', async () => {
    const { t, recorded, token, patron } = await setup();
    await t.app.request(`/core/${patron}/items?access_token=${token}`);
    await t.app.request(`/core/${patron}%2Fx/items`, { headers: bearer(token) });
    await t.app.request(`/${'a'.repeat(3000)}`);
    const labels = recorded.map(({ method, route }) => `${method} ${route}`).join('|');
    expect(labels).not.toContain(patron);
    expect(labels).not.toContain(token);
    for (const { route } of recorded) expect(ROUTE_LABELS).toContain(route);
  });

  it('records one sample per request with metrics, and the app answers the same without them', async () => {
    const t = makeApp({ daia });
    expect((await t.app.request('/daia?format=json&id=it-1')).status).toBe(200);
    const { recorded, metrics } = recorder();
    const counted = makeApp({ daia, metrics });
    await counted.app.request('/daia?format=json&id=it-1');
    expect(recorded).toHaveLength(1);
  });
});
