/**
 * TLS against real gateway processes, with throwaway certificates made by the
 * openssl CLI at test time:
 *
 * - HTTPS with http.tls (PAIA_HTTP_TLS_CERT / _KEY), a login over it;
 * - SIGHUP reloads the certificate for new connections while an open
 *   keep-alive connection goes on working; a broken file keeps the old one;
 * - http.trustedProxy: requests the proxy did not get over HTTPS are refused,
 *   the health endpoints are not;
 * - sip2.tls: the gateway reaches the ILS through a TLS-terminating proxy (as
 *   stunnel would be) and refuses an ILS certificate its CA did not sign.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { join } from 'node:path';
import tls, { type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

const LOGIN_BODY = JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' });

interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Record<string, unknown>;
  /** Whether the request went over a connection the agent had open already. */
  reused: boolean;
  /** The certificate the server presented on that connection. */
  fingerprint256: string;
}

function httpsCall(url: string, options: { agent: Agent; method?: string; body?: string }): Promise<HttpsAnswer> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(
      url,
      {
        agent: options.agent,
        method: options.method ?? 'GET',
        headers: options.body
          ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(options.body) }
          : {},
      },
      (response) => {
        // Read now: at 'end' a keep-alive socket has gone back to the agent.
        const fingerprint256 = (response.socket as TLSSocket).getPeerCertificate().fingerprint256;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Record<string, unknown> = {};
          try {
            body = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // not JSON
          }
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body,
            reused: request.reusedSocket,
            fingerprint256,
          });
        });
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

/** The certificate a fresh TLS connection to the gateway gets (checked against the test CA). */
function freshFingerprint(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect(
      { host: hostname, port: Number(port), ca: readFileSync(ca), rejectUnauthorized: true },
      () => {
        const fingerprint = socket.getPeerCertificate().fingerprint256;
        socket.end();
        resolve(fingerprint);
      },
    );
    socket.on('error', reject);
  });
}

async function waitForOutput(read: () => string, pattern: RegExp, timeoutMs = 5000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = read()
      .split('\n')
      .find((line) => pattern.test(line));
    if (match) return match;
    if (Date.now() > deadline) throw new Error(`no output matching ${pattern} within ${timeoutMs} ms; got:\n${read()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

let certs: TestCerts;
let sim: SimulatorProcess;

beforeAll(async () => {
  certs = makeTestCerts();
  sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
});

afterAll(async () => {
  await sim?.stop();
  certs?.cleanup();
});

describe('HTTPS (http.tls) and certificate reload on SIGHUP', () => {
  let gateway: GatewayProcess;
  let cert: string;
  let key: string;
  let agent: Agent;

  beforeAll(async () => {
    // The gateway reads copies, which the tests overwrite as a certificate renewal would.
    cert = join(certs.dir, 'live.crt');
    key = join(certs.dir, 'live.key');
    copyFileSync(certs.server.cert, cert);
    copyFileSync(certs.server.key, key);
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_HTTP_TLS_CERT: cert, PAIA_HTTP_TLS_KEY: key, PAIA_LOG_LEVEL: 'info' },
    });
    agent = new Agent({ ca: readFileSync(certs.ca), rejectUnauthorized: true, keepAlive: true, maxSockets: 1 });
  });

  afterAll(async () => {
    agent?.destroy();
    await gateway?.stop();
  });

  it('serves HTTPS with the configured certificate; a login works over it', async () => {
    expect(gateway.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const login = await httpsCall(`${gateway.url}/auth/login`, { agent, method: 'POST', body: LOGIN_BODY });
    expect(login.status).toBe(200);
    expect(login.body.token_type).toBe('Bearer');
    expect(login.fingerprint256).toBe(certs.server.fingerprint256);
    expect(await freshFingerprint(gateway.url, certs.ca)).toBe(certs.server.fingerprint256);
  });

  it('SIGHUP: new connections get the new certificate, an open keep-alive connection goes on working', async () => {
    const before = await httpsCall(`${gateway.url}/healthz`, { agent });
    expect(before.status).toBe(200);
    expect(before.fingerprint256).toBe(certs.server.fingerprint256);

    copyFileSync(certs.second.cert, cert);
    copyFileSync(certs.second.key, key);
    process.kill(gateway.pid, 'SIGHUP');
    const line = await waitForOutput(gateway.stdout, /TLS certificate reloaded/);
    expect(line).toContain(certs.second.fingerprint256);

    expect(await freshFingerprint(gateway.url, certs.ca)).toBe(certs.second.fingerprint256);
    // The connection opened before the reload: still open, still the old certificate, still answering.
    const after = await httpsCall(`${gateway.url}/auth/login`, { agent, method: 'POST', body: LOGIN_BODY });
    expect(after.reused).toBe(true);
    expect(after.fingerprint256).toBe(certs.server.fingerprint256);
    expect(after.status).toBe(200);
    // The gateway is still running.
    expect(gateway.stdout()).not.toMatch(/shutdown/);
  });

  it('SIGHUP with a broken certificate file: the old certificate stays in use and the log says why', async () => {
    writeFileSync(cert, '-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----\n');
    process.kill(gateway.pid, 'SIGHUP');
    const line = await waitForOutput(gateway.stdout, /TLS certificate NOT reloaded/);
    const logged = JSON.parse(line) as { reason: string; level: string };
    expect(logged.level).toBe('error');
    expect(logged.reason).toMatch(/checking the certificate and key: \S/);
    // No key material in the log.
    expect(gateway.stdout()).not.toMatch(/PRIVATE KEY/);
    expect(await freshFingerprint(gateway.url, certs.ca)).toBe(certs.second.fingerprint256);
    const login = await httpsCall(`${gateway.url}/auth/login`, { agent, method: 'POST', body: LOGIN_BODY });
    expect(login.status).toBe(200);

    // A key that does not belong to the certificate: refused too.
    copyFileSync(certs.server.cert, cert);
    copyFileSync(certs.second.key, key);
    const logLength = gateway.stdout().length;
    process.kill(gateway.pid, 'SIGHUP');
    const mismatch = await waitForOutput(() => gateway.stdout().slice(logLength), /TLS certificate NOT reloaded/);
    expect(mismatch).toMatch(/mismatch/i);
    expect(await freshFingerprint(gateway.url, certs.ca)).toBe(certs.second.fingerprint256);
  });

  it('SIGHUP on plain HTTP: logged, nothing else happens', async () => {
    const plain = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_LOG_LEVEL: 'info' },
    });
    try {
      process.kill(plain.pid, 'SIGHUP');
      await waitForOutput(plain.stdout, /no http\.tls configured/);
      expect((await fetch(`${plain.url}/healthz`)).status).toBe(200);
    } finally {
      await plain.stop();
    }
  });
});

describe('behind a trusted proxy (http.trustedProxy)', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_HTTP_TRUSTED_PROXY: 'true', PAIA_SIP2_POOL_MIN: '1' },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  const login = (proto?: string) =>
    fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-forwarded-for': '192.0.2.7',
        ...(proto ? { 'x-forwarded-proto': proto } : {}),
      },
      body: LOGIN_BODY,
    });

  it('a request the proxy got over HTTPS works', async () => {
    const response = await login('https');
    expect(response.status).toBe(200);
    expect(((await response.json()) as { token_type: string }).token_type).toBe('Bearer');
  });

  it.each([
    ['without X-Forwarded-Proto', undefined],
    ['with X-Forwarded-Proto: http', 'http'],
  ])('%s: 400 invalid_request telling the client to use HTTPS', async (_name, proto) => {
    const response = await login(proto);
    expect(response.status).toBe(400);
    const body = (await response.json()) as { error: string; error_description: string };
    expect(body.error).toBe('invalid_request');
    expect(body.error_description).toMatch(/HTTPS/);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*error="invalid_request"/);
  });

  it('core methods are refused the same way, before the token is looked at', async () => {
    const response = await fetch(`${gateway.url}/core/alice`, { headers: { 'x-forwarded-proto': 'http' } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toBe('invalid_request');
  });

  it('/healthz and /readyz stay reachable without X-Forwarded-Proto', async () => {
    expect((await fetch(`${gateway.url}/healthz`)).status).toBe(200);
    const deadline = Date.now() + 10_000;
    let status = (await fetch(`${gateway.url}/readyz`)).status;
    while (Date.now() < deadline && status !== 200) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await fetch(`${gateway.url}/readyz`)).status;
    }
    expect(status).toBe(200);
  });
});

describe('TLS towards the ILS (sip2.tls)', () => {
  let proxy: TlsProxy | undefined;
  let proxyPort: number;

  beforeAll(async () => {
    proxy = await startTlsProxy(certs.server, sim.port);
    proxyPort = proxy.port;
  });

  afterAll(async () => {
    await proxy?.close();
  });

  const login = (gateway: GatewayProcess) =>
    fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: LOGIN_BODY,
    });

  it('with the CA that signed the ILS certificate: a PAIA login works over TLS', async () => {
    const gateway = await startGatewayProcess({
      sip2Port: proxyPort,
      dialect: 'generic',
      env: { PAIA_SIP2_TLS_CA: certs.ca },
    });
    try {
      const response = await login(gateway);
      expect(response.status).toBe(200);
      expect(((await response.json()) as { token_type: string }).token_type).toBe('Bearer');
    } finally {
      await gateway.stop();
    }
  });

  it('with a CA that did not sign it: 502 bad_gateway, promptly, and the log says the certificate was not trusted', async () => {
    const gateway = await startGatewayProcess({
      sip2Port: proxyPort,
      dialect: 'generic',
      env: { PAIA_SIP2_TLS_CA: certs.otherCa },
    });
    try {
      const started = Date.now();
      const response = await login(gateway);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: string }).error).toBe('bad_gateway');
      const log = gateway.stdout() + gateway.stderr();
      expect(log).toMatch(/certificate/i);
      expect(log).toMatch(/not trusted/i);
      expect(log).not.toContain('alice-pass');
      expect(log).not.toContain('paia-secret');
    } finally {
      await gateway.stop();
    }
  });
});
