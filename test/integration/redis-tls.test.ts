/**
 * The Redis state store over TLS (state.redis.url rediss://, state.redis.tlsCa),
 * end to end with real processes: the simulator, a redis-server that accepts
 * TLS only and asks for a password, and gateway processes. With the right CA
 * the gateway keeps its sessions in that Redis. Misconfigured (a CA that did
 * not sign the Redis certificate, redis:// at the TLS port, rediss:// at a
 * plain port) the gateway still starts, /readyz says what is wrong, logins get
 * 503 with Retry-After, and the password of the URL appears in no output.
 *
 * Skipped, with the reason printed, where redis-server was built without TLS
 * (Debian's redis-server 7.0 has it).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hashToken } from '../../src/state/tokens.js';
import { BASE_ENV, PASSWORDS } from '../conformance/support.js';
import { makeTestCerts } from '../helpers/certs.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type Answer, call as httpCall } from '../helpers/http-call.js';

import { type RedisServer, RedisWithoutTls, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** Every HTTP request gives up after this long: a hang is a finding, not a stuck test. */
const WAIT = { timeout: 15_000, interval: 100 };
/** The Redis password; it must never reach the gateway's output. */
const PASSWORD = 's3cret-pw';
const START_LINE = 'the Redis state store does not answer';

const certs = makeTestCerts();
let tlsRedis: RedisServer | undefined;
let withoutTls: string | null = null;
try {
  tlsRedis = await startRedisServer({
    tls: { cert: certs.server.cert, key: certs.server.key, ca: certs.ca },
    password: PASSWORD,
  });
} catch (error) {
  if (!(error instanceof RedisWithoutTls)) throw error;
  withoutTls = error.message;
  certs.cleanup();
  console.log(`skipped: the Redis state store over TLS: ${withoutTls}`);
}

/** GET without a body, POST with one: what each call here needs. */
const call = (base: string, path: string, options: { token?: string; json?: unknown } = {}): Promise<Answer> =>
  httpCall(base, options.json === undefined ? 'GET' : 'POST', path, options);

const loginReply = (base: string, username: string) =>
  call(base, '/auth/login', { json: { username, password: PASSWORDS[username], grant_type: 'password' } });

/** The gateway's log lines (pino JSON on stdout) whose message starts with `start`. */
function logLines(gateway: GatewayProcess, start: string): Array<Record<string, unknown>> {
  return gateway
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => typeof line.msg === 'string' && line.msg.startsWith(start));
}

describe.skipIf(withoutTls !== null)('the Redis state store over TLS (rediss://)', () => {
  let sim: SimulatorProcess;
  let redis: RedisServer;
  const running = new Set<GatewayProcess>();
  /** Unique per run: other files on a shared Redis never see these keys. */
  const keyPrefix = `paia-test:redis-tls:${randomUUID()}:`;
  /** The URL with the password in it, as a sysadmin would configure it. */
  const withPassword = (url: string) => url.replace('://', `://:${PASSWORD}@`);

  async function gateway(url: string, tlsCa: string | null, settings: Record<string, string> = {}) {
    const started = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        ...BASE_ENV,
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: url,
        ...(tlsCa === null ? {} : { PAIA_STATE_REDIS_TLS_CA: tlsCa }),
        PAIA_STATE_REDIS_KEY_PREFIX: keyPrefix,
        // Every line the gateway can write is searched for the password, not only warnings.
        PAIA_LOG_LEVEL: 'debug',
        ...settings,
      },
    });
    running.add(started);
    return started;
  }

  /** The misconfigured gateway's answers: 503 on /readyz naming the store (returned), 503 with Retry-After for a login. */
  async function expectClearFailure(target: GatewayProcess, url: string): Promise<string> {
    const where = `${url.startsWith('rediss:') ? 'rediss' : 'redis'}://127.0.0.1:${new URL(url).port}`;
    let problem = '';
    // ioredis may still be in its first attempt when the gateway starts listening: wait for its error to be in.
    await vi.waitFor(async () => {
      const ready = await call(target.url, '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.store).toEqual({ kind: 'redis', ok: false });
      const reasons = ready.body.reasons as string[];
      problem = reasons.find((reason) => reason.startsWith('the Redis state store')) ?? '';
      expect(problem).toContain(`the Redis state store at ${where} is not connected (reconnecting: `);
    }, WAIT);
    expect(problem).not.toContain(PASSWORD);

    const login = await loginReply(target.url, 'alice');
    expect(login.status, `login: ${JSON.stringify(login.body)}`).toBe(503);
    expect(login.body.error).toBe('service_unavailable');
    expect(Number(login.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(login.body)).not.toContain(PASSWORD);

    await vi.waitFor(() => expect(logLines(target, START_LINE)).toHaveLength(1), WAIT);
    return problem;
  }

  function expectNoPassword(target: GatewayProcess): void {
    expect(target.stdout()).not.toContain(PASSWORD);
    expect(target.stderr()).not.toContain(PASSWORD);
  }

  beforeAll(async () => {
    redis = tlsRedis!;
    sim = await startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] });
  });

  afterAll(async () => {
    await Promise.all([...running].map((each) => each.stop()));
    await sim?.stop();
    await tlsRedis?.close();
    certs.cleanup();
  });

  it('keeps the sessions of a gateway in a Redis it reaches over TLS with the configured CA and password: the token works, its key is there, and deleting the key ends it', async () => {
    const gw = await gateway(withPassword(redis.url), certs.ca);
    const ready = await call(gw.url, '/readyz');
    expect(ready.status, JSON.stringify(ready.body)).toBe(200);
    expect(ready.body.store).toEqual({ kind: 'redis', ok: true });

    const login = await loginReply(gw.url, 'alice');
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const token = String(login.body.access_token);
    const patron = String(login.body.patron);
    const patronCall = () => call(gw.url, `/core/${encodeURIComponent(patron)}`, { token });
    expect((await patronCall()).status).toBe(200);

    // A client of our own, over TLS too: the session is in this Redis, under the configured prefix.
    const raw = new Redis(withPassword(redis.url), {
      tls: { ca: readFileSync(certs.ca, 'utf8') },
      lazyConnect: true,
      maxRetriesPerRequest: 1,
    });
    raw.on('error', () => {});
    try {
      await raw.connect();
      const sessionKey = `${keyPrefix}session:${hashToken(token)}`;
      const keys = await raw.keys(`${keyPrefix}*`);
      expect(keys).toContain(sessionKey);
      // The patron's index is there too, named by a hash of the patron, never the patron itself.
      expect(keys.filter((key) => key.startsWith(`${keyPrefix}patron:`))).toHaveLength(1);
      expect(keys.filter((key) => key.includes(patron))).toEqual([]);
      // The gateway asks Redis on every call: without the key the token is unknown.
      expect(await raw.del(sessionKey)).toBe(1);
      expect((await patronCall()).status).toBe(401);
    } finally {
      raw.disconnect();
    }
    expect(logLines(gw, START_LINE)).toEqual([]);
    expectNoPassword(gw);
  });

  it('starts with a CA that did not sign the Redis certificate, says the certificate is not trusted and names state.redis.tlsCa in /readyz and the start log, answers a login with 503, and prints the password nowhere', async () => {
    const gw = await gateway(withPassword(redis.url), certs.otherCa);
    const problem = await expectClearFailure(gw, redis.url);
    expect(problem).toContain('the TLS certificate of Redis is not trusted');
    expect(problem).toContain('state.redis.tlsCa must be the PEM file of the CA that signed it');
    const [start] = logLines(gw, START_LINE);
    expect(start?.level).toBe('error');
    expect(String(start?.problem)).toContain('the TLS certificate of Redis is not trusted');
    console.log(`/readyz with the wrong CA: ${problem}`);
    expectNoPassword(gw);
  });

  it('starts with redis:// pointed at the TLS port, says the reset may mean that Redis wants rediss://, answers a login with 503, and prints the password nowhere', async () => {
    const plainUrl = redis.url.replace('rediss://', 'redis://');
    const gw = await gateway(withPassword(plainUrl), certs.ca);
    const problem = await expectClearFailure(gw, plainUrl);
    expect(problem).toMatch(/ECONNRESET: Redis reset the connection; .*the URL must start with rediss:\/\//);
    console.log(`/readyz with redis:// at the TLS port: ${problem}`);
    expectNoPassword(gw);
  });

  it('starts with rediss:// pointed at a plain Redis, says that a Redis without TLS never answers a handshake, answers a login with 503, and prints the password nowhere', async () => {
    const plain = await startRedisServer({ password: PASSWORD });
    try {
      const tlsUrl = plain.url.replace('redis://', 'rediss://');
      // A plain Redis waits for more of what it takes for a command: only the connect timeout ends the attempt.
      const gw = await gateway(withPassword(tlsUrl), certs.ca, { PAIA_STATE_REDIS_CONNECT_TIMEOUT_MS: '1000' });
      const problem = await expectClearFailure(gw, tlsUrl);
      expect(problem).toContain('connect ETIMEDOUT: no TLS connection within state.redis.connectTimeoutMs');
      expect(problem).toContain('the URL must start with redis://');
      console.log(`/readyz with rediss:// at a plain port: ${problem}`);
      expectNoPassword(gw);
    } finally {
      await plain.close();
    }
  });
});
