/**
 * RedisStore (src/state/redis) against a real Redis: sessions, the
 * per-patron bound, expiry, counters, remembered facts, item invalidation
 * over pub/sub, and what happens while Redis is stopped, hung or not yet
 * started. Each describe block runs once per kind of Redis: the local
 * redis-server always, a container where a Docker engine answers (skipped
 * with the reason printed otherwise).
 */
import { randomUUID } from 'node:crypto';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { StoreUnavailable } from '../../src/state/errors.js';
import { RedisStore } from '../../src/state/redis/index.js';
import type { Session } from '../../src/state/sessions.js';
import type { Invalidation } from '../../src/state/store.js';
import { hashToken, TOKEN_LENGTH } from '../../src/state/tokens.js';
import { type RedisServer, redisKinds } from '../helpers/redis.js';

const COMMAND_TIMEOUT_MS = 500;
/** Room on a loaded machine on top of the command timeout: a failure must come well before a hang would. */
const FAILURE_MARGIN_MS = 2500;
const WAIT = { timeout: 10_000, interval: 50 };

const kinds = await redisKinds();

for (const kind of kinds) {
  if (kind.unavailable !== null) {
    console.log(`skipped: RedisStore against ${kind.name}: ${kind.unavailable}`);
  }

  describe.skipIf(kind.unavailable !== null)(`RedisStore against ${kind.name}`, () => {
    let redis: RedisServer;
    /** A plain client, to look at what the store wrote. */
    let raw: Redis;
    const opened: RedisStore[] = [];

    /** A store on the test Redis; same prefix = same shared state, as two gateway instances would have. */
    function store(prefix: string, maxSessionsPerPatron = 3): RedisStore {
      const created = new RedisStore({
        url: redis.url,
        keyPrefix: prefix,
        connectTimeoutMs: 1000,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        maxSessionsPerPatron,
      });
      opened.push(created);
      return created;
    }

    async function connected(prefix: string, maxSessionsPerPatron = 3): Promise<RedisStore> {
      const created = store(prefix, maxSessionsPerPatron);
      await created.ready(5000);
      return created;
    }

    const newPrefix = () => `store-test:${randomUUID()}:`;
    const session = (patron: string, lifetimeMs = 60_000): Session => ({
      patron,
      barcode: `barcode-of-${patron}`,
      scopes: ['read_patron', 'read_items'],
      expiresAt: Date.now() + lifetimeMs,
    });

    /** The one patron index under `prefix` (its name is a hash of the patron, never the patron). */
    async function patronIndex(prefix: string): Promise<string> {
      const [index, ...more] = await raw.keys(`${prefix}patron:*`);
      expect(more).toEqual([]);
      return index as string;
    }

    /** Resolves once the store answers again after Redis came back (ioredis reconnects on its own). */
    async function answering(target: RedisStore): Promise<void> {
      await vi.waitFor(() => expect(target.health().problem).toBeNull(), WAIT);
    }

    beforeAll(async () => {
      redis = await kind.start();
      raw = new Redis(redis.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
      raw.on('error', () => {});
      await raw.connect();
    });

    afterAll(async () => {
      await Promise.all(opened.map((each) => each.close()));
      raw?.disconnect();
      await redis?.close();
    });

    /** A Redis user that may not run `denied` (ACL), as managed services restrict CONFIG; also how a test makes one command fail. */
    async function restrictedUrl(denied: string[]): Promise<string> {
      const user = `limited-${randomUUID().slice(0, 8)}`;
      await raw.call('ACL', 'SETUSER', user, 'on', '>limited-pass', '~*', '&*', '+@all', ...denied.map((c) => `-${c}`));
      const url = new URL(redis.url);
      url.username = user;
      url.password = 'limited-pass';
      return url.toString();
    }

    /** A store at `url`, with a prefix of its own unless given one. */
    function storeAt(url: string, prefix = newPrefix()): RedisStore {
      const created = new RedisStore({
        url,
        keyPrefix: prefix,
        connectTimeoutMs: 1000,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        maxSessionsPerPatron: 3,
      });
      opened.push(created);
      return created;
    }

    describe('sessions', () => {
      it('hands out a token that another store on the same prefix resolves to the same session, storing only its hash', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const stored = session('p-1');
        const token = await a.sessions.create(stored);
        expect(token).toMatch(new RegExp(`^[A-Za-z0-9_-]{${TOKEN_LENGTH}}$`));
        expect(await b.sessions.get(token)).toEqual(stored);

        const index = await patronIndex(prefix);
        const keys = await raw.keys(`${prefix}*`);
        expect(keys.sort()).toEqual([index, `${prefix}session:${hashToken(token)}`].sort());
        const values = [await raw.get(`${prefix}session:${hashToken(token)}`), ...(await raw.zrange(index, '0', '-1'))];
        // Neither the token, nor the patron or the barcode in clear: a session is sealed with its token.
        for (const text of [...keys, ...values]) {
          for (const secret of [token, 'p-1', 'barcode-of-p-1']) expect(text).not.toContain(secret);
        }
      });

      it('does not know a token under another prefix, or one it never issued', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix);
        const token = await a.sessions.create(session('p-1'));
        const elsewhere = await connected(newPrefix());
        expect(await elsewhere.sessions.get(token)).toBeNull();
        expect(await a.sessions.get('x'.repeat(TOKEN_LENGTH))).toBeNull();
        expect(await a.sessions.get('')).toBeNull();
      });

      it('ends one token with delete (on any store) and leaves the patron’s other tokens alive', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const first = await a.sessions.create(session('p-1'));
        const second = await a.sessions.create(session('p-1'));
        await b.sessions.delete(first);
        expect(await a.sessions.get(first)).toBeNull();
        expect(await a.sessions.get(second)).not.toBeNull();
        expect(await raw.zrange(await patronIndex(prefix), '0', '-1')).toEqual([hashToken(second)]);
        await expect(b.sessions.delete('never-issued')).resolves.toBeUndefined();
      });

      it('ends every token of one patron with deleteAllFor, counts them, and leaves other patrons alone', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const mine = [await a.sessions.create(session('p-1')), await b.sessions.create(session('p-1'))];
        const theirs = await a.sessions.create(session('p-2'));
        expect(await raw.keys(`${prefix}patron:*`)).toHaveLength(2);
        expect(await b.sessions.deleteAllFor('p-1')).toBe(2);
        for (const token of mine) expect(await a.sessions.get(token)).toBeNull();
        expect(await a.sessions.get(theirs)).not.toBeNull();
        expect(await raw.keys(`${prefix}patron:*`)).toHaveLength(1);
        expect(await b.sessions.deleteAllFor('p-1')).toBe(0);
      });

      it('keeps at most maxSessionsPerPatron sessions of a patron: a further login ends the least recently used (here the oldest, none used since)', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix, 2);
        const b = await connected(prefix, 2);
        const oldest = await a.sessions.create(session('p-1'));
        const middle = await b.sessions.create(session('p-1', 61_000));
        const newest = await a.sessions.create(session('p-1', 62_000));
        expect(await b.sessions.get(oldest)).toBeNull();
        expect(await b.sessions.get(middle)).not.toBeNull();
        expect(await b.sessions.get(newest)).not.toBeNull();
        expect(await raw.zcard(await patronIndex(prefix))).toBe(2);
        expect(await raw.exists(`${prefix}session:${hashToken(oldest)}`)).toBe(0);
        // Another patron's sessions do not count against this one.
        expect(await a.sessions.get(await a.sessions.create(session('p-2')))).not.toBeNull();
      });

      // VuFind (PAIA.php patronLogin()) keeps each browser's token and reads core/{patron} with it on every page,
      // never logging out: the session used must not be the one a further login ends.
      it('ends the least recently used session, never one used since: a get scores the session as just used in the patron index', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix, 3);
        const first = await a.sessions.create(session('p-1'));
        const second = await a.sessions.create(session('p-1'));
        const third = await a.sessions.create(session('p-1'));
        expect(await a.sessions.get(first)).not.toBeNull();
        await a.sessions.create(session('p-1'));
        expect(await a.sessions.get(second)).toBeNull();
        expect(await raw.exists(`${prefix}session:${hashToken(second)}`)).toBe(0);
        for (const token of [first, third]) expect(await a.sessions.get(token)).not.toBeNull();

        // A client looping logins, the first session used between each: the bound holds, the first lives on.
        for (let login = 0; login < 6; login++) {
          await a.sessions.create(session('p-1'));
          expect(await a.sessions.get(first)).not.toBeNull();
          expect(await raw.zcard(await patronIndex(prefix))).toBeLessThanOrEqual(3);
        }
        expect(await raw.zcard(await patronIndex(prefix))).toBe(3);
        // Another store (another instance) sees the same order: its use counts too.
        const b = await connected(prefix, 3);
        const index = await patronIndex(prefix);
        const [leastRecent] = await raw.zrange(index, '0', '0');
        const before = Number(await raw.zscore(index, hashToken(first)));
        await b.sessions.get(first);
        await vi.waitFor(
          async () => expect(Number(await raw.zscore(index, hashToken(first)))).toBeGreaterThan(before),
          WAIT,
        );
        expect((await raw.zrange(index, '0', '0'))[0]).toBe(leastRecent);
      });

      it('at the bound, sessions that expired make room before a live one ends; a get does not bring back an ended session', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix, 2);
        const short = await a.sessions.create(session('p-1', 300));
        const live = await a.sessions.create(session('p-1'));
        await vi.waitFor(async () => expect(await raw.exists(`${prefix}session:${hashToken(short)}`)).toBe(0), WAIT);
        const next = await a.sessions.create(session('p-1'));
        for (const token of [live, next]) expect(await a.sessions.get(token)).not.toBeNull();
        const index = await patronIndex(prefix);
        expect(await raw.zcard(index)).toBe(2);
        await a.sessions.delete(live);
        expect(await a.sessions.get(live)).toBeNull();
        expect(await raw.zrange(index, '0', '-1')).toEqual([hashToken(next)]);
      });

      it('lets a session expire with its lifetime: Redis drops the key, and an already expired one is never stored', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix);
        const token = await a.sessions.create(session('p-1', 1500));
        const key = `${prefix}session:${hashToken(token)}`;
        const ttl = await raw.pttl(key);
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(1500);
        expect(await a.sessions.get(token)).not.toBeNull();
        await vi.waitFor(async () => expect(await a.sessions.get(token)).toBeNull(), WAIT);
        // The store answers by the session's own expiry; Redis's TTL runs from when SET arrived, a few ms later under
        // load, so the key goes a moment after the session reads as expired.
        await vi.waitFor(async () => expect(await raw.exists(key)).toBe(0), WAIT);

        const dead = await a.sessions.create(session('p-1', -1000));
        expect(await a.sessions.get(dead)).toBeNull();
        expect(await raw.exists(`${prefix}session:${hashToken(dead)}`)).toBe(0);
      });

      // Every VuFind account page uses the token (PAIA.php patronLogin() reads core/{patron} through
      // paiaGetUserDetails()), so every page touches the index. The review of issue 25: a touch that failed set the
      // store's "last operation failed", so /readyz answered 503 ("does not answer") for a Redis that answered every
      // call, and it counted as a call answered 503.
      it('a touch that fails (a use not recorded) leaves the store ready: counted under session-touch only', async () => {
        const prefix = newPrefix();
        const token = await (await connected(prefix)).sessions.create(session('p-1'));
        // This instance's Redis user may not ZADD: every get works, every touch fails.
        const a = storeAt(await restrictedUrl(['zadd']), prefix);
        await a.ready(5000);
        const failed: string[] = [];
        a.observe((operation, _seconds, ok) => {
          if (!ok) failed.push(operation);
        });
        expect(await a.sessions.get(token)).not.toBeNull();
        await vi.waitFor(() => expect(failed).toEqual(['session-touch']), WAIT);
        expect(a.health()).toMatchObject({ problem: null, errors: 0 });
        expect(await a.sessions.get(token)).not.toBeNull();
      });

      // VuFind never posts auth/logout (PAIA.php keeps each browser's token until expires_in), so a patron's old
      // sessions stay in the index until they expire. Builds of main before this fix scored it by expiry, which sorts
      // after every use written now: each new login ended the one before it instead of those old sessions.
      it('after an upgrade, index scores of earlier builds (by expiry) count as older than any new login', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix, 3);
        const old = [];
        for (let i = 0; i < 3; i++) old.push(await a.sessions.create(session('p-1')));
        const index = await patronIndex(prefix);
        for (const token of old) await raw.zadd(index, Date.now() + 3_600_000, hashToken(token));
        const first = await a.sessions.create(session('p-1'));
        const second = await a.sessions.create(session('p-1'));
        for (const token of [first, second]) expect(await a.sessions.get(token)).not.toBeNull();
        expect(await raw.zcard(index)).toBe(3);
        // No score left in the future: every old one sorts by its uses from now on.
        expect(await raw.zcount(index, `(${Date.now() + 60_000}`, '+inf')).toBe(0);
      });

      it('treats a damaged session value as no session', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix);
        const token = await a.sessions.create(session('p-1'));
        await raw.set(`${prefix}session:${hashToken(token)}`, '{"patron":"p-1"', 'EX', 60);
        expect(await a.sessions.get(token)).toBeNull();
      });
    });

    describe('limiters', () => {
      it('counts takes across stores, peeks without counting, gives back and resets', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const onA = a.limiter({ name: 'test', points: 3, durationSeconds: 60 });
        const onB = b.limiter({ name: 'test', points: 3, durationSeconds: 60 });
        expect(await onA.peek('k')).toBeNull();
        expect(await onA.take('k')).toMatchObject({ consumed: 1, within: true });
        expect(await onB.take('k')).toMatchObject({ consumed: 2, within: true });
        expect(await onA.take('k')).toMatchObject({ consumed: 3, within: true });
        const over = await onB.take('k');
        expect(over).toMatchObject({ consumed: 4, within: false });
        expect(over.msBeforeReset).toBeGreaterThan(50_000);
        expect(over.msBeforeReset).toBeLessThanOrEqual(60_000);
        expect(await onA.peek('k')).toMatchObject({ consumed: 4 });
        expect(await onA.peek('k')).toMatchObject({ consumed: 4 });

        await onB.give('k');
        expect(await onA.peek('k')).toMatchObject({ consumed: 3 });
        // Another key, and another limiter name over the same key, are counted apart.
        expect(await onA.take('other')).toMatchObject({ consumed: 1, within: true });
        expect(await a.limiter({ name: 'else', points: 3, durationSeconds: 60 }).peek('k')).toBeNull();

        await onA.reset('k');
        expect(await onB.peek('k')).toBeNull();
        expect(await onB.take('k')).toMatchObject({ consumed: 1, within: true });
      });

      it('blocks a key for the given seconds whatever it counted, and forgets the count when the window ends', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix);
        const other = await connected(prefix);
        const limiter = a.limiter({ name: 'short', points: 5, durationSeconds: 1 });
        await limiter.block('locked', 30);
        const blocked = await other.limiter({ name: 'short', points: 5, durationSeconds: 1 }).take('locked');
        expect(blocked.within).toBe(false);
        expect(blocked.msBeforeReset).toBeGreaterThan(20_000);

        expect(await limiter.take('brief')).toMatchObject({ consumed: 1, within: true });
        await vi.waitFor(async () => expect(await limiter.peek('brief')).toBeNull(), WAIT);
        expect(await limiter.take('brief')).toMatchObject({ consumed: 1, within: true });
      });
    });

    describe('remembered facts', () => {
      it('recalls what another store remembered until its time to live ends', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        await a.remember('user:alice', 'patron-1', 1);
        await a.remember('user:bob', 'patron-2', 600);
        expect(await b.recall('user:alice')).toBe('patron-1');
        expect(await raw.ttl(`${prefix}fact:user:alice`)).toBeLessThanOrEqual(1);
        expect(await b.recall('user:nobody')).toBeNull();
        await vi.waitFor(async () => expect(await b.recall('user:alice')).toBeNull(), WAIT);
        expect(await b.recall('user:bob')).toBe('patron-2');
        expect(await (await connected(newPrefix())).recall('user:bob')).toBeNull();
      });
    });

    describe('item invalidation', () => {
      it('is heard by every other store on the prefix, not by the publisher itself, and not under another prefix', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const elsewhere = await connected(newPrefix());
        const heard = { a: [] as Invalidation[], b: [] as Invalidation[], elsewhere: [] as Invalidation[] };
        a.onInvalidation((each) => heard.a.push(each));
        b.onInvalidation((each) => heard.b.push(each));
        elsewhere.onInvalidation((each) => heard.elsewhere.push(each));

        await a.publishInvalidation({ item: 'it-1', outcomeUnknown: true });
        await vi.waitFor(() => expect(heard.b).toEqual([{ item: 'it-1', outcomeUnknown: true }]), WAIT);
        // Redis delivers one channel's messages in order: once a hears b's, it would have heard its own echo before.
        await b.publishInvalidation({ item: 'it-2', outcomeUnknown: false });
        await vi.waitFor(() => expect(heard.a).toEqual([{ item: 'it-2', outcomeUnknown: false }]), WAIT);
        expect(heard.b).toEqual([{ item: 'it-1', outcomeUnknown: true }]);
        // An account (the account window's key, a digest) travels the same way.
        await a.publishInvalidation({ patron: 'digest-of-alice', outcomeUnknown: false });
        await vi.waitFor(
          () =>
            expect(heard.b).toEqual([
              { item: 'it-1', outcomeUnknown: true },
              { patron: 'digest-of-alice', outcomeUnknown: false },
            ]),
          WAIT,
        );
        expect(heard.elsewhere).toEqual([]);
      });

      it('ignores messages on its channel that are not invalidations', async () => {
        const prefix = newPrefix();
        const b = await connected(prefix);
        const heard: Invalidation[] = [];
        b.onInvalidation((each) => heard.push(each));
        const channel = `${prefix}item-invalidated`;
        await raw.publish(channel, 'not json');
        await raw.publish(channel, '{"item":5}');
        await raw.publish(channel, 'null');
        await raw.publish(channel, '{"patron":7}');
        await raw.publish(channel, JSON.stringify({ item: 'it-9', from: 'someone' }));
        await raw.publish(channel, JSON.stringify({ patron: 'p-digest', outcomeUnknown: true, from: 'someone' }));
        await vi.waitFor(
          () =>
            expect(heard).toEqual([
              { item: 'it-9', outcomeUnknown: false },
              { patron: 'p-digest', outcomeUnknown: true },
            ]),
          WAIT,
        );
      });
    });

    describe('leases', () => {
      it('counts the leases of a key across stores, forgets a released one, and lets an unreleased one go at its expiry', async () => {
        const prefix = newPrefix();
        const [a, b] = [await connected(prefix), await connected(prefix)];
        const onA = a.leases('test');
        const onB = b.leases('test');
        const first = await onA.take('k', 60_000);
        expect(first.held).toBe(1);
        // One whose holder dies: never released.
        expect((await onB.take('k', 800)).held).toBe(2);
        expect((await onA.take('other', 60_000)).held).toBe(1);
        await first.release();
        expect((await onA.take('k', 60_000)).held).toBe(2);
        await vi.waitFor(async () => {
          const probe = await onB.take('k', 60_000);
          await probe.release();
          // Only the lease taken after the release is left: the dead holder's went at its expiry.
          expect(probe.held).toBe(2);
        }, WAIT);
        await expect(first.release()).resolves.toBeUndefined();
        // The set itself expires with its leases, and names no key in clear but the one given.
        expect(await raw.pttl(`${prefix}lease:test:k`)).toBeLessThanOrEqual(60_000);
      });
    });

    describe('eviction policy', () => {
      it('refuses every operation while Redis may evict keys, says why and how to fix it, and serves once it may not', async () => {
        await raw.config('SET', 'maxmemory-policy', 'allkeys-lru');
        try {
          const prefix = newPrefix();
          const a = await connected(prefix);
          const refused = await a.recall('k').catch((error: unknown) => error);
          expect(refused).toBeInstanceOf(StoreUnavailable);
          expect((refused as StoreUnavailable).reason).toBe('misconfigured');
          for (const call of [() => a.sessions.create(session('p-1')), () => a.leases('x').take('k', 1000)]) {
            await expect(call()).rejects.toBeInstanceOf(StoreUnavailable);
          }
          const problem = a.health().problem;
          expect(problem).toContain('may evict keys (maxmemory-policy allkeys-lru)');
          expect(problem).toContain('CONFIG SET maxmemory-policy noeviction');
          // Nothing was written while refused.
          expect(await raw.keys(`${prefix}*`)).toEqual([]);
          await raw.config('SET', 'maxmemory-policy', 'volatile-ttl');
          await raw.config('SET', 'maxmemory-policy', 'noeviction');
          await answering(a);
          expect(await a.recall('k')).toBeNull();
        } finally {
          await raw.config('SET', 'maxmemory-policy', 'noeviction');
        }
      });

      it('reads the policy from INFO where CONFIG is not allowed, and refuses an evicting Redis all the same', async () => {
        await raw.config('SET', 'maxmemory-policy', 'volatile-lru');
        try {
          const a = storeAt(await restrictedUrl(['config']));
          await a.ready(5000);
          await expect(a.recall('k')).rejects.toMatchObject({ reason: 'misconfigured' });
          expect(a.health().problem).toContain('maxmemory-policy volatile-lru');
        } finally {
          await raw.config('SET', 'maxmemory-policy', 'noeviction');
        }
      });

      it('serves where neither CONFIG nor INFO is allowed, and warns that it cannot tell', async () => {
        const a = storeAt(await restrictedUrl(['config', 'info']));
        await a.ready(5000);
        expect(await a.recall('k')).toBeNull();
        const health = a.health();
        expect(health.problem).toBeNull();
        expect(health.warning).toContain('cannot read the eviction policy');
        expect(health.warning).toContain('noeviction');
      });
    });

    // Stops and restarts the Redis of this block: kept last, and each test leaves it running.
    describe('while Redis is down', () => {
      /** Every kind of operation the gateway uses, each of which must fail as StoreUnavailable. */
      function operations(target: RedisStore, token: string): Array<[string, () => Promise<unknown>]> {
        const limiter = target.limiter({ name: 'down', points: 3, durationSeconds: 60 });
        return [
          ['sessions.get', () => target.sessions.get(token)],
          ['sessions.create', () => target.sessions.create(session('p-1'))],
          ['sessions.delete', () => target.sessions.delete(token)],
          ['sessions.deleteAllFor', () => target.sessions.deleteAllFor('p-1')],
          ['limiter.take', () => limiter.take('k')],
          ['limiter.peek', () => limiter.peek('k')],
          ['limiter.block', () => limiter.block('k', 10)],
          ['remember', () => target.remember('k', 'v', 10)],
          ['recall', () => target.recall('k')],
          ['publishInvalidation', () => target.publishInvalidation({ item: 'it-1', outcomeUnknown: false })],
          ['leases.take', () => target.leases('down').take('k', 1000)],
        ];
      }

      /** The failure of `call` and how long it took. */
      async function failure(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
        const started = performance.now();
        try {
          await call();
        } catch (error) {
          return { error, ms: performance.now() - started };
        }
        throw new Error('the operation succeeded while Redis was down');
      }

      it('fails every operation with StoreUnavailable, at once, while Redis is stopped, names the store in health(), and works again after a restart', async () => {
        const prefix = newPrefix();
        const a = await connected(prefix);
        const b = await connected(prefix);
        const failed: string[] = [];
        a.observe((operation, _seconds, ok) => {
          if (!ok) failed.push(operation);
        });
        const token = await a.sessions.create(session('p-1'));
        const heard: Invalidation[] = [];
        b.onInvalidation((each) => heard.push(each));

        await redis.stop();
        try {
          for (const [name, call] of operations(a, token)) {
            const { error, ms } = await failure(call);
            expect(error, name).toBeInstanceOf(StoreUnavailable);
            expect((error as StoreUnavailable).reason, name).toBe('unreachable');
            expect((error as StoreUnavailable).retryAfterSeconds, name).toBeGreaterThanOrEqual(1);
            expect(ms, name).toBeLessThan(COMMAND_TIMEOUT_MS + FAILURE_MARGIN_MS);
          }
          expect(failed.length).toBeGreaterThanOrEqual(operations(a, token).length);
          // The connection's state follows the socket's close a moment after the first write fails.
          await vi.waitFor(
            () => expect(a.health().problem).toContain(`the Redis state store at ${redis.url} is not connected`),
            WAIT,
          );
          expect(a.health().errors).toBeGreaterThanOrEqual(failed.length);
        } finally {
          await redis.restart();
        }

        await answering(a);
        await answering(b);
        // An empty Redis (no persistence): the session is gone, and new ones work.
        expect(await a.sessions.get(token)).toBeNull();
        const again = await a.sessions.create(session('p-1'));
        expect(await b.sessions.get(again)).not.toBeNull();
        // The subscriber came back subscribed.
        await vi.waitFor(async () => {
          await a.publishInvalidation({ item: 'after-restart', outcomeUnknown: false });
          expect(heard).toContainEqual({ item: 'after-restart', outcomeUnknown: false });
        }, WAIT);
      });

      it('fails an operation with StoreUnavailable (timeout) within the command timeout while Redis hangs, and answers once it runs again', async () => {
        const a = await connected(newPrefix());
        const token = await a.sessions.create(session('p-1'));
        await redis.pause();
        let measured: number;
        try {
          const { error, ms } = await failure(() => a.sessions.get(token));
          measured = ms;
          expect(error).toBeInstanceOf(StoreUnavailable);
          expect((error as StoreUnavailable).reason).toBe('timeout');
          expect(ms).toBeGreaterThanOrEqual(COMMAND_TIMEOUT_MS - 50);
          expect(ms).toBeLessThan(COMMAND_TIMEOUT_MS + FAILURE_MARGIN_MS);
        } finally {
          await redis.resume();
        }
        console.log(
          `${kind.name}: a read against a hung Redis failed after ${Math.round(measured)} ms (command timeout ${COMMAND_TIMEOUT_MS} ms)`,
        );
        await vi.waitFor(async () => expect(await a.sessions.get(token)).not.toBeNull(), WAIT);
      });

      it('lets a store made while Redis is down report why, then serve and hear invalidations once Redis is up', async () => {
        const prefix = newPrefix();
        await redis.stop();
        const late = store(prefix);
        try {
          const started = performance.now();
          await expect(late.ready(2000)).rejects.toBeInstanceOf(StoreUnavailable);
          expect(performance.now() - started).toBeLessThan(2000 + FAILURE_MARGIN_MS);
          expect(late.health().problem).toContain(`the Redis state store at ${redis.url} is not connected`);
          await expect(late.recall('k')).rejects.toBeInstanceOf(StoreUnavailable);
        } finally {
          await redis.restart();
        }
        await answering(late);
        const heard: Invalidation[] = [];
        late.onInvalidation((each) => heard.push(each));
        const other = await connected(prefix);
        const token = await other.sessions.create(session('p-1'));
        expect(await late.sessions.get(token)).not.toBeNull();
        await vi.waitFor(async () => {
          await other.publishInvalidation({ item: 'it-late', outcomeUnknown: false });
          expect(heard).toContainEqual({ item: 'it-late', outcomeUnknown: false });
        }, WAIT);
      });

      it('closes cleanly while its subscriber, reconnected after a network drop, still waits for the answer to its SUBSCRIBE', async () => {
        const upstream = new URL(redis.url);
        const links = new Set<Socket>();
        let holdSubscribeAnswers = false;
        let resubscribed: () => void = () => {};
        const resubscribing = new Promise<void>((resolve) => {
          resubscribed = resolve;
        });
        // Between the store and Redis: passes everything, except that once told to, a connection that sends
        // SUBSCRIBE never gets Redis's answer (a drop that comes back half-way).
        const proxy = createServer((client) => {
          const server = connect(Number(upstream.port), upstream.hostname);
          let held = false;
          links.add(client).add(server);
          client.on('data', (chunk) => {
            if (holdSubscribeAnswers && /subscribe/i.test(chunk.toString('latin1'))) {
              held = true;
              resubscribed();
            }
            server.write(chunk);
          });
          server.on('data', (chunk) => {
            if (!held) client.write(chunk);
          });
          for (const socket of [client, server]) {
            socket.on('error', () => {});
            socket.on('close', () => {
              client.destroy();
              server.destroy();
            });
          }
        });
        await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
        const unhandled: unknown[] = [];
        const onUnhandled = (reason: unknown) => unhandled.push(reason);
        process.on('unhandledRejection', onUnhandled);
        try {
          const through = new URL(redis.url);
          through.port = String((proxy.address() as AddressInfo).port);
          const a = storeAt(through.toString());
          await a.ready(5000);
          holdSubscribeAnswers = true;
          for (const socket of links) socket.destroy();
          await resubscribing;
          await a.close();
          // A rejection nobody handles is reported after the microtasks of its turn.
          await new Promise((resolve) => setTimeout(resolve, 100));
          expect(unhandled).toEqual([]);
        } finally {
          process.off('unhandledRejection', onUnhandled);
          for (const socket of links) socket.destroy();
          await new Promise((resolve) => proxy.close(resolve));
        }
      });

      it('closes without waiting for a Redis that is down', async () => {
        const a = await connected(newPrefix());
        await redis.kill();
        try {
          const started = performance.now();
          await a.close();
          expect(performance.now() - started).toBeLessThan(COMMAND_TIMEOUT_MS + FAILURE_MARGIN_MS);
        } finally {
          await redis.restart();
        }
      });
    });
  });
}
