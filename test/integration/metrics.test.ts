/**
 * /metrics against the real gateway process and a simulator process: the
 * counters move by exactly what was done, the gauges read the live state,
 * access is limited to metrics.allowedClients (behind a trusted proxy: the
 * last X-Forwarded-For hop), it is a plain 404 when switched off, and no
 * secret, patron id or ILS address ever shows up in it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { type Exposition, parseExposition, samplesOf, single, sumOf } from '../unit/metrics/exposition.js';

const PATRON = 'alice';
const PASSWORD = 'alice-pass';
const WRONG_PASSWORD = 'not-alices-pass';
const TERMINAL_PASSWORD = 'paia-secret';

async function scrape(
  base: string,
  headers: Record<string, string> = {},
): Promise<{ text: string; metrics: Exposition; response: Response }> {
  const response = await fetch(`${base}/metrics`, { headers });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}: ${text}`);
  return { text, metrics: parseExposition(text), response };
}

async function login(
  base: string,
  password: string,
  headers: Record<string, string> = {},
  prefix = '',
): Promise<Response> {
  return fetch(`${base}${prefix}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ username: PATRON, password, grant_type: 'password' }),
  });
}

/** The simulator's count of received requests with this code (every 63 that reached the ILS). */
async function received(sim: SimulatorProcess, code: string): Promise<number> {
  return (await sim.counters()).received[code] ?? 0;
}

describe('/metrics', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  let restricted: GatewayProcess;
  let disabled: GatewayProcess;
  let proxied: GatewayProcess;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    const start = (env: Record<string, string>) => startGatewayProcess({ sip2Port: sim.port, dialect: 'generic', env });
    [gateway, restricted, disabled, proxied] = await Promise.all([
      // The item cache on, with a TTL no test run can outlast.
      start({
        PAIA_CACHE_ITEMS_ENABLED: 'true',
        PAIA_CACHE_ITEMS_TTL_MS: '3600000',
        PAIA_SIP2_POOL_MIN: '1',
        PAIA_SIP2_POOL_MAX: '3',
      }),
      start({ PAIA_METRICS_ALLOWED_CLIENTS: '10.0.0.0/8' }),
      start({ PAIA_METRICS_ENABLED: 'false' }),
      start({
        PAIA_HTTP_TRUSTED_PROXY: 'true',
        PAIA_HTTP_BASE_PATH: '/paia',
        PAIA_METRICS_ALLOWED_CLIENTS: '192.0.2.7',
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([gateway?.stop(), restricted?.stop(), disabled?.stop(), proxied?.stop()]);
    await sim?.stop();
  });

  it('counts a login, a patron request and a failed login exactly, and reads sessions and the pool live', async () => {
    const before = (await scrape(gateway.url)).metrics;
    const ilsBefore = await received(sim, '63');

    const ok = await login(gateway.url, PASSWORD);
    expect(ok.status).toBe(200);
    const { access_token: token, patron } = (await ok.json()) as { access_token: string; patron: string };
    const account = await fetch(`${gateway.url}/core/${patron}`, { headers: { authorization: `Bearer ${token}` } });
    expect(account.status).toBe(200);
    await account.text();
    expect((await login(gateway.url, WRONG_PASSWORD)).status).toBe(403);

    const ilsSent = (await received(sim, '63')) - ilsBefore;
    const { metrics: after, response, text } = await scrape(gateway.url);
    expect(response.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const delta = (name: string, labels: Record<string, string> = {}) =>
      sumOf(after, name, labels) - sumOf(before, name, labels);

    // HTTP: exactly these three requests, by route and status.
    expect(delta('paia_http_requests_total', { method: 'GET', route: 'patron', status: '200' })).toBe(1);
    expect(delta('paia_http_requests_total', { method: 'POST', route: 'login', status: '200' })).toBe(1);
    expect(delta('paia_http_requests_total', { method: 'POST', route: 'login', status: '403' })).toBe(1);
    expect(delta('paia_http_requests_total')).toBe(3);
    expect(delta('paia_http_request_duration_seconds_count', { method: 'GET', route: 'patron' })).toBe(1);
    expect(delta('paia_http_request_duration_seconds_count', { method: 'POST', route: 'login' })).toBe(2);
    expect(delta('paia_http_request_duration_seconds_sum', { method: 'GET', route: 'patron' })).toBeGreaterThan(0);

    // SIP2: every 63 that reached the simulator was counted once, as a successful round trip, and timed.
    expect(ilsSent).toBeGreaterThanOrEqual(3); // two logins check the password with a 63, the patron request sends one
    expect(delta('paia_sip2_round_trips_total', { message: 'patron_information', code: '63', outcome: 'ok' })).toBe(
      ilsSent,
    );
    expect(delta('paia_sip2_round_trips_total', { code: '63' })).toBe(ilsSent);
    expect(delta('paia_sip2_round_trip_duration_seconds_count', { message: 'patron_information', code: '63' })).toBe(
      ilsSent,
    );
    // The pool's connection logged in and read the status once each.
    expect(
      single(after, 'paia_sip2_round_trips_total', { message: 'login', code: '93', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      single(after, 'paia_sip2_round_trips_total', { message: 'sc_status', code: '99', outcome: 'ok' }),
    ).toBeGreaterThanOrEqual(1);

    // Auth.
    expect(delta('paia_auth_logins_failed_total')).toBe(1);
    expect(delta('paia_auth_lockouts_total')).toBe(0);
    expect(single(after, 'paia_auth_sessions')).toBe(1);

    // Pool gauges: logged-in connections within min..max (a keepalive may hold one for a moment), nothing waiting, circuit closed.
    const connections = single(after, 'paia_sip2_connections');
    expect(connections).toBeGreaterThanOrEqual(1);
    expect(connections).toBeLessThanOrEqual(3);
    const busy = single(after, 'paia_sip2_connections_busy');
    expect(busy).toBeGreaterThanOrEqual(0);
    expect(busy).toBeLessThanOrEqual(connections);
    expect(single(after, 'paia_sip2_requests_waiting')).toBe(0);
    expect(single(after, 'paia_sip2_circuit_state')).toBe(0);
    expect(single(after, 'paia_sip2_connect_failures_total')).toBe(0);

    // prom-client's default process metrics are there too.
    expect(single(after, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(after.types.get('nodejs_eventloop_lag_seconds')).toBe('gauge');

    // No secret, no patron id, no ILS address anywhere in the scrape.
    for (const secret of [
      PASSWORD,
      WRONG_PASSWORD,
      token,
      TERMINAL_PASSWORD,
      PATRON,
      patron,
      '127.0.0.1',
      `:${sim.port}`,
    ]) {
      expect(text, secret).not.toContain(secret);
    }
  });

  it('keeps every label of its own metrics within fixed sets', async () => {
    // Something in every route family first: an unknown URL, a refused request, a DAIA lookup.
    await (await fetch(`${gateway.url}/core/${PATRON}/nothing?access_token=abc`)).text();
    await (await fetch(`${gateway.url}/core/${PATRON}`)).text();
    await (await fetch(`${gateway.url}/daia?format=json&id=it-0001`)).text();
    const { metrics } = await scrape(gateway.url);
    const allowed: Record<string, RegExp> = {
      method: /^(GET|HEAD|POST|OPTIONS|PUT|DELETE|PATCH|other)$/,
      route: /^(login|logout|change|patron|items|fees|renew|request|cancel|daia|other)$/,
      status: /^[1-5]\d\d$/,
      message:
        /^(login|sc_status|patron_status|patron_information|item_information|renew|renew_all|hold|end_patron_session|fee_paid|other)$/,
      code: /^(93|99|23|63|17|29|65|15|35|37|other)$/,
      outcome: /^(ok|SIP2_DECODE|SIP2_ENCODE|ILS_UNAVAILABLE|ILS_TIMEOUT|POOL_REFUSED|ILS_PROTOCOL|other)$/,
      reason: /^(locked|busy)$/,
      kind: /^(stale-sequence|unsolicited-frame|unreadable-response|resend-requested)$/,
      le: /^(\d+(\.\d+)?|\+Inf)$/,
      operation:
        /^(session-create|session-get|session-touch|session-delete|limit|lease|fact-set|fact-get|invalidate|ping)$/,
      // paia_build_info: one series per process.
      version: /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/,
      node: /^\d+\.\d+\.\d+$/,
    };
    const ours = metrics.samples.filter((sample) => sample.name.startsWith('paia_'));
    expect(ours.length).toBeGreaterThan(20);
    for (const sample of ours) {
      for (const [label, value] of Object.entries(sample.labels)) {
        expect(allowed[label], `label ${label} of ${sample.name}`).toBeDefined();
        expect(value, `${sample.name} ${label}`).toMatch(allowed[label]!);
      }
    }
    expect(sumOf(metrics, 'paia_http_requests_total', { route: 'other', status: '404' })).toBeGreaterThanOrEqual(1);
    expect(sumOf(metrics, 'paia_http_requests_total', { route: 'patron', status: '401' })).toBeGreaterThanOrEqual(1);
  });

  it('counts item cache hits and misses: two identical DAIA and items calls, one 17 per item', async () => {
    const token = ((await (await login(gateway.url, PASSWORD)).json()) as { access_token: string }).access_token;
    const before = (await scrape(gateway.url)).metrics;
    const ilsBefore = await received(sim, '17');
    const daia = `${gateway.url}/daia?format=json&id=it-0030`;
    for (let i = 0; i < 2; i++) expect((await fetch(daia)).status).toBe(200);
    const after = (await scrape(gateway.url)).metrics;
    const delta = (name: string) => sumOf(after, name) - sumOf(before, name);
    expect((await received(sim, '17')) - ilsBefore).toBe(1);
    expect(delta('paia_item_cache_misses_total')).toBe(1);
    expect(delta('paia_item_cache_hits_total')).toBe(1);
    expect(single(after, 'paia_item_cache_entries')).toBeGreaterThanOrEqual(1);
    expect(
      sumOf(after, 'paia_sip2_round_trips_total', { code: '17' }) -
        sumOf(before, 'paia_sip2_round_trips_total', { code: '17' }),
    ).toBe(1);

    // items asks about each loan and hold: the first call's misses are the 17s the ILS got, the second call is all hits.
    const items = async () =>
      expect(
        (await fetch(`${gateway.url}/core/${PATRON}/items`, { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
    const lookups = (m: Exposition) =>
      sumOf(m, 'paia_item_cache_hits_total') + sumOf(m, 'paia_item_cache_misses_total');
    const sent0 = await received(sim, '17');
    await items();
    const first = (await scrape(gateway.url)).metrics;
    const sent1 = await received(sim, '17');
    await items();
    const final = (await scrape(gateway.url)).metrics;
    const perCall = lookups(first) - lookups(after);
    expect(perCall).toBeGreaterThanOrEqual(2);
    expect(sumOf(first, 'paia_item_cache_misses_total') - sumOf(after, 'paia_item_cache_misses_total')).toBe(
      sent1 - sent0,
    );
    expect((await received(sim, '17')) - sent1).toBe(0);
    expect(sumOf(final, 'paia_item_cache_misses_total') - sumOf(first, 'paia_item_cache_misses_total')).toBe(0);
    expect(sumOf(final, 'paia_item_cache_hits_total') - sumOf(first, 'paia_item_cache_hits_total')).toBe(perCall);
    expect(single(final, 'paia_auth_sessions')).toBe(2);
  });

  it('a scrape is not itself counted as an HTTP request', async () => {
    const first = (await scrape(gateway.url)).metrics;
    await scrape(gateway.url);
    const third = (await scrape(gateway.url)).metrics;
    expect(sumOf(third, 'paia_http_requests_total')).toBe(sumOf(first, 'paia_http_requests_total'));
  });

  it('403 for a client outside metrics.allowedClients; the PAIA methods are not affected', async () => {
    const response = await fetch(`${restricted.url}/metrics`);
    expect(response.status).toBe(403);
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await response.json()) as { status: string; error: string };
    expect(body.status).toBe('error');
    expect(body.error).toMatch(/not read the metrics/);
    expect((await login(restricted.url, PASSWORD)).status).toBe(200);
  });

  it('404 like any unknown URL when metrics.enabled is false', async () => {
    const response = await fetch(`${disabled.url}/metrics`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: string };
    expect(body.error).toBe('not_found');
    expect((await login(disabled.url, PASSWORD)).status).toBe(200);
  });

  it('behind a trusted proxy: the last X-Forwarded-For hop decides, /metrics stays at the root, routes below the base path', async () => {
    const https = { 'x-forwarded-proto': 'https' };
    expect(
      (await fetch(`${proxied.url}/metrics`, { headers: { ...https, 'x-forwarded-for': '10.9.9.9, 192.0.2.7' } }))
        .status,
    ).toBe(200);
    // A client cannot put the allowed address first: only the hop the proxy added counts.
    expect(
      (await fetch(`${proxied.url}/metrics`, { headers: { ...https, 'x-forwarded-for': '192.0.2.7, 10.9.9.9' } }))
        .status,
    ).toBe(403);
    // The socket address (127.0.0.1) does not count behind a proxy.
    expect((await fetch(`${proxied.url}/metrics`)).status).toBe(403);
    expect(
      (await fetch(`${proxied.url}/paia/metrics`, { headers: { ...https, 'x-forwarded-for': '192.0.2.7' } })).status,
    ).toBe(404);

    const through = { ...https, 'x-forwarded-for': '192.0.2.7' };
    const before = (await scrape(proxied.url, through)).metrics;
    expect((await login(proxied.url, PASSWORD, through, '/paia')).status).toBe(200);
    const after = (await scrape(proxied.url, through)).metrics;
    expect(
      sumOf(after, 'paia_http_requests_total', { route: 'login', status: '200' }) -
        sumOf(before, 'paia_http_requests_total', { route: 'login', status: '200' }),
    ).toBe(1);
    expect(samplesOf(after, 'paia_http_requests_total').every((sample) => !sample.labels.route?.includes('/'))).toBe(
      true,
    );
  });
});
