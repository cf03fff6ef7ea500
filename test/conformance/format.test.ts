/**
 * Conformance: "Request and response format", "Special request parameters",
 * and the HTTP contract of upstream PAIA (OPTIONS, HEAD, 405 + Allow,
 * X-PAIA-Version, CORS), against the real gateway and simulator processes.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { sourceEntry } from '../helpers/entry-points.js';
import { simulatorIls } from '../helpers/simulator.js';
import { errorBodyProblems, fieldNameProblems, isDate, isMoney, isObject } from './shapes.js';
import {
  charsetOf,
  DIALECTS,
  expectJsonContentType,
  expectOk,
  expectRequestError,
  item,
  jsonpArgument,
  type Reply,
  type Session,
  useFixture,
} from './support.js';

const EMILE = 'Émile Zoë Ångström';

/** Every PAIA method URL this server supports, with its verb. */
const METHOD_URLS: Array<[verb: 'GET' | 'POST', path: string]> = [
  ['GET', '/core/alice'],
  ['GET', '/core/alice/items'],
  ['POST', '/core/alice/renew'],
  ['POST', '/core/alice/request'],
  ['POST', '/core/alice/cancel'],
  ['GET', '/core/alice/fees'],
  ['POST', '/auth/login'],
  ['POST', '/auth/logout'],
];

function headerList(value: string | null): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .filter(Boolean)
    .map((name) => name.toLowerCase());
}

describe.each(DIALECTS)('response format and HTTP contract (%s)', (dialect) => {
  const fx = useFixture(dialect);
  let alice: Session;
  let emile: Session;

  beforeAll(async () => {
    alice = await fx().client.login('alice');
    emile = await fx().client.login('emile');
  });

  /** One response of every kind: success of each read method, login, and request errors. */
  async function sampleResponses(): Promise<Reply[]> {
    const { client } = fx();
    return [
      await client.get('/core/alice', { token: alice.token }),
      await client.get('/core/alice/items', { token: alice.token }),
      await client.get('/core/alice/fees', { token: alice.token }),
      await client.get('/core/emile/items', { token: emile.token }),
      (await client.login('alice')).reply,
      await client.get('/core/alice'),
      await client.get('/core/alice', { token: 'not-a-token' }),
      await client.get('/no/such/url', { token: alice.token }),
      await client.post('/core/alice/renew', { doc: [] }, { token: alice.token }),
      await client.call('PUT', '/core/alice', { token: alice.token }),
      await client.loginReply('nobody-at-all', 'wrong-password'),
    ];
  }

  // ------------------------------------------------------------ response type

  it('Response type: every response, success or request error, is a JSON object', async () => {
    for (const reply of await sampleResponses()) {
      expect(isObject(reply.json), `${reply.request} -> ${reply.status} ${reply.text.slice(0, 200)}`).toBe(true);
    }
  });

  it('Response type: header Content-Type: application/json; "The charset MUST be part of the Content-Type header"', async () => {
    for (const reply of await sampleResponses()) expectJsonContentType(reply);
    const options = await fx().client.call('OPTIONS', '/core/alice');
    expectJsonContentType(options);
  });

  it('Field naming: response fields use lowercase letters a-z only (named exceptions: access_token, token_type, expires_in, error_description, error_uri)', async () => {
    for (const reply of await sampleResponses()) {
      expect(fieldNameProblems(reply.json), reply.request).toEqual([]);
    }
  });

  it('Repeatable fields are encoded as JSON arrays (doc of items, fee of fees)', async () => {
    const { client } = fx();
    const items = expectOk(await client.get('/core/alice/items', { token: alice.token }));
    expect(Array.isArray(items.doc)).toBe(true);
    const fees = expectOk(await client.get('/core/alice/fees', { token: alice.token }));
    expect(Array.isArray(fees.fee)).toBe(true);
  });

  it('account state and service status: nonnegative integers "encoded in JSON as a number, never a string" (also queue)', async () => {
    const { client } = fx();
    const patron = expectOk(await client.get('/core/alice', { token: alice.token }));
    expect(typeof patron.status).toBe('number');
    const items = expectOk(await client.get('/core/alice/items', { token: alice.token }));
    const docs = items.doc as Array<Record<string, unknown>>;
    expect(docs.length).toBeGreaterThan(0);
    for (const doc of docs) {
      expect(typeof doc.status, JSON.stringify(doc)).toBe('number');
      for (const field of ['queue', 'renewals', 'reminder'] as const) {
        if (doc[field] !== undefined) expect(typeof doc[field], `${field} in ${JSON.stringify(doc)}`).toBe('number');
      }
    }
    expect(docs.some((doc) => typeof doc.queue === 'number')).toBe(true);
  });

  it('money: every amount has the format [0-9]+\\.[0-9][0-9] [A-Z][A-Z][A-Z]', async () => {
    const fees = expectOk(await fx().client.get('/core/alice/fees', { token: alice.token }));
    expect(isMoney(fees.amount), String(fees.amount)).toBe(true);
    const list = fees.fee as Array<Record<string, unknown>>;
    expect(list.length).toBeGreaterThan(0);
    for (const fee of list) expect(isMoney(fee.amount), JSON.stringify(fee)).toBe(true);
  });

  it('date: every date field (expires, duedate, fee.date) is YYYY-MM-DD', async () => {
    const { client } = fx();
    const patron = expectOk(await client.get('/core/alice', { token: alice.token }));
    expect(isDate(patron.expires), String(patron.expires)).toBe(true);
    const items = expectOk(await client.get('/core/alice/items', { token: alice.token }));
    const dated = (items.doc as Array<Record<string, unknown>>).filter((doc) => doc.duedate !== undefined);
    expect(dated.length).toBeGreaterThan(0);
    for (const doc of dated) expect(isDate(doc.duedate), JSON.stringify(doc)).toBe(true);
    const fees = expectOk(await client.get('/core/alice/fees', { token: alice.token }));
    for (const fee of fees.fee as Array<Record<string, unknown>>) {
      if (fee.date !== undefined) expect(isDate(fee.date), JSON.stringify(fee)).toBe(true);
    }
  });

  // ------------------------------------------------------------ charset

  it('Response charset: "A server MUST support UTF-8" (Accept-Charset: utf-8 gives the UTF-8 bytes of a non-ASCII name)', async () => {
    const reply = await fx().client.get('/core/emile', { token: emile.token, headers: { 'Accept-Charset': 'utf-8' } });
    expectOk(reply);
    expect(charsetOf(reply.headers.get('content-type'))).toBe('utf-8');
    const text = new TextDecoder('utf-8', { fatal: true }).decode(reply.bytes);
    expect((JSON.parse(text) as { name: string }).name).toBe(EMILE);
  });

  it('Response charset: chosen first from the request Accept-Charset header (ISO-8859-1: bytes decode as Latin-1 to the same name)', async () => {
    const reply = await fx().client.get('/core/emile', {
      token: emile.token,
      headers: { 'Accept-Charset': 'iso-8859-1' },
    });
    expectOk(reply);
    expect(charsetOf(reply.headers.get('content-type'))).toBe('iso-8859-1');
    // Decoded as the declared charset, not as UTF-8: UTF-8 bytes mislabelled Latin-1 would read "Ã‰mile".
    expect((JSON.parse(reply.bytes.toString('latin1')) as { name: string }).name).toBe(EMILE);
  });

  it('Response charset: Accept-Charset preferences with q-values are honoured (utf-8;q=0, iso-8859-1)', async () => {
    const reply = await fx().client.get('/core/emile', {
      token: emile.token,
      headers: { 'Accept-Charset': 'utf-8;q=0, iso-8859-1;q=0.5' },
    });
    expectOk(reply);
    expect(charsetOf(reply.headers.get('content-type'))).toBe('iso-8859-1');
    expect((JSON.parse(reply.bytes.toString('latin1')) as { name: string }).name).toBe(EMILE);
  });

  it('Response charset: chosen second from the Accept header (application/json; charset=iso-8859-1)', async () => {
    const reply = await fx().client.get('/core/emile', {
      token: emile.token,
      headers: { Accept: 'application/json; charset=iso-8859-1' },
    });
    expectOk(reply);
    expect(charsetOf(reply.headers.get('content-type'))).toBe('iso-8859-1');
    expect((JSON.parse(reply.bytes.toString('latin1')) as { name: string }).name).toBe(EMILE);
  });

  it('Response charset: Accept-Charset is chosen first, before the Accept header', async () => {
    const reply = await fx().client.get('/core/emile', {
      token: emile.token,
      headers: { 'Accept-Charset': 'utf-8', Accept: 'application/json; charset=iso-8859-1' },
    });
    expectOk(reply);
    expect(charsetOf(reply.headers.get('content-type'))).toBe('utf-8');
    expect((JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(reply.bytes)) as { name: string }).name).toBe(
      EMILE,
    );
  });

  it('Response charset: "If neither names a supported charset, the server MUST use ISO-8859-1 or UTF-8"', async () => {
    const reply = await fx().client.get('/core/emile', {
      token: emile.token,
      headers: { 'Accept-Charset': 'koi8-r', Accept: 'application/json; charset=shift_jis' },
    });
    expectOk(reply);
    const charset = charsetOf(reply.headers.get('content-type'));
    expect(['utf-8', 'iso-8859-1']).toContain(charset);
    const text = reply.bytes.toString(charset === 'utf-8' ? 'utf8' : 'latin1');
    expect((JSON.parse(text) as { name: string }).name).toBe(EMILE);
  });

  it('Response charset: an ISO-8859-1 response carries every character (titles beyond Latin-1 too) as the UTF-8 one does', async () => {
    const { client } = fx();
    const utf8 = await client.get('/core/emile/items', { token: emile.token, headers: { 'Accept-Charset': 'utf-8' } });
    const latin1 = await client.get('/core/emile/items', {
      token: emile.token,
      headers: { 'Accept-Charset': 'iso-8859-1' },
    });
    expectOk(utf8);
    expectOk(latin1);
    const fromLatin1 = JSON.parse(latin1.bytes.toString('latin1')) as { doc: Array<{ about?: string }> };
    expect(fromLatin1).toEqual(JSON.parse(utf8.bytes.toString('utf8')));
    const titles = fromLatin1.doc.map((doc) => doc.about);
    expect(titles).toContain('Harry Potter y el cáliz de fuego');
    // cp850 (generic) cannot carry these on the SIP2 side; UTF-8 dialects can.
    if (dialect !== 'generic')
      expect(titles).toEqual(expect.arrayContaining(['Der Zauberberg – Roman', 'ノルウェイの森']));
  });

  // ------------------------------------------------------------ callback (JSONP)

  it('callback: "When given, the response is JSONP and its content type MUST be application/javascript" (with charset)', async () => {
    const { client } = fx();
    const plain = await client.get('/core/alice', { token: alice.token });
    const reply = await client.get('/core/alice', { token: alice.token, query: { callback: 'show_Patron_1' } });
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/javascript\s*;\s*charset=(utf-8|iso-8859-1)$/i);
    const argument = jsonpArgument(reply.text, 'show_Patron_1');
    expect(argument, reply.text).toBeDefined();
    expect(JSON.parse(argument!)).toEqual(plain.json);
  });

  it('callback: error responses are wrapped as JSONP too', async () => {
    const reply = await fx().client.get('/core/alice', { query: { callback: 'cb' } });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('content-type')).toMatch(/^application\/javascript\s*;\s*charset=/i);
    expectRequestError(reply, { status: 401, error: 'invalid_grant' });
  });

  it('callback: "Only alphanumeric characters and underscores are allowed" (other names are refused with 400, never echoed as script)', async () => {
    const { client } = fx();
    for (const name of ['alert(1)', 'a.b', 'x;y', '<script>', 'a-b', 'a b', 'cb//']) {
      const reply = await client.get('/core/alice', { token: alice.token, query: { callback: name } });
      expectRequestError(reply, { status: 400, error: 'invalid_request' });
      expect(reply.headers.get('content-type'), `callback=${name}`).toMatch(/^application\/json/i);
      expect(reply.text.trimStart().startsWith('{'), reply.text).toBe(true);
    }
  });

  // ------------------------------------------------------------ suppress_response_codes

  it('suppress_response_codes: "every response, including error responses, MUST carry HTTP status 200"', async () => {
    const { client } = fx();
    const q = { suppress_response_codes: '' };
    const cases: Array<[Reply, number, string, 'core' | 'auth']> = [
      [await client.get('/core/alice', { query: q }), 401, 'invalid_grant', 'core'],
      [await client.get('/core/alice', { token: 'bogus', query: q }), 401, 'invalid_grant', 'core'],
      [await client.get('/core/bob', { token: alice.token, query: q }), 403, 'access_denied', 'core'],
      [await client.get('/core/alice/nothing', { token: alice.token, query: q }), 404, 'not_found', 'core'],
      [await client.call('DELETE', '/core/alice', { token: alice.token, query: q }), 405, 'invalid_request', 'core'],
      [
        await client.call('POST', '/core/alice/renew', {
          token: alice.token,
          query: q,
          raw: '{',
          headers: { 'Content-Type': 'application/json' },
        }),
        400,
        'invalid_request',
        'core',
      ],
      [
        await client.post('/core/alice/renew', { doc: [] }, { token: alice.token, query: q }),
        422,
        'invalid_request',
        'core',
      ],
      [
        await client.post(
          '/auth/change',
          { patron: 'alice', username: 'alice', old_password: 'alice-pass', new_password: 'x-Y-z-123456' },
          { token: alice.token, query: q },
        ),
        501,
        'not_implemented',
        'auth',
      ],
      [await client.loginReply('frank', 'wrong-password', undefined, { query: q }), 403, 'access_denied', 'auth'],
    ];
    for (const [reply, status, error, api] of cases)
      expectRequestError(reply, { status, error, api, suppressed: true });
  });

  it('suppress_response_codes: "The code field is REQUIRED in core responses when suppress_response_codes is given"', async () => {
    const reply = await fx().client.get('/core/alice/items', { query: { suppress_response_codes: '1' } });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ error: 'invalid_grant', code: 401 });
  });

  it('suppress_response_codes: the code field "SHOULD be omitted in auth responses" (also with suppress_response_codes)', async () => {
    const { client } = fx();
    const plain = await client.loginReply('frank', 'wrong-password');
    expectRequestError(plain, { status: 403, error: 'access_denied', api: 'auth' });
    expect(plain.body).not.toHaveProperty('code');
    const suppressed = await client.post(
      '/auth/logout',
      { patron: 'alice' },
      { query: { suppress_response_codes: '' } },
    );
    expectRequestError(suppressed, { status: 401, error: 'invalid_grant', api: 'auth', suppressed: true });
    expect(suppressed.body).not.toHaveProperty('code');
  });

  it('suppress_response_codes: a successful response is the same with and without it', async () => {
    const { client } = fx();
    const plain = await client.get('/core/alice', { token: alice.token });
    const suppressed = await client.get('/core/alice', { token: alice.token, query: { suppress_response_codes: '' } });
    expect(suppressed.status).toBe(200);
    expect(suppressed.json).toEqual(plain.json);
  });

  // ------------------------------------------------------------ headers, verbs (upstream PAIA)

  it('"A server MAY support only a subset of methods, but it MUST return a valid response or a valid error response for every method request" (every method URL x every verb, with and without token)', async () => {
    const { client } = fx();
    const urls = [...METHOD_URLS.map(([, path]) => path), '/auth/change'];
    const body = { doc: [{ item: 'https://elsewhere.example/item/1' }] };
    for (const path of urls) {
      const api = path.startsWith('/auth') ? 'auth' : 'core';
      for (const verb of ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        for (const token of [alice.token, undefined]) {
          const withBody = ['POST', 'PUT', 'PATCH'].includes(verb);
          const reply = await client.call(verb, path, {
            ...(token ? { token } : {}),
            ...(withBody ? { json: body } : {}),
          });
          const what = `${reply.request} (${token ? 'token' : 'no token'}) -> ${reply.status} ${reply.text.slice(0, 200)}`;
          expect(
            reply.status === 200 || reply.status === 204 || (reply.status >= 400 && reply.status < 600),
            what,
          ).toBe(true);
          expect(reply.headers.get('x-paia-version'), what).toBeTruthy();
          if (verb === 'HEAD' || reply.status === 204) continue;
          expectJsonContentType(reply);
          expect(isObject(reply.json), what).toBe(true);
          if (reply.status >= 400) {
            expect(errorBodyProblems(reply.json, { api, status: reply.status }), what).toEqual([]);
            expect(reply.headers.get('www-authenticate') ?? '', what).toMatch(/^Bearer(?:\s|$)/);
          } else {
            expect(reply.body, what).not.toHaveProperty('error');
          }
        }
      }
    }
  });

  it('X-PAIA-Version: servers MUST send the version of PAIA they were checked against, on every response', async () => {
    const replies = [...(await sampleResponses()), await fx().client.call('OPTIONS', '/core/alice/items')];
    for (const reply of replies) {
      expect(reply.headers.get('x-paia-version'), reply.request).toMatch(/^\d+\.\d+(?:\.\d+)?$/);
    }
  });

  it('CORS: every response allows any origin and exposes X-OAuth-Scopes and X-Accepted-OAuth-Scopes', async () => {
    const { client } = fx();
    const origin = { Origin: 'https://discovery.example.net' };
    const replies = [
      await client.get('/core/alice', { token: alice.token, headers: origin }),
      await client.get('/core/alice', { headers: origin }),
      await client.loginReply('alice', 'alice-pass', undefined, { headers: origin }),
    ];
    for (const reply of replies) {
      expect(['*', origin.Origin], reply.request).toContain(reply.headers.get('access-control-allow-origin'));
      const exposed = headerList(reply.headers.get('access-control-expose-headers'));
      expect(exposed, reply.request).toEqual(expect.arrayContaining(['x-oauth-scopes', 'x-accepted-oauth-scopes']));
    }
  });

  it('OPTIONS: "All supported API method URLs MUST also be accessible with HTTP verb OPTIONS", without an access token', async () => {
    const { client } = fx();
    for (const [verb, path] of METHOD_URLS) {
      const reply = await client.call('OPTIONS', path, {
        headers: {
          Origin: 'https://discovery.example.net',
          'Access-Control-Request-Method': verb,
          'Access-Control-Request-Headers': 'Authorization',
        },
      });
      expect([200, 204], `OPTIONS ${path} -> ${reply.status} ${reply.text}`).toContain(reply.status);
      expect(reply.headers.get('access-control-allow-origin'), path).toBeTruthy();
      expect(
        headerList(reply.headers.get('access-control-allow-methods') ?? reply.headers.get('allow')),
        path,
      ).toContain(verb.toLowerCase());
    }
  });

  it('OPTIONS: Access-Control-Allow-Headers "MUST include the values Content-Type, Authorization, and Accept-Language"', async () => {
    const { client } = fx();
    for (const [verb, path] of METHOD_URLS) {
      const reply = await client.call('OPTIONS', path, {
        headers: { Origin: 'https://discovery.example.net', 'Access-Control-Request-Method': verb },
      });
      expect(headerList(reply.headers.get('access-control-allow-headers')), path).toEqual(
        expect.arrayContaining(['content-type', 'authorization', 'accept-language']),
      );
    }
  });

  it('HEAD: "All API methods with HTTP verb GET MAY also be accessible with HTTP verb HEAD" (GET\'s status and headers, no body)', async () => {
    const { client } = fx();
    for (const path of ['/core/alice', '/core/alice/items', '/core/alice/fees']) {
      const get = await client.get(path, { token: alice.token });
      const head = await client.call('HEAD', path, { token: alice.token });
      expect(head.status, path).toBe(200);
      expect(head.bytes.length, path).toBe(0);
      expect(head.headers.get('content-type'), path).toBe(get.headers.get('content-type'));
      expect(head.headers.get('x-accepted-oauth-scopes'), path).toBe(get.headers.get('x-accepted-oauth-scopes'));
    }
    const anonymous = await client.call('HEAD', '/core/alice');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate') ?? '').toMatch(/^Bearer/);
  });

  it('invalid_request 405: "Unexpected HTTP verb", with Allow listing the supported verbs', async () => {
    const { client } = fx();
    const cases: Array<[method: string, path: string, expectedVerb: string, api: 'core' | 'auth']> = [
      ['PUT', '/core/alice', 'GET', 'core'],
      ['DELETE', '/core/alice/items', 'GET', 'core'],
      ['PATCH', '/core/alice/fees', 'GET', 'core'],
      ['POST', '/core/alice/items', 'GET', 'core'],
      ['GET', '/core/alice/renew', 'POST', 'core'],
      ['PUT', '/core/alice/request', 'POST', 'core'],
      ['DELETE', '/core/alice/cancel', 'POST', 'core'],
      ['PUT', '/auth/login', 'POST', 'auth'],
      ['DELETE', '/auth/logout', 'POST', 'auth'],
    ];
    for (const [method, path, verb, api] of cases) {
      const reply = await client.call(method, path, { token: alice.token });
      expectRequestError(reply, { status: 405, error: 'invalid_request', api });
      const allow = headerList(reply.headers.get('allow'));
      expect(allow, `${method} ${path}: Allow`).toContain(verb.toLowerCase());
      expect(allow, `${method} ${path}: Allow`).not.toContain(method.toLowerCase());
    }
  });

  it('not_found 404: "Unknown request URL" (also below the core and auth base addresses: no additional methods)', async () => {
    const { client } = fx();
    const cases: Array<[string, 'core' | 'auth']> = [
      ['/', 'core'],
      ['/nothing/here', 'core'],
      ['/core', 'core'],
      ['/core/alice/loans', 'core'],
      ['/core/alice/items/extra', 'core'],
      ['/auth', 'auth'],
      ['/auth/token', 'auth'],
    ];
    for (const [path, api] of cases) {
      const reply = await client.get(path, { token: alice.token });
      expectRequestError(reply, { status: 404, error: 'not_found', api });
    }
  });

  it('Patron identifier: "it is URI-escaped when placed in a path" (/core/%61lice is alice)', async () => {
    const { client } = fx();
    const plain = expectOk(await client.get('/core/alice', { token: alice.token }));
    const escaped = expectOk(await client.get('/core/%61lice', { token: alice.token }));
    expect(escaped).toEqual(plain);
    // and a renew through the escaped path acts for the same patron
    const renew = expectOk(
      await client.post('/core/%61lice/renew', { doc: [{ item: item('no-such-item') }] }, { token: alice.token }),
    );
    expect((renew.doc as unknown[]).length).toBe(1);
  });
});

describe('transport (configuration, checked once)', () => {
  const root = fileURLToPath(new URL('../../', import.meta.url));

  function checkConfig(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
    const clean = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('PAIA_') && name !== 'PORT'),
    );
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [...sourceEntry('src/cli/main.ts'), 'check-config'],
        { cwd: root, env: { ...clean, ...simulatorIls(6001), ...env }, timeout: 15_000 },
        (error, stdout, stderr) =>
          resolve({ code: error ? Number((error as { code?: unknown }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  }

  it('Transport: "HTTPS only": plain HTTP on a non-loopback address is refused unless a TLS-terminating proxy is declared', async () => {
    const [plain, proxied] = await Promise.all([
      checkConfig({ PAIA_HTTP_HOST: '0.0.0.0' }),
      checkConfig({
        PAIA_HTTP_HOST: '0.0.0.0',
        PAIA_HTTP_TRUSTED_PROXY: 'true',
        PAIA_HTTP_PUBLIC_URL: 'https://lib.example.org/paia',
      }),
    ]);
    expect(plain.code, plain.stdout + plain.stderr).not.toBe(0);
    expect(plain.stderr).toMatch(/tls/i);
    expect(proxied.code, proxied.stdout + proxied.stderr).toBe(0);
  });
});
