/**
 * The dashboard and the alert rules of deploy/ (docs/operations.md, "Dashboard
 * and alerts"): promtool (Debian's prometheus package) checks the rules and runs
 * their unit tests (deploy/prometheus-alerts.test.yaml), and every metric the
 * dashboard and the rules read is served by a real gateway's /metrics after
 * some traffic. The promtool part is skipped, with the reason printed, only where
 * promtool is not installed (.ci/run installs it).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import {
  dashboardExpressions,
  metricNames,
  PROMETHEUS_SERIES,
  RULE_TESTS_FILE,
  RULES_FILE,
  readAlertRules,
  readDashboard,
  ruleExpressions,
} from '../helpers/monitoring.js';
import { type Exposition, parseExposition } from '../unit/metrics/exposition.js';

const run = promisify(execFile);
const PROMTOOL = (process.env.PATH ?? '')
  .split(delimiter)
  .map((dir) => join(dir, 'promtool'))
  .find((path) => existsSync(path));
if (PROMTOOL === undefined)
  console.warn('monitoring: promtool checks skipped, promtool is missing (apt-get install prometheus)');

describe.skipIf(PROMTOOL === undefined)('the alert rules under promtool', () => {
  it('pass promtool check rules', async () => {
    const { stdout } = await run(PROMTOOL!, ['check', 'rules', RULES_FILE], { timeout: 30_000 });
    expect(stdout).toMatch(/SUCCESS: \d+ rules found/);
  });

  it('pass their unit tests (promtool test rules): each alert fires where it should and nowhere else', async () => {
    const result = await run(PROMTOOL!, ['test', 'rules', RULE_TESTS_FILE], { timeout: 30_000 }).catch(
      (error: { stdout: string; stderr: string }) => error,
    );
    expect(`${result.stdout}${result.stderr}`).toMatch(/SUCCESS/);
    // Every alert has a test that expects it to fire.
    const tested = new Set(
      [...readFileSync(RULE_TESTS_FILE, 'utf8').matchAll(/alertname: (\w+)/g)].map((match) => match[1]),
    );
    expect(readAlertRules().filter((rule) => !tested.has(rule.alert))).toEqual([]);
  });
});

/**
 * Whether a metric name is served: a sample of that name; a counter or gauge declared (# TYPE) without a sample yet
 * (paia_state_operation_errors_total shows a series from its first failure on, which a memory store never has); or
 * one of a histogram's series, which only exist with their suffix.
 */
function served(exposition: Exposition, name: string): boolean {
  if (exposition.samples.some((sample) => sample.name === name)) return true;
  const type = exposition.types.get(name);
  if (type === 'counter' || type === 'gauge') return true;
  const histogram = /^(.+)_(bucket|sum|count)$/.exec(name);
  return histogram !== null && exposition.types.get(histogram[1]!) === 'histogram';
}

describe('the metrics the dashboard and the rules read', () => {
  let gateway: GatewayProcess;
  let exposition: Exposition;

  beforeAll(async () => {
    // The demo simulator embedded: one process.
    gateway = await startGatewayProcess({ sip2Port: null, dialect: 'generic' });
    const base = gateway.url;
    const login = (password: string) =>
      fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'alice', password, grant_type: 'password' }),
      });
    // Traffic, so that the labelled series (requests by status, SIP2 round trips by message, ...) appear.
    expect((await login('not-alices-pass')).status).toBe(403);
    const granted = await login('alice-pass');
    expect(granted.status).toBe(200);
    const { access_token: token, patron } = (await granted.json()) as { access_token: string; patron: string };
    const headers = { authorization: `Bearer ${token}` };
    for (const path of [`/core/${patron}`, `/core/${patron}/items`, `/core/${patron}/fees`])
      expect((await fetch(`${base}${path}`, { headers })).status).toBe(200);
    expect((await fetch(`${base}/daia?format=json&id=it-0001`)).status).toBe(200);
    expect((await fetch(`${base}/no-such-method`)).status).toBe(404);
    const scraped = await fetch(`${base}/metrics`);
    expect(scraped.status).toBe(200);
    exposition = parseExposition(await scraped.text());
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('are all served by a real gateway (histograms by their _bucket, _sum and _count series)', () => {
    const expressions = [...dashboardExpressions(readDashboard()), ...ruleExpressions(readAlertRules())];
    const missing = expressions.flatMap(({ where, expr }) =>
      metricNames(expr)
        .filter((name) => !PROMETHEUS_SERIES.has(name) && !served(exposition, name))
        .map((name) => `${where}: ${name}`),
    );
    expect(missing).toEqual([]);
    // The extraction found the names (an empty list would pass the check above).
    const named = new Set(expressions.flatMap(({ expr }) => metricNames(expr)));
    expect(named).toContain('paia_http_request_duration_seconds_bucket');
    expect(named.size).toBeGreaterThan(20);
  });
});
