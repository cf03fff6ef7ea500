/**
 * Demo mode (no sip2.host): the item and edition URIs start with where the
 * gateway really listens, base path included, so that a client can hand them
 * back. A real gateway process with its embedded simulator, on a free port.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { daiaSchemaErrors } from '../helpers/daia-schema.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';

async function call(
  url: string,
  init: { method?: string; token?: string; body?: unknown } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      ...(init.body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...(init.token ? { Authorization: `Bearer ${init.token}` } : {}),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('the demo on a free port below a base path', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess({ sip2Port: null, dialect: 'generic', env: { PAIA_HTTP_BASE_PATH: '/paia' } });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('prints its base URL, base path included, in the listening line', () => {
    expect(new URL(gateway.url).port).not.toBe('8080');
    expect(gateway.stdout()).toContain(`paia-sip2 listening on ${gateway.url}/paia\n`);
  });

  it('writes item URIs on its own port and base path, and renews with such a URI', async () => {
    const base = `${gateway.url}/paia`;
    const login = await call(`${base}/auth/login`, {
      body: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
    });
    expect(login.status).toBe(200);
    const token = login.body.access_token as string;
    const items = await call(`${base}/core/alice/items`, { token });
    expect(items.status).toBe(200);
    const docs = items.body.doc as { item?: string; edition?: string; status: number }[];
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(doc.item).toMatch(new RegExp(`^${base.replace(/[.]/g, '\\.')}/item/`));
      if (doc.edition !== undefined) expect(doc.edition.startsWith(`${base}/title/`), doc.edition).toBe(true);
    }
    const loan = docs.find((doc) => doc.status === 3);
    expect(loan, JSON.stringify(docs)).toBeDefined();
    const renew = await call(`${base}/core/alice/renew`, { token, body: { doc: [{ item: loan?.item }] } });
    expect(renew.status).toBe(200);
    const [renewed] = renew.body.doc as { item?: string; error?: string; status?: number }[];
    expect(renewed?.error, JSON.stringify(renewed)).toBeUndefined();
    expect(renewed?.item).toBe(loan?.item);
    expect(renewed?.status).toBe(3);
  });

  it('answers DAIA for the edition URI of a demo title with its copies and their availability (the shipped demo mapping)', async () => {
    const base = `${gateway.url}/paia`;
    // Die Verwandlung (titleId t-verwandlung): it-0031 at MAIN and it-0032 at BRANCH, both on the shelf.
    const edition = `${base}/title/t-verwandlung`;
    const answer = await call(`${base}/daia?id=${encodeURIComponent(edition)}&format=json`);
    expect(answer.status).toBe(200);
    expect(daiaSchemaErrors(answer.body)).toEqual([]);
    const [doc] = answer.body.document as Array<{ id: string; about?: string; item?: Array<Record<string, unknown>> }>;
    expect(doc?.id).toBe(edition);
    expect(doc?.about).toBe('Die Verwandlung');
    expect(doc?.item?.map((copy) => [copy.id, (copy.storage as { content?: string }).content])).toEqual([
      [`${base}/item/it-0031`, 'MAIN'],
      [`${base}/item/it-0032`, 'BRANCH'],
    ]);
    for (const copy of doc?.item ?? []) expect(copy.available, JSON.stringify(copy)).toBeDefined();
  });
});

describe('links the gateway writes', () => {
  let gateway: GatewayProcess;
  beforeAll(async () => {
    gateway = await startGatewayProcess({
      sip2Port: null,
      dialect: 'generic',
      env: { PAIA_HTTP_BASE_PATH: '/paia', PAIA_DAIA_MAX_IDS: '1' },
    });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  /** A DAIA request with a Host header of the client's choosing (fetch would not send one). */
  function daiaLink(host: string): Promise<string | undefined> {
    const { port } = new URL(gateway.url);
    return new Promise((resolve, reject) => {
      const request = httpRequest(
        { host: '127.0.0.1', port, path: '/paia/daia?format=json&id=a|b', headers: { Host: host }, timeout: 10_000 },
        (response) => {
          response.resume();
          response.on('end', () => {
            const link = response.headers.link;
            resolve(Array.isArray(link) ? link.join(', ') : link);
          });
        },
      );
      request.on('timeout', () => request.destroy(new Error('no answer within 10 s')));
      request.on('error', reject);
      request.end();
    });
  }

  it("start with where the gateway listens, never with the client's Host header", async () => {
    const link = await daiaLink('evil.example.org');
    expect(link).toBe(`<${gateway.url}/paia/daia?format=json&id=b>; rel="next"`);
  });
});
