/**
 * Several gateway instances on one Redis (state.store "redis"), as real
 * processes: the simulator, a redis-server and gateway processes that share
 * it. Sessions, the per-token request limit and item-cache invalidation hold
 * across instances and restarts; with Redis gone every call that needs a
 * session gets 503 with Retry-After (never 500, never a hang, never served
 * without its session check), /readyz names the store, and the gateways
 * recover on their own once Redis is back.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { BASE_ENV, item, PASSWORDS } from '../conformance/support.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type Answer, call } from '../helpers/http-call.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** Every HTTP request gives up after this long: a hang is a finding, not a stuck test. */
/** The bound on getting back to work after Redis returns. */
const RECOVERY_LIMIT_MS = 5000;
const WAIT = { timeout: 15_000, interval: 100 };
/** Room beyond the store's command timeout for a call against a hung Redis to come back with its 503. */
const HANG_MARGIN_MS = 4000;
/** How long Redis stays down in the outage test. */
const OUTAGE_MS = 4000;

const loginReply = (base: string, username: string) =>
  call(base, 'POST', '/auth/login', {
    json: { username, password: PASSWORDS[username], grant_type: 'password' },
  });

/** Logs in and returns the token and patron id; fails the test otherwise. */
async function login(base: string, username: string): Promise<{ token: string; patron: string }> {
  const reply = await loginReply(base, username);
  expect(reply.status, `login as ${username}: ${JSON.stringify(reply.body)}`).toBe(200);
  return { token: String(reply.body.access_token), patron: String(reply.body.patron) };
}

const patronCall = (base: string, session: { token: string; patron: string }) =>
  call(base, 'GET', `/core/${encodeURIComponent(session.patron)}`, { token: session.token });

/** The 503 a call that needs the store gets while the store does not answer. */
function expectStoreUnavailable(answer: Answer, what: string): void {
  expect(answer.status, `${what}: ${JSON.stringify(answer.body)}`).toBe(503);
  expect(answer.body.error, what).toBe('service_unavailable');
  expect(Number(answer.retryAfter), `${what}: Retry-After`).toBeGreaterThanOrEqual(1);
}

describe('two gateways sharing one Redis', () => {
  /** Unique per test file and run: other files (and other runs) on the same Redis never see these keys. */
  const keyPrefix = `paia-test:shared-state:${process.pid}:`;
  let sim: SimulatorProcess;
  let redis: RedisServer;
  const running = new Set<GatewayProcess>();
  let a: GatewayProcess;
  let b: GatewayProcess;

  async function gateway(settings: Record<string, string> = {}): Promise<GatewayProcess> {
    const started = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        ...BASE_ENV,
        PAIA_STATE_STORE: 'redis',
        PAIA_STATE_REDIS_URL: redis.url,
        PAIA_STATE_REDIS_KEY_PREFIX: keyPrefix,
        // The outage test sends many calls per token; the limit has its own test below.
        PAIA_AUTH_REQUESTS_PER_MINUTE: '100000',
        PAIA_CACHE_ITEMS_ENABLED: 'true',
        PAIA_CACHE_ITEMS_TTL_MS: '600000',
        ...settings,
      },
    });
    running.add(started);
    return started;
  }

  async function stop(target: GatewayProcess): Promise<void> {
    await target.stop();
    running.delete(target);
  }

  beforeAll(async () => {
    [sim, redis] = await Promise.all([
      startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] }),
      startRedisServer(),
    ]);
    [a, b] = await Promise.all([gateway(), gateway()]);
  });

  /**
   * Once Redis is back, each gateway's reconnect may still be a moment away
   * (ioredis waits up to 2 s between attempts): this waits until every
   * running gateway says it is ready.
   */
  async function allReady(): Promise<void> {
    for (const each of running) {
      await vi.waitFor(async () => expect((await call(each.url, 'GET', '/readyz')).status).toBe(200), WAIT);
    }
  }

  beforeEach(allReady);

  afterAll(async () => {
    await Promise.all([...running].map((each) => each.stop()));
    await sim?.stop();
    await redis?.close();
  });

  it('accepts on gateway B a token issued by gateway A, and a logout on B ends it on A', async () => {
    const alice = await login(a.url, 'alice');
    expect((await patronCall(b.url, alice)).status).toBe(200);
    expect((await patronCall(a.url, alice)).status).toBe(200);

    const logout = await call(b.url, 'POST', '/auth/logout', { token: alice.token, json: { patron: alice.patron } });
    expect(logout.status, JSON.stringify(logout.body)).toBe(200);
    for (const base of [a.url, b.url]) {
      const after = await patronCall(base, alice);
      expect(after.status).toBe(401);
      expect(after.body.error).toBe('invalid_grant');
    }
  });

  it('keeps its sessions when a gateway is restarted on the same Redis', async () => {
    const dave = await login(a.url, 'dave');
    expect((await patronCall(a.url, dave)).status).toBe(200);
    const oldPid = a.pid;
    await stop(a);
    a = await gateway();
    expect(a.pid).not.toBe(oldPid);

    const again = await patronCall(a.url, dave);
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.body.name).toBeTruthy();
    // Not because it lets anything through: a token nobody issued is still refused.
    const unknown = await patronCall(a.url, { token: randomBytes(32).toString('base64url'), patron: dave.patron });
    expect(unknown.status).toBe(401);
  });

  // VuFind (PAIA.php) logs in once per browser session, keeps the token for expires_in and never calls auth/logout:
  // patronLogin() reuses it for core/{patron} (paiaGetUserDetails()) on every page. Each browser adds a session.
  it('a patron who never logs out: past auth.maxSessionsPerPatron (50) the least recently used session ends, never the one used between logins, on either gateway', async () => {
    const bound = 50;
    const ida = async (base: string) => {
      const reply = await call(base, 'POST', '/auth/login', {
        json: { username: 'ida', password: 'ida-pass', grant_type: 'password' },
      });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return { token: String(reply.body.access_token), patron: String(reply.body.patron) };
    };
    const used = await ida(a.url);
    const [neverUsedAgain, alsoUnused] = [await ida(b.url), await ida(a.url)];
    for (let login = 4; login <= bound + 2; login++) {
      await ida(login % 2 === 0 ? a.url : b.url);
      const page = await patronCall(login % 2 === 0 ? b.url : a.url, used);
      expect(page.status, `page view after login ${login}: ${JSON.stringify(page.body)}`).toBe(200);
    }
    // bound + 2 logins: the two sessions left unused longest have ended, the one in use has not.
    for (const ended of [neverUsedAgain, alsoUnused]) expect((await patronCall(a.url, ended)).status).toBe(401);
    expect((await patronCall(b.url, used)).status).toBe(200);
  });

  it('counts the per-token request limit across both gateways together, not per instance', async () => {
    const limit = 4;
    const [c, d] = await Promise.all([
      gateway({ PAIA_AUTH_REQUESTS_PER_MINUTE: String(limit) }),
      gateway({ PAIA_AUTH_REQUESTS_PER_MINUTE: String(limit) }),
    ]);
    try {
      const frank = await login(c.url, 'frank');
      const statuses: number[] = [];
      // Alternating: counted per instance, each would allow `limit` of these 2 * limit calls.
      for (let i = 0; i < 2 * limit; i += 1) {
        const answer = await patronCall(i % 2 === 0 ? c.url : d.url, frank);
        statuses.push(answer.status as number);
        if (i >= limit) {
          expect(answer.body.error).toBe('service_unavailable');
          const retryAfter = Number(answer.retryAfter);
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          expect(retryAfter).toBeLessThanOrEqual(60);
        }
      }
      expect(statuses).toEqual([...Array(limit).fill(200), ...Array(limit).fill(429)]);
      // The limit is the token's: another login of the same patron has its own.
      const fresh = await login(d.url, 'frank');
      expect((await patronCall(c.url, fresh)).status).toBe(200);
      expect((await patronCall(d.url, fresh)).status).toBe(200);
    } finally {
      await Promise.all([stop(c), stop(d)]);
    }
  });

  /**
   * Renews one of emile's items on `writer` and checks that `reader`, which
   * had the item cached, asks the ILS for it again (one 17 Item Information,
   * counted by the simulator) and shows the new due date.
   */
  async function expectRenewToReach(writer: GatewayProcess, reader: GatewayProcess, barcode: string): Promise<void> {
    type Doc = { item?: string; duedate?: string };
    const target = item(barcode);
    const received17 = async () => (await sim.counters()).received['17'] ?? 0;
    const emile = await login(reader.url, 'emile');
    const itemOnReader = async () => {
      const reply = await call(reader.url, 'GET', `/core/${emile.patron}/items`, { token: emile.token });
      expect(reply.status, JSON.stringify(reply.body)).toBe(200);
      return (reply.body.doc as Doc[]).find((doc) => doc.item === target);
    };

    const old = await itemOnReader();
    expect(old?.duedate).toBeTruthy();
    // The reader answers from its cache now: no item information reaches the ILS.
    const cached = await received17();
    expect(await itemOnReader()).toEqual(old);
    expect(await received17()).toBe(cached);

    const renew = await call(writer.url, 'POST', `/core/${emile.patron}/renew`, {
      token: emile.token,
      json: { doc: [{ item: target }] },
    });
    expect(renew.status, JSON.stringify(renew.body)).toBe(200);
    const renewed = (renew.body.doc as Doc[])[0]!;
    expect(renewed).not.toHaveProperty('error');
    expect(renewed.duedate).not.toBe(old?.duedate);

    // The invalidation reaches the reader over pub/sub a moment after the renew's answer; until then it answers from its cache.
    const before = await received17();
    await vi.waitFor(async () => expect((await itemOnReader())?.duedate).toBe(renewed.duedate), WAIT);
    // It asked the ILS for that one item, once: the rest of emile's items stayed cached.
    expect((await received17()) - before).toBe(1);
  }

  it('makes gateway B ask the ILS again for an item renewed on gateway A, and show its new due date', async () => {
    await expectRenewToReach(a, b, 'em-0001');
  });

  it("with the account window on: a renew on gateway A makes gateway B read the patron's account afresh at once", async () => {
    type Doc = { item?: string; duedate?: string };
    const windowed = { PAIA_CACHE_ACCOUNTS_ENABLED: 'true', PAIA_CACHE_ACCOUNTS_WINDOW_MS: '300000' };
    const [writer, reader] = await Promise.all([gateway(windowed), gateway(windowed)]);
    try {
      const target = item('dv-0006');
      const dave = await login(writer.url, 'dave');
      const received = async () => Object.values((await sim.counters()).received).reduce((sum, n) => sum + n, 0);
      const onReader = async () => {
        const reply = await call(reader.url, 'GET', `/core/${dave.patron}/items`, { token: dave.token });
        expect(reply.status, JSON.stringify(reply.body)).toBe(200);
        return (reply.body.doc as Doc[]).find((doc) => doc.item === target);
      };
      const old = await onReader();
      expect(old?.duedate).toBeTruthy();
      // B answers from its window now: nothing reaches the ILS.
      const shared = await received();
      expect(await onReader()).toEqual(old);
      expect(await received()).toBe(shared);

      const renew = await call(writer.url, 'POST', `/core/${dave.patron}/renew`, {
        token: dave.token,
        json: { doc: [{ item: target }] },
      });
      expect(renew.status, JSON.stringify(renew.body)).toBe(200);
      const renewed = (renew.body.doc as Doc[])[0]!;
      expect(renewed).not.toHaveProperty('error');
      expect(renewed.duedate).not.toBe(old?.duedate);
      // A answers once B has been told: B's very next read goes to the ILS and shows the renewal, no waiting.
      expect((await onReader())?.duedate).toBe(renewed.duedate);
      expect(await received()).toBeGreaterThan(shared);
    } finally {
      await Promise.all([stop(writer), stop(reader)]);
    }
  });

  it('answers a login with 503 and Retry-After while Redis is down, and logs in again once it is back', async () => {
    await redis.kill();
    try {
      for (const base of [a.url, b.url]) expectStoreUnavailable(await loginReply(base, 'dave'), `login on ${base}`);
    } finally {
      await redis.restart();
    }
    await allReady();
    const dave = await login(b.url, 'dave');
    expect((await patronCall(a.url, dave)).status).toBe(200);
  });

  it('answers with 503 and Retry-After within the command timeout while Redis hangs, and serves again once it runs', async () => {
    const alice = await login(a.url, 'alice');
    await redis.pause();
    const timings: string[] = [];
    try {
      for (const [name, base] of [
        ['A', a.url],
        ['B', b.url],
      ] as const) {
        const started = performance.now();
        const answer = await patronCall(base, alice);
        const ms = performance.now() - started;
        timings.push(`${name} ${Math.round(ms)} ms`);
        expectStoreUnavailable(answer, `patron call on ${name} while Redis hangs`);
        // state.redis.commandTimeoutMs is 1000 by default; the rest is room for a loaded machine.
        expect(ms).toBeLessThan(1000 + HANG_MARGIN_MS);
      }
      // Connected is not answering: /readyz notices a hung Redis too (its probe PING times out).
      await vi.waitFor(async () => {
        const ready = await call(a.url, 'GET', '/readyz');
        expect(ready.status).toBe(503);
        expect(JSON.stringify(ready.body)).toContain('does not answer');
      }, WAIT);
    } finally {
      await redis.resume();
    }
    console.log(`patron calls while Redis hangs: 503 after ${timings.join(', ')} (command timeout 1000 ms)`);
    await vi.waitFor(async () => expect((await patronCall(b.url, alice)).status).toBe(200), WAIT);
  });

  it('starts a gateway while Redis is down: /readyz names the store, logins get 503, and once Redis is up it serves, shares sessions and hears invalidations', async () => {
    await redis.kill();
    let late: GatewayProcess;
    try {
      late = await gateway();
      const ready = await call(late.url, 'GET', '/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.store).toEqual({ kind: 'redis', ok: false });
      expect(ready.body.reasons).toContainEqual(
        expect.stringContaining(`the Redis state store at ${redis.url} is not connected`),
      );
      expectStoreUnavailable(await loginReply(late.url, 'alice'), 'login on the gateway started without Redis');
    } finally {
      await redis.restart();
    }
    await allReady();
    const alice = await login(a.url, 'alice');
    expect((await patronCall(late.url, alice)).status).toBe(200);
    await expectRenewToReach(a, late, 'em-0002');
    await stop(late);
  });

  it('answers patron calls with 200 or 503 while Redis is killed under load, never 500, a hang or a 200 for a bad token, and recovers within 5 s of its restart', async () => {
    // Sessions made before the outage; a restarted Redis (no persistence) has lost them.
    const valid = [await login(a.url, 'alice'), await login(b.url, 'dave')];
    const ended = await login(a.url, 'frank');
    expect(
      (await call(b.url, 'POST', '/auth/logout', { token: ended.token, json: { patron: ended.patron } })).status,
    ).toBe(200);
    const invalid = [
      { token: randomBytes(32).toString('base64url'), patron: valid[0]!.patron }, // never issued
      { token: ended.token, patron: ended.patron }, // logged out
      { token: 'not-a-token', patron: valid[1]!.patron },
    ];

    type Phase = 'before' | 'down' | 'after';
    interface Sample {
      gateway: 'A' | 'B';
      token: 'valid' | 'invalid';
      phase: Phase;
      answer: Answer;
    }
    const records: Sample[] = [];
    let phase: Phase = 'before';
    let loading = true;
    const worker = async (name: 'A' | 'B', base: string, kind: 'valid' | 'invalid', session: (typeof valid)[0]) => {
      while (loading) {
        const startedIn = phase; // the phase the request was sent in
        const answer = await patronCall(base, session);
        records.push({ gateway: name, token: kind, phase: startedIn, answer });
        await new Promise((resolve) => setTimeout(resolve, 40));
      }
    };
    const workers = [a, b].flatMap((g, i) => {
      const name = i === 0 ? 'A' : 'B';
      return [
        ...valid.map((session) => worker(name, g.url, 'valid', session)),
        ...invalid.map((session) => worker(name, g.url, 'invalid', session)),
      ];
    });
    const count = (filter: (r: Sample) => boolean) => records.filter(filter).length;
    let recoveryMs = Number.NaN;
    let redisBackMs = Number.NaN;
    let outageMs = Number.NaN;

    try {
      await vi.waitFor(() => {
        for (const g of ['A', 'B'])
          expect(count((r) => r.gateway === g && r.token === 'valid' && r.answer.status === 200)).toBeGreaterThan(3);
      }, WAIT);

      await redis.kill();
      phase = 'down';
      const killed = performance.now();
      for (const [name, base] of [
        ['A', a.url],
        ['B', b.url],
      ] as const) {
        await vi.waitFor(async () => {
          const ready = await call(base, 'GET', '/readyz');
          expect(ready.status, `/readyz of ${name}`).toBe(503);
          expect(ready.body.status).toBe('not ready');
          expect(ready.body.store).toEqual({ kind: 'redis', ok: false });
          expect(ready.body.reasons).toContainEqual(
            expect.stringContaining(`the Redis state store at ${redis.url} is not connected`),
          );
        }, WAIT);
      }
      // Let the outage last: several calls of each kind on each gateway meet it, and ioredis's reconnect
      // delay grows to its longest (2 s), so the recovery is measured as after a real outage.
      await vi.waitFor(() => {
        for (const g of ['A', 'B'])
          for (const kind of ['valid', 'invalid'])
            expect(count((r) => r.phase === 'down' && r.gateway === g && r.token === kind)).toBeGreaterThan(5);
      }, WAIT);
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, OUTAGE_MS - (performance.now() - killed))));
      outageMs = performance.now() - killed;

      phase = 'after';
      const restarting = performance.now();
      await redis.restart();
      redisBackMs = performance.now() - restarting;
      // Back to work: a new login on A, and its token on both gateways.
      for (;;) {
        const fresh = await loginReply(a.url, 'alice');
        if (fresh.status === 200) {
          const session = { token: String(fresh.body.access_token), patron: String(fresh.body.patron) };
          const answers = await Promise.all([patronCall(a.url, session), patronCall(b.url, session)]);
          if (answers.every((answer) => answer.status === 200)) break;
        } else {
          expect(fresh.status, JSON.stringify(fresh.body)).toBe(503);
        }
        if (performance.now() - restarting > 3 * RECOVERY_LIMIT_MS) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      recoveryMs = performance.now() - restarting;
      // A little more load after the recovery, so the old tokens meet the restarted Redis on both gateways.
      await vi.waitFor(() => {
        for (const g of ['A', 'B'])
          expect(
            count((r) => r.phase === 'after' && r.gateway === g && r.token === 'valid' && r.answer.status === 401),
          ).toBeGreaterThan(2);
      }, WAIT);
    } finally {
      loading = false;
      await Promise.all(workers);
      if (phase === 'down') await redis.restart();
    }

    const tally = (p: Phase) => {
      const inPhase = records.filter((r) => r.phase === p);
      const statuses = [...new Set(inPhase.map((r) => r.answer.status))].sort();
      return statuses.map((s) => `${s}: ${inPhase.filter((r) => r.answer.status === s).length}`).join(', ');
    };
    console.log(
      [
        `Redis killed under load (${records.length} patron calls on 2 gateways, ${valid.length} valid and ${invalid.length} bad tokens each):`,
        `  before the kill: ${tally('before')}`,
        `  while down:      ${tally('down')} (Redis down ${Math.round(outageMs)} ms)`,
        `  after restart:   ${tally('after')} (old tokens: sessions lost with Redis)`,
        `  Redis answering ${Math.round(redisBackMs)} ms after restart() began; calls succeed again after ${Math.round(recoveryMs)} ms (limit ${RECOVERY_LIMIT_MS} ms)`,
      ].join('\n'),
    );

    const explain = (r: Sample) =>
      `${r.phase}, gateway ${r.gateway}, ${r.token} token: ${r.answer.status} ${JSON.stringify(r.answer.body)}`;
    // Never a hang, never a 500 or anything else unplanned.
    const allowed = (r: Sample): number[] => {
      if (r.token === 'invalid') return [401, 503];
      if (r.phase === 'before') return [200, 503];
      if (r.phase === 'down') return [503]; // sent after Redis died: no session can be checked
      return [401, 503]; // the restarted Redis has lost these sessions
    };
    const unexpected = records.filter((r) => !allowed(r).includes(r.answer.status as number));
    expect(unexpected.map(explain).slice(0, 10)).toEqual([]);
    for (const r of records.filter((each) => each.answer.status === 503)) {
      expect(r.answer.body.error, explain(r)).toBe('service_unavailable');
      expect(Number(r.answer.retryAfter), explain(r)).toBeGreaterThanOrEqual(1);
    }
    for (const g of ['A', 'B']) {
      expect(
        count((r) => r.phase === 'down' && r.gateway === g && r.token === 'valid' && r.answer.status === 503),
      ).toBeGreaterThan(0);
    }

    expect(recoveryMs).toBeLessThanOrEqual(RECOVERY_LIMIT_MS);
    for (const session of valid) {
      for (const base of [a.url, b.url]) {
        const old = await patronCall(base, session);
        expect(old.status).toBe(401);
        expect(old.body.error).toBe('invalid_grant');
      }
    }
    for (const base of [a.url, b.url]) {
      await vi.waitFor(async () => {
        const ready = await call(base, 'GET', '/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body.store).toEqual({ kind: 'redis', ok: true });
      }, WAIT);
    }
  });
});
