/**
 * Issue 15, "operable", against the real gateway process and a simulator
 * process: the HTTP server's own limits seen from raw sockets (node:net),
 * JSON bodies for requests Node refuses below the app, --version and the
 * version in /healthz and /metrics, log.format pretty, PAIA_CONFIG and a
 * terminal password from a _FILE variable, and a maintenance window that
 * starts now.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trackChild } from '../helpers/children.js';
import { sourceEntry } from '../helpers/entry-points.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { openSocket, parseRaw, raw } from '../helpers/raw-http.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const LOGIN = JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' });

async function metric(url: string, name: string): Promise<string[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return text.split('\n').filter((line) => line.startsWith(name));
}

function hhmm(date: Date): string {
  return date.toISOString().slice(11, 16);
}

describe('the HTTP server limits and client errors, from raw sockets', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        PAIA_HTTP_HEADERS_TIMEOUT_MS: '1000',
        PAIA_HTTP_RECEIVE_TIMEOUT_MS: '2000',
        PAIA_HTTP_KEEP_ALIVE_TIMEOUT_MS: '1000',
        PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '3',
        PAIA_HTTP_MAX_HEADER_BYTES: '2048',
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
  });

  it('answers a request head sent too slowly with 408 in JSON and closes it after http.headersTimeoutMs, not 60 s', async () => {
    const answer = await raw(gateway.url, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n');
      // One more header line every 300 ms, never the blank line: a slow head.
      const drip = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 300);
      socket.once('close', () => clearInterval(drip));
    });
    const { status, body, headers } = parseRaw(answer.text);
    expect(status).toBe(408);
    expect(headers).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(body).toEqual({
      error: 'invalid_request',
      code: 408,
      error_description: 'the request did not arrive in time',
    });
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(answer.closedAfterMs).toBeLessThan(5000);
  });

  it('answers a login whose body comes too slowly with 408 in JSON after http.receiveTimeoutMs', async () => {
    const answer = await raw(gateway.url, (socket) => {
      socket.write(
        `POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${LOGIN.length}\r\n\r\n`,
      );
      let sent = 0;
      const drip = setInterval(() => {
        if (socket.writable && sent < LOGIN.length - 1) socket.write(LOGIN[sent++]!);
      }, 300);
      socket.once('close', () => clearInterval(drip));
    });
    expect(parseRaw(answer.text).status).toBe(408);
    expect(parseRaw(answer.text).body.error).toBe('invalid_request');
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(1900);
    expect(answer.closedAfterMs).toBeLessThan(6000);
  });

  it('answers a malformed request line with 400 in JSON', async () => {
    const answer = await raw(gateway.url, (socket) => socket.write('GARBAGE\r\n\r\n'));
    expect(parseRaw(answer.text)).toMatchObject({
      status: 400,
      body: { error: 'invalid_request', code: 400, error_description: 'the request is not valid HTTP/1.1' },
    });
  });

  it('answers a Host header that is no host, or a path the adapter refuses, with 400 in JSON', async () => {
    for (const head of [
      'GET /healthz HTTP/1.1\r\nHost: not a host\r\nConnection: close\r\n\r\n',
      'GET /core\\alice HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n',
    ]) {
      const answer = await raw(gateway.url, (socket) => socket.write(head));
      expect(parseRaw(answer.text), head).toMatchObject({
        status: 400,
        body: {
          error: 'invalid_request',
          code: 400,
          error_description: 'the request line or Host header is not valid',
        },
      });
    }
  });

  it('answers an HTTP/1.1 request without Host with 400 in JSON (the head alone to HEAD) and closes the connection', async () => {
    for (const line of [
      'GET /healthz HTTP/1.1',
      'GET http://127.0.0.1/healthz HTTP/1.1',
      'POST /auth/login HTTP/1.1',
    ]) {
      // A second request right behind it: the connection must close after the 400 instead of serving it.
      const answer = await raw(gateway.url, (socket) =>
        socket.write(`${line}\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
      );
      const { status, headers, body } = parseRaw(answer.text);
      expect(status, line).toBe(400);
      expect(headers).toMatch(/content-type: application\/json; charset=utf-8/i);
      expect(headers).toMatch(/connection: close/i);
      expect(body).toEqual({
        error: 'invalid_request',
        code: 400,
        error_description: 'the request has no Host header, which HTTP/1.1 requires',
      });
      expect(answer.text.match(/HTTP\/1\.1 \d{3} /g)).toHaveLength(1);
    }
    const head = await raw(gateway.url, (socket) => socket.write('HEAD /healthz HTTP/1.1\r\n\r\n'));
    expect(head.text).toMatch(/^HTTP\/1\.1 400 /);
    expect(head.text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('answers an Expect header other than 100-continue with 417 in JSON and closes the connection', async () => {
    // The body is never sent, as its client waits for 100 Continue: the connection cannot carry another request.
    const answer = await raw(gateway.url, (socket) =>
      socket.write(
        'POST /auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 999-nope\r\nContent-Type: application/json\r\nContent-Length: 80\r\n\r\n',
      ),
    );
    const { status, headers, body } = parseRaw(answer.text);
    expect(status).toBe(417);
    expect(headers).toMatch(/content-type: application\/json; charset=utf-8/i);
    expect(headers).toMatch(/connection: close/i);
    expect(body).toEqual({
      error: 'invalid_request',
      code: 417,
      error_description: 'the Expect header asks for something other than 100-continue, which this server cannot meet',
    });
    // Closed at once, not by the keep-alive timeout (1 s here) nor the receive timeout (2 s).
    expect(answer.closedAfterMs).toBeLessThan(900);
  });

  it('answers a request head over http.maxHeaderBytes with 431 in JSON', async () => {
    const answer = await raw(gateway.url, (socket) =>
      socket.write(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`),
    );
    expect(parseRaw(answer.text)).toMatchObject({
      status: 431,
      body: { error: 'invalid_request', code: 431, error_description: 'the request head is too large' },
    });
  });

  it('answers a HEAD request over http.maxHeaderBytes with the 431 head alone (a body would be read as the next response)', async () => {
    const answer = await raw(gateway.url, (socket) =>
      socket.write(`HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(4096)}\r\n\r\n`),
    );
    expect(answer.text).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer.text.endsWith('\r\n\r\n')).toBe(true);
  });

  it('closes an idle keep-alive connection after http.keepAliveTimeoutMs', async () => {
    const answer = await raw(gateway.url, (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'));
    expect(answer.text).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(900);
    expect(answer.closedAfterMs).toBeLessThan(5000);
  });

  it('answers a connection beyond http.maxConnectionsPerAddress with 503 in JSON, and takes one again once one closes', async () => {
    const held = await Promise.all([1, 2, 3].map(() => openSocket(gateway.url)));
    try {
      const refused = await raw(gateway.url, (socket) =>
        socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
      );
      const { status, body, headers } = parseRaw(refused.text);
      expect(status).toBe(503);
      expect(headers).toMatch(/retry-after: 1/i);
      expect(body).toMatchObject({ error: 'service_unavailable', code: 503 });
      held.pop()!.destroy();
      await new Promise((resolve) => setTimeout(resolve, 200));
      const again = await fetch(`${gateway.url}/healthz`, { headers: { connection: 'close' } });
      expect(again.status).toBe(200);
    } finally {
      for (const socket of held) socket.destroy();
    }
  });
});

describe('version, log format, PAIA_CONFIG and _FILE secrets', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'paia-operable-'));
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    const config = join(dir, 'gateway.yaml');
    writeFileSync(
      config,
      [
        'sip2:',
        '  host: 127.0.0.1',
        `  port: ${sim.port}`,
        '  dialect: generic',
        '  institution: DEMO',
        '  terminal:',
        '    user: paia',
        '    location: MAIN',
        'paia:',
        "  itemUri: 'http://127.0.0.1:8080/item/{barcode}'",
        "  editionUri: 'http://127.0.0.1:8080/title/{title}'",
        'log:',
        '  level: info',
        '  format: pretty',
        '',
      ].join('\n'),
    );
    const secret = join(dir, 'terminal-password');
    writeFileSync(secret, 'paia-secret\n');
    // Everything about the ILS from the file and the secret file: no sip2Port, so the helper adds no PAIA_SIP2_* of its own.
    gateway = await startGatewayProcess({
      sip2Port: null,
      dialect: 'generic',
      env: { PAIA_CONFIG: config, PAIA_SIP2_TERMINAL_PASSWORD_FILE: secret, PAIA_LOG_LEVEL: 'info' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('paia-sip2 --version and -V print the version of package.json and exit 0', async () => {
    for (const flag of ['--version', '-V']) {
      const child = trackChild(
        spawn(process.execPath, [...sourceEntry('src/cli/main.ts'), flag], {
          cwd: REPO_ROOT,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
      );
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      expect(code, flag).toBe(0);
      expect(out, flag).toBe(`${VERSION}\n`);
    }
  });

  it('reports its version in /healthz and in paia_build_info', async () => {
    expect(await (await fetch(`${gateway.url}/healthz`)).json()).toEqual({ status: 'alive', version: VERSION });
    expect(await metric(gateway.url, 'paia_build_info{')).toEqual([
      `paia_build_info{version="${VERSION}",node="${process.versions.node}"} 1`,
    ]);
  });

  it('loads the file PAIA_CONFIG names and logs in to the ILS with the terminal password from PAIA_SIP2_TERMINAL_PASSWORD_FILE', async () => {
    const deadline = Date.now() + 10_000;
    let ready = await fetch(`${gateway.url}/readyz`);
    while (ready.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      ready = await fetch(`${gateway.url}/readyz`);
    }
    expect(ready.status).toBe(200);
    const login = await fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: LOGIN,
    });
    expect(login.status).toBe(200);
  });

  it('writes pretty log lines (log.format pretty from the PAIA_CONFIG file) with ISO times, level names and no secrets', () => {
    const lines = gateway.stdout().split('\n');
    const started = lines.find((line) => line.includes('paia-sip2 started'));
    expect(started).toMatch(
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z INFO {2}paia-sip2 started url=http:\/\/127\.0\.0\.1:\d+ /,
    );
    expect(lines.filter((line) => line.startsWith('{'))).toEqual([]);
    expect(gateway.stdout()).not.toContain('paia-secret');
    expect(gateway.stdout()).not.toContain('alice-pass');
  });
});

describe('a scheduled maintenance window that starts now', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  let until: string;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    // From the current minute to two minutes on, every day, in UTC: at least a minute of it is left.
    const now = new Date();
    until = hhmm(new Date(now.getTime() + 2 * 60_000));
    const windows = [
      { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], from: hhmm(now), to: until, timeZone: 'UTC' },
    ];
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_SIP2_MAINTENANCE: JSON.stringify(windows), PAIA_SIP2_POOL_MIN: '2' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
  });

  it('answers a login 503 service_unavailable with Retry-After at the window end and says until when', async () => {
    const login = await fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: LOGIN,
    });
    expect(login.status).toBe(503);
    const retryAfter = Number(login.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(120);
    expect(await login.json()).toEqual({
      error: 'service_unavailable',
      error_description: `the library system is in scheduled maintenance until ${until} (UTC); please try again then`,
    });
  });

  it('answers DAIA 503 the same way', async () => {
    const daia = await fetch(
      `${gateway.url}/daia?format=json&id=${encodeURIComponent('http://127.0.0.1:8080/item/it-0001')}`,
    );
    expect(daia.status).toBe(503);
    expect(Number(daia.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(((await daia.json()) as { error_description: string }).error_description).toMatch(/scheduled maintenance/);
  });

  it('/readyz says maintenance, the metric is 1, and the ILS saw no connection', async () => {
    const ready = await fetch(`${gateway.url}/readyz`);
    expect(ready.status).toBe(503);
    const body = (await ready.json()) as { reasons: string[]; maintenance: { until: string } };
    expect(body.reasons).toEqual([`scheduled maintenance of the ILS until ${until} (UTC)`]);
    expect(body.maintenance.until).toMatch(new RegExp(`T${until}:00\\.000Z$`));
    expect(await metric(gateway.url, 'paia_sip2_maintenance ')).toEqual(['paia_sip2_maintenance 1']);
    expect(await metric(gateway.url, 'paia_sip2_connect_failures_total ')).toEqual([
      'paia_sip2_connect_failures_total 0',
    ]);
    const state = await sim.state();
    expect(state.connections).toBe(0);
    expect(state.counters.received['93'] ?? 0).toBe(0);
  });
});
