import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { login, makeApp, type TestApp } from './helpers.js';

/** Characters a header value may carry (Latin-1 without controls). */
const headerChar = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
  .map((c) => String.fromCharCode(c));
const headerValue = fc.array(headerChar, { maxLength: 60 }).map((chars) => chars.join('').trim());

/** A path segment: arbitrary text, escaped or not. */
const segment = fc.oneof(
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
  fc.string({ maxLength: 12 }).map((s) => s.replace(/[/?#]/g, '')),
  fc.constantFrom('1001', '2002', '%ZZ', '%E0%A4%A', '..', '.', '', 'core', 'auth', '%2F', 'login'),
);

describe('fuzzing the HTTP surface', () => {
  let t: TestApp;
  let token: string;

  beforeAll(async () => {
    t = makeApp({ basePath: '/paia' });
    token = (await login(t)).token;
  });

  it('random paths, query strings, bodies and headers never produce a 500 or a crash', async () => {
    const rare = <T>(arb: fc.Arbitrary<T>) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 6 }, { arbitrary: arb, weight: 1 });
    const path = fc.oneof(
      { arbitrary: fc.webPath(), weight: 1 },
      {
        weight: 4,
        arbitrary: fc
          .tuple(
            fc.oneof({ arbitrary: fc.constant('1001'), weight: 3 }, { arbitrary: segment, weight: 2 }),
            fc.constantFrom('', '/items', '/fees', '/renew', '/request', '/cancel', '/'),
            rare(segment),
          )
          .map(([patron, suffix, extra]) => `/paia/core/${patron}${suffix}${extra === undefined ? '' : `/${extra}`}`),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(
            fc.oneof(
              { arbitrary: fc.constantFrom('login', 'logout', 'change'), weight: 4 },
              { arbitrary: segment, weight: 1 },
            ),
            rare(segment),
          )
          .map(([name, extra]) => `/paia/auth/${name}${extra === undefined ? '' : `/${extra}`}`),
      },
    );
    const query = fc
      .array(
        fc.tuple(
          fc.constantFrom(
            'callback',
            'suppress_response_codes',
            'access_token',
            'username',
            'password',
            'scope',
            'x',
            'doc',
          ),
          fc.oneof(fc.string({ maxLength: 20 }), fc.constantFrom('cb', '', 'TOKEN')),
        ),
        { maxLength: 4 },
      )
      .map((pairs) => pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&'));
    const body = fc.oneof(
      fc.constant(undefined),
      fc.string({ maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      fc.jsonValue({ maxDepth: 3 }).map((doc) => JSON.stringify({ doc })),
      fc
        .array(
          fc.dictionary(
            fc.constantFrom('item', 'edition', 'storage', 'storageid', 'about'),
            fc.jsonValue({ maxDepth: 1 }),
          ),
          { maxLength: 8 },
        )
        .map((doc) => JSON.stringify({ doc })),
      fc
        .array(
          fc.dictionary(fc.constantFrom('item', 'edition', 'storage', 'storageid'), fc.string({ maxLength: 30 }), {
            minKeys: 1,
          }),
          { minLength: 1, maxLength: 6 },
        )
        .map((doc) => JSON.stringify({ doc })),
      fc
        .record(
          {
            username: fc.jsonValue({ maxDepth: 1 }),
            password: fc.jsonValue({ maxDepth: 1 }),
            grant_type: fc.constantFrom('password', 'x'),
            scope: fc.jsonValue({ maxDepth: 1 }),
            patron: fc.jsonValue({ maxDepth: 1 }),
          },
          { requiredKeys: [] },
        )
        .map((o) => JSON.stringify(o)),
      fc
        .string({ maxLength: 100 })
        .map(
          (s) => `username=alice&password=${encodeURIComponent(s)}&grant_type=password&patron=${encodeURIComponent(s)}`,
        ),
      fc.uint8Array({ maxLength: 64 }),
      fc.constant('x'.repeat(5000)),
    );
    const headers = fc.record(
      {
        Authorization: fc.oneof(
          { arbitrary: fc.constant('VALID'), weight: 4 },
          headerValue.map((v) => `Bearer ${v}`),
          headerValue,
        ),
        'Content-Type': fc.oneof(
          { arbitrary: fc.constantFrom('application/json', 'application/x-www-form-urlencoded'), weight: 4 },
          fc.constantFrom(
            'application/json',
            'application/json; charset=utf-8',
            'application/json; charset=latin1',
            'application/x-www-form-urlencoded',
            'text/plain',
            'application/json;;;=',
            'multipart/form-data; boundary=x',
          ),
          headerValue,
        ),
        'Accept-Charset': fc.oneof(
          fc.constantFrom('iso-8859-1', 'utf-8;q=0', '*;q=0', 'latin1;q=0.5, utf8'),
          headerValue,
        ),
        Accept: fc.oneof(fc.constantFrom('application/json; charset=iso-8859-1', '*/*', 'text/html;q=0'), headerValue),
        'X-Request-Id': headerValue,
        'Content-Length': fc.constantFrom('0', '999999999', 'abc', '-1'),
      },
      { requiredKeys: ['Authorization'] },
    );
    const method = fc.oneof(
      { arbitrary: fc.constantFrom('GET', 'POST'), weight: 6 },
      fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD', 'FOO'),
    );

    await fc.assert(
      fc.asyncProperty(method, path, query, body, headers, async (verb, p, q, b, h) => {
        if ((await t.sessions.get(token)) === null) token = (await login(t)).token; // a fuzzed logout may have ended it
        const requestHeaders: Record<string, string> = {};
        for (const [name, value] of Object.entries(h)) {
          if (name === 'Content-Length') continue; // set by Request itself
          requestHeaders[name] = value === 'VALID' ? `Bearer ${token}` : value;
        }
        const url = `${p.startsWith('/') ? p : `/${p}`}${q === '' ? '' : `?${q.replace(/TOKEN/g, token)}`}`;
        const hasBody = b !== undefined && verb !== 'GET' && verb !== 'HEAD';
        let request: Request;
        try {
          request = new Request(`http://localhost${url}`, {
            method: verb,
            headers: requestHeaders,
            ...(hasBody ? { body: b } : {}),
          });
        } catch {
          return; // not a request a client could send
        }
        const response = await t.app.request(request);
        expect(response.status).not.toBe(500);
        expect(response.status).toBeLessThan(600);
        expect(response.headers.get('content-type')).toMatch(
          /^application\/(json|javascript); charset=(utf-8|iso-8859-1)$/,
        );
        expect(response.headers.get('x-paia-version')).toBe('1.4.0');
        const text = await response.text();
        if (verb === 'HEAD') return;
        const json = response.headers.get('content-type')!.startsWith('application/javascript')
          ? (/^\/\*\*\/[A-Za-z0-9_]+\((.*)\);$/s.exec(text)?.[1] ?? 'null')
          : text;
        const parsed = JSON.parse(json) as unknown;
        expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true);
        expect((parsed as { error?: string }).error).not.toBe('internal_error');
        if (response.status >= 400) expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm=/);
      }),
      { numRuns: 400 },
    );
    expect(t.logs().some((line) => line.msg === 'unexpected error')).toBe(false);
  });
});
