/**
 * What the Redis state store holds, and when the gateway trusts it (issue
 * 24), with real processes: the simulator, a redis-server and gateway
 * processes on it.
 *
 * - Nothing in Redis names a patron in clear: after every demo patron logged
 *   in (rightly and wrongly, by password and by client credentials) and
 *   used the account, no key and no value holds a barcode or username.
 * - A Redis that may evict keys is refused: the gateway says why at start and
 *   in /readyz, answers 503, and serves once the policy is `noeviction`.
 * - Logins in flight when a gateway is killed stop counting at the login
 *   deadline: a restarted gateway logs the patron in within it.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type Answer, call } from '../helpers/http-call.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** Every patron of the demo library (sip2-simulator/data/demo.json); each one's password is `<barcode>-pass`. */
const DEMO_PATRONS = ['alice', 'bob', 'carol', 'dave', 'emile', 'frank', 'gina', 'hanna', 'ida', 'jonas'];
const CLIENT_SECRET = 'store-test-client-secret-93c1d0';
const WAIT = { timeout: 15_000, interval: 100 };

describe('the Redis state store', () => {
  let sim: SimulatorProcess;
  let redis: RedisServer;
  /** A plain client, to read what the gateways wrote. */
  let raw: Redis;
  const running: GatewayProcess[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    [sim, redis] = await Promise.all([
      startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] }),
      startRedisServer(),
    ]);
    raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
    raw.on('error', () => {});
    await raw.connect();
  });

  afterAll(async () => {
    await Promise.all(running.map((each) => each.stop()));
    raw?.disconnect();
    await Promise.all([sim?.stop(), redis?.close()]);
  });

  /** A gateway on the test Redis under `prefix` (each test its own). */
  async function gateway(prefix: string, env: Record<string, string> = {}): Promise<GatewayProcess> {
    const started = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: redis.url,
        PAIA_STATE_REDIS_KEY_PREFIX: prefix,
        PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
        PAIA_LOG_LEVEL: 'info',
        ...env,
      },
    });
    running.push(started);
    return started;
  }

  const newPrefix = () => `store-safety-${process.pid}-${++prefixes}:`;
  const login = (g: GatewayProcess, username: string, password: string): Promise<Answer> =>
    call(g.url, 'POST', '/auth/login', { json: { username, password, grant_type: 'password' } });

  /** Every key under `prefix` with everything it holds, as text. */
  async function everything(prefix: string): Promise<Array<{ key: string; texts: string[] }>> {
    const found: Array<{ key: string; texts: string[] }> = [];
    for (const key of await raw.keys(`${prefix}*`)) {
      const type = await raw.type(key);
      const texts =
        type === 'string'
          ? [(await raw.get(key)) ?? '']
          : type === 'zset'
            ? await raw.zrange(key, '0', '-1', 'WITHSCORES')
            : type === 'hash'
              ? Object.entries(await raw.hgetall(key)).flat()
              : type === 'set'
                ? await raw.smembers(key)
                : type === 'list'
                  ? await raw.lrange(key, 0, -1)
                  : [`(a ${type})`];
      found.push({ key, texts });
    }
    return found;
  }

  it('holds no barcode or username in clear, in any key or value, after every demo patron logged in and used the account', async () => {
    const prefix = newPrefix();
    const g = await gateway(prefix, {
      PAIA_AUTH_CLIENTS: JSON.stringify([
        { id: 'vufind', secretEnv: 'STORE_TEST_SECRET', allowedAddresses: ['127.0.0.1'] },
      ]),
      STORE_TEST_SECRET: CLIENT_SECRET,
      PAIA_CACHE_ITEMS_ENABLED: 'true',
    });
    for (const patron of DEMO_PATRONS) {
      // A wrong password first: failure counters, the username's patron, a lockout on the way.
      expect((await login(g, patron, 'not-the-password')).status, patron).toBe(403);
      const right = await login(g, patron, `${patron}-pass`);
      expect(right.status, `${patron}: ${JSON.stringify(right.body)}`).toBe(200);
      const token = String(right.body.access_token);
      for (const path of ['', '/items', '/fees']) {
        expect((await call(g.url, 'GET', `/core/${patron}${path}`, { token })).status, `${patron}${path}`).toBe(200);
      }
    }
    const basic = `Basic ${Buffer.from(`vufind:${CLIENT_SECRET}`).toString('base64')}`;
    const sso = await fetch(`${g.url}/auth/login`, {
      method: 'POST',
      headers: { Authorization: basic, 'Content-Type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials', patron: 'alice' }),
    });
    expect(sso.status).toBe(200);
    const ssoToken = ((await sso.json()) as { access_token: string }).access_token;
    const renew = await call(g.url, 'POST', '/core/alice/renew', {
      token: ssoToken,
      json: { doc: [{ item: `${g.url}/item/it-0002` }] },
    });
    expect(renew.status).toBe(200);
    expect((await call(g.url, 'POST', '/auth/logout', { token: ssoToken, json: { patron: 'alice' } })).status).toBe(
      200,
    );

    const stored = await everything(prefix);
    // The store was used: sessions, the patron index, counters, leases, facts.
    for (const kind of ['session:', 'patron:', 'limit:', 'fact:']) {
      expect(
        stored.some(({ key }) => key.startsWith(`${prefix}${kind}`)),
        kind,
      ).toBe(true);
    }
    const named = new Set(DEMO_PATRONS);
    const inClear: string[] = [];
    for (const { key, texts } of stored) {
      // A name in clear stands as a whole word (JSON strings, key parts): hashes and sealed values are one long word.
      for (const text of [key.slice(prefix.length), ...texts]) {
        for (const word of text.split(/[^A-Za-z0-9_-]+/))
          if (named.has(word.toLowerCase())) inClear.push(`${key}: ${text}`);
      }
    }
    console.log(`state store after ${DEMO_PATRONS.length} patrons: ${stored.length} keys, ${inClear.length} in clear`);
    expect(inClear).toEqual([]);
  });

  it('refuses a Redis that may evict keys: an error line at start, /readyz and logins 503 with the reason, and serves once it may not', async () => {
    await raw.config('SET', 'maxmemory-policy', 'allkeys-lru');
    try {
      const before = (await sim.counters()).executed['63'] ?? 0;
      const g = await gateway(newPrefix());
      expect(g.stdout()).toContain('may evict keys (maxmemory-policy allkeys-lru)');
      const ready = await call(g.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(JSON.stringify(ready.body)).toContain('maxmemory-policy allkeys-lru');
      expect(JSON.stringify(ready.body)).toContain('CONFIG SET maxmemory-policy noeviction');
      const refused = await login(g, 'alice', 'alice-pass');
      expect(refused.status).toBe(503);
      expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
      // Nothing reached the ILS: a login that cannot be counted is not checked.
      expect((await sim.counters()).executed['63'] ?? 0).toBe(before);

      await raw.config('SET', 'maxmemory-policy', 'noeviction');
      await vi.waitFor(async () => expect((await call(g.url, 'GET', '/readyz')).status).toBe(200), WAIT);
      expect((await login(g, 'alice', 'alice-pass')).status).toBe(200);
      expect(g.stdout()).toContain('the Redis state store no longer evicts keys; using it again');
    } finally {
      await raw.config('SET', 'maxmemory-policy', 'noeviction');
    }
  });

  it('serves with a Redis that lets it read neither CONFIG nor INFO, and says in the log and /readyz to check the policy', async () => {
    // As managed services restrict commands: an ACL user without config and info.
    await raw.call('ACL', 'SETUSER', 'no-config', 'on', '>no-config-pass', '~*', '&*', '+@all', '-config', '-info');
    const url = new URL(redis.url);
    url.username = 'no-config';
    url.password = 'no-config-pass';
    const g = await gateway(newPrefix(), { PAIA_STATE_REDIS_URL: url.toString() });
    const ready = await call(g.url, 'GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(String((ready.body.store as { warning?: string }).warning)).toContain('cannot read the eviction policy');
    expect(g.stdout()).toContain('cannot read the eviction policy of the Redis state store');
    expect((await login(g, 'alice', 'alice-pass')).status).toBe(200);
  });

  it('lets a restarted gateway log a patron in within the login deadline after one was killed with 5 logins in flight', async () => {
    const prefix = newPrefix();
    // The login deadline: no login outlives it, so no attempt counts as in flight beyond it.
    const env = { PAIA_HTTP_REQUEST_TIMEOUT_MS: '4000' };
    const first = await gateway(prefix, env);
    await sim.setFaults({ latencyMs: 3000 });
    try {
      const inFlight = Array.from({ length: 5 }, () => login(first, 'alice', 'alice-pass'));
      // All five admitted (each holds its lease in Redis) and held up by the ILS's latency.
      await vi.waitFor(async () => {
        const [leases] = await raw.keys(`${prefix}lease:login-in-flight:*`);
        expect(leases === undefined ? 0 : await raw.zcard(leases)).toBe(5);
      }, WAIT);
      await first.kill('SIGKILL');
      const killedAt = performance.now();
      await Promise.allSettled(inFlight);
      await sim.clearFaults();

      const second = await gateway(prefix, env);
      const startedMs = performance.now() - killedAt;
      const answer = await login(second, 'alice', 'alice-pass');
      const tookMs = performance.now() - killedAt;
      console.log(
        `login after a kill with 5 logins in flight: ${answer.status} ${Math.round(tookMs)} ms after the kill (the new gateway listened after ${Math.round(startedMs)} ms)`,
      );
      // The first login the new gateway gets goes through: the five leases ran out at their deadline, 4 s after
      // they were taken (just before the kill), while it waited behind them.
      expect(answer.status).toBe(200);
      expect(tookMs).toBeLessThan(Math.max(4000, startedMs) + 1000);
    } finally {
      await sim.clearFaults();
    }
  });
});
