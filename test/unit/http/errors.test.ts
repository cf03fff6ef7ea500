import { describe, expect, it } from 'vitest';
import { BackendFailure } from '../../../src/backend/errors.js';
import { bearer, FakeBackend, json, jsonPost, login, makeApp } from './helpers.js';

const INTERNAL = 'connect ECONNREFUSED 10.9.8.7:6001 secret-host';

async function setup() {
  const backend = new FakeBackend();
  const t = makeApp({ backend });
  const { token, patron } = await login(t);
  return { t, backend, token, patron };
}

describe('backend failures', () => {
  const cases: Array<[string, unknown, number, string, RegExp]> = [
    ['unavailable', new BackendFailure('unavailable', 'refused', INTERNAL), 502, 'bad_gateway', /cannot be reached/],
    [
      'protocol error',
      new BackendFailure('protocol', 'unreadable', INTERNAL),
      502,
      'bad_gateway',
      /could not be understood/,
    ],
    [
      'garbage frame',
      new BackendFailure('protocol', 'bad-checksum', INTERNAL),
      502,
      'bad_gateway',
      /could not be understood/,
    ],
    [
      'timeout',
      new BackendFailure('timeout', 'response-timeout', INTERNAL),
      504,
      'gateway_timeout',
      /did not answer in time/,
    ],
    [
      'busy',
      new BackendFailure('busy', 'circuit-open', INTERNAL, { retryAfterSeconds: 7 }),
      503,
      'service_unavailable',
      /try again in 7 seconds/,
    ],
    [
      'cancelled at the deadline',
      new BackendFailure('cancelled', 'deadline', INTERNAL),
      504,
      'gateway_timeout',
      /did not finish this call in time/,
    ],
  ];
  for (const [name, failure, status, error, description] of cases) {
    it(`${name} -> ${status} ${error}, without internal detail`, async () => {
      const { t, backend, token, patron } = await setup();
      backend.failNext = failure;
      const response = await t.app.request(`/core/${patron}/items`, { headers: bearer(token) });
      expect(response.status).toBe(status);
      const text = await response.text();
      expect(text).not.toContain('10.9.8.7');
      expect(text).not.toContain('ECONNREFUSED');
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(body).toMatchObject({ error, code: status });
      expect(body.error_description).toMatch(description);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="PAIA"/);
      if (status === 503) expect(response.headers.get('retry-after')).toBe('7');
      expect(t.logs().some((line) => line.msg === 'backend failure' && line.level === 'warn')).toBe(true);
    });
  }

  it('a timeout is a 504 gateway_timeout that says the library system did not answer, without internal detail', async () => {
    const { t, backend, token, patron } = await setup();
    backend.failNext = new BackendFailure('timeout', 'response-timeout', INTERNAL, { requestSent: true });
    const response = await t.app.request(`/core/${patron}/items`, { headers: bearer(token) });
    expect(response.status).toBe(504);
    const body = await json(response);
    expect(body.error).toBe('gateway_timeout');
    expect(body.error_description).toMatch(/did not answer in time/);
    expect(JSON.stringify(body)).not.toContain(INTERNAL);
  });

  it('a value the ILS cannot take is a 422', async () => {
    const { t, backend, token, patron } = await setup();
    backend.failNext = new BackendFailure('unencodable', 'unencodable-value', INTERNAL, { field: 'AB' });
    const response = await t.app.request(
      `/core/${patron}/request`,
      jsonPost({ doc: [{ item: 'a|b' }] }, bearer(token)),
    );
    expect(response.status).toBe(422);
    expect(await json(response)).toMatchObject({ error: 'invalid_request' });
  });

  it('during login: 502 in an auth body (no code), and the attempt does not count against the user', async () => {
    const backend = new FakeBackend();
    const t = makeApp({ backend, throttle: { freeAttemptsPerUser: 1 } });
    for (let i = 0; i < 3; i++) {
      backend.failNext = new BackendFailure('unavailable', 'refused', INTERNAL);
      const response = await t.app.request(
        '/auth/login',
        jsonPost({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
      );
      expect(response.status).toBe(502);
      expect(await json(response)).not.toHaveProperty('code');
    }
    expect((await login(t)).patron).toBe('1001');
  });

  it('an unknown patron (gone from the ILS) is 404 not_found', async () => {
    const { t, backend, token, patron } = await setup();
    backend.patronGone = true;
    const response = await t.app.request(`/core/${patron}`, { headers: bearer(token) });
    expect(response.status).toBe(404);
    expect(await json(response)).toMatchObject({ error: 'not_found', code: 404 });
  });
});

describe('unexpected errors', () => {
  const failures: Array<[string, unknown, boolean]> = [
    ['an Error', new TypeError(`cannot read properties of undefined at ${INTERNAL}`), false],
    ['a thrown string', INTERNAL, false],
    ['a synchronous throw', new Error(INTERNAL), true],
    ['a synchronous string', INTERNAL, true],
  ];
  for (const [name, failure, synchronously] of failures) {
    it(`${name} -> 500 internal_error with a generic description`, async () => {
      const { t, backend, token, patron } = await setup();
      backend.failNext = failure;
      backend.failSynchronously = synchronously;
      const response = await t.app.request(`/core/${patron}/fees`, {
        headers: bearer(token, { 'X-Request-Id': 'req-500' }),
      });
      expect(response.status).toBe(500);
      const text = await response.text();
      expect(text).not.toContain('10.9.8.7');
      expect(text).not.toMatch(/at .*\.ts|TypeError|stack/);
      expect(JSON.parse(text)).toEqual({
        error: 'internal_error',
        code: 500,
        error_description: 'an unexpected error occurred in the server; it has been logged with request id req-500',
      });
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
      const logged = t.logs().find((line) => line.msg === 'unexpected error');
      expect(logged).toMatchObject({ level: 'error', reqId: 'req-500' });
    });
  }

  it('a body that is not a JSON object from the backend is a 500, not a crash', async () => {
    const backend = new FakeBackend();
    backend.fees = async () => undefined as never;
    const t = makeApp({ backend });
    const { token, patron } = await login(t);
    expect((await t.app.request(`/core/${patron}/fees`, { headers: bearer(token) })).status).toBe(500);
  });

  it('a failing session store is a 500, not a crash', async () => {
    const t = makeApp();
    t.sessions.get = async () => {
      throw 'redis down';
    };
    const response = await t.app.request('/core/1001', { headers: bearer('A'.repeat(43)) });
    expect(response.status).toBe(500);
  });
});
