/**
 * The pool's queueing, with fake connections and a fake clock: no sockets.
 * A FakeIls hands out sessions like a pre-forking SIP server: at most
 * `workers` at once; a login beyond that is not answered and times out the
 * way Sip2Connection.open would (IlsTimeout, reason login-timeout).
 */
import { EventEmitter } from 'node:events';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ConnectionClose } from '../../../src/sip2/connection.js';
import { CallCancelled, IlsProtocolError, IlsTimeout, IlsUnavailable, PoolRefused } from '../../../src/sip2/errors.js';
import { Sip2Pool } from '../../../src/sip2/pool/sip2-pool.js';
import type { PoolConnection, PoolOptions } from '../../../src/sip2/pool/types.js';
import type { RequestMessage, ResponseOf } from '../../../src/sip2/spec.js';

const LOGIN_TIMEOUT_MS = 1000;
const ANSWER_MS = 100;

const ITEM: RequestMessage = { code: '17', transactionDate: null, institutionId: 'DEMO', itemIdentifier: 'it-0010' };
const RENEW: RequestMessage = {
  code: '29',
  thirdPartyAllowed: false,
  noBlock: false,
  transactionDate: null,
  nbDueDate: null,
  institutionId: 'DEMO',
  patronIdentifier: 'alice',
  itemIdentifier: 'it-0002',
};

class FakeConnection extends EventEmitter<{ close: [ConnectionClose] }> implements PoolConnection {
  readonly createdAt = Date.now();
  servedRequest = false;
  readonly acsStatus = null;
  /** Messages sent on this session, in order. */
  readonly sent: string[] = [];
  private state: 'ready' | 'busy' | 'closed' = 'ready';
  private inFlight: { reject: (error: Error) => void; timer: NodeJS.Timeout | undefined } | null = null;

  /** The ILS's idle timeout on this session (FakeIls.idleTimeoutMs): it closes the session silent that long. */
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly id: number,
    private readonly ils: FakeIls,
  ) {
    super();
    this.quiet();
  }

  /** The session fell silent (logged in, or an answer sent): the ILS's idle timeout starts again. */
  private quiet(): void {
    clearTimeout(this.idleTimer);
    if (this.ils.idleTimeoutMs > 0) this.idleTimer = setTimeout(() => this.closeByPeer(), this.ils.idleTimeoutMs);
  }

  get isUsable(): boolean {
    return this.state === 'ready';
  }

  get isClosed(): boolean {
    return this.state === 'closed';
  }

  send<M extends RequestMessage>(message: M): Promise<ResponseOf<M['code']>> {
    if (this.state !== 'ready')
      throw new Error(
        `fake connection ${this.id} is ${this.state}: the pool handed out a connection that was not free`,
      );
    this.state = 'busy';
    clearTimeout(this.idleTimer);
    if (message.code !== '99') this.servedRequest = true;
    this.sent.push(message.code);
    this.ils.sent.push(message.code);
    this.ils.running++;
    this.ils.maxRunning = Math.max(this.ils.maxRunning, this.ils.running);
    return new Promise((resolve, reject) => {
      const failure = this.ils.failWith;
      const answer = () => {
        this.inFlight = null;
        this.ils.running--;
        if (this.state === 'busy') this.state = 'ready';
        this.quiet();
        if (failure) reject(failure);
        else resolve({ code: String(Number(message.code) + 1) } as ResponseOf<M['code']>);
      };
      // Manual: the test answers (answerNext), at a moment of its choosing relative to the pool's own timers.
      if (this.ils.manual) this.ils.held.push(answer);
      const timer = this.ils.manual ? undefined : setTimeout(answer, this.ils.answerMs);
      this.inFlight = {
        timer,
        reject: (error) => {
          clearTimeout(timer);
          this.ils.running--;
          reject(error);
        },
      };
    });
  }

  /** The ILS ends the session; `idle` is whether nothing was in flight. */
  closeByPeer(): void {
    this.end('closed by the ILS', true);
  }

  close(reason: string): void {
    this.end(reason, false);
  }

  destroy(reason: string): void {
    this.end(reason, false);
  }

  private end(reason: string, byPeer: boolean): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    clearTimeout(this.idleTimer);
    this.ils.sessions.delete(this);
    const flight = this.inFlight;
    this.inFlight = null;
    flight?.reject(new IlsUnavailable(byPeer ? 'closed' : 'dropped', `lost (${reason})`, { requestSent: true }));
    this.emit('close', { reason, idle: flight === null, byPeer });
    this.ils.onSessionEnded();
  }
}

class FakeIls {
  /** Sessions served at once; a login beyond gets no answer. */
  workers = Number.POSITIVE_INFINITY;
  /** 'refuse': connections are refused; 'reject-login': the 93 is answered 940; 'silent': no login is ever answered. */
  mode: 'serve' | 'refuse' | 'reject-login' | 'silent' = 'serve';
  answerMs = ANSWER_MS;
  /** Requests are answered only by answerNext(), not after answerMs. */
  manual = false;
  /** The ILS closes a session silent this long (its own idle timeout); 0 = never. */
  idleTimeoutMs = 0;
  /** Set: every request is answered with this error, the session staying usable. */
  failWith: Error | null = null;
  /** Answers of requests in flight in manual mode, oldest first. */
  readonly held: Array<() => void> = [];
  readonly sessions = new Set<FakeConnection>();
  readonly sent: string[] = [];
  connects = 0;
  /** Logins being answered (a microtask away from their session). */
  private starting = 0;
  running = 0;
  maxRunning = 0;
  private readonly waitingLogins: Array<() => void> = [];

  readonly connect = (id: number): Promise<PoolConnection> => {
    this.connects++;
    if (this.mode === 'refuse')
      return Promise.reject(new IlsUnavailable('refused', 'cannot connect to the ILS (ECONNREFUSED)'));
    if (this.mode === 'reject-login')
      return Promise.reject(new IlsUnavailable('login-rejected', 'the ILS rejected the SIP2 terminal login'));
    return new Promise((resolve, reject) => {
      const serve = () => {
        clearTimeout(timer);
        const connection = new FakeConnection(id, this);
        this.sessions.add(connection);
        resolve(connection);
      };
      // As Sip2Connection.open: the 93 gets no answer within the response timeout.
      const timer = setTimeout(() => {
        const index = this.waitingLogins.indexOf(serve);
        if (index !== -1) this.waitingLogins.splice(index, 1);
        reject(
          new IlsTimeout('login-timeout', 'the ILS did not answer the 93 of a new SIP2 session', { requestSent: true }),
        );
      }, LOGIN_TIMEOUT_MS);
      if (this.mode === 'serve' && this.sessions.size + this.starting < this.workers) {
        this.starting++;
        queueMicrotask(() => {
          this.starting--;
          serve();
        });
      } else if (this.mode === 'serve') {
        this.waitingLogins.push(serve);
      }
    });
  };

  /** Manual mode: answers the oldest request in flight. */
  answerNext(): void {
    this.held.shift()?.();
  }

  /** A worker is free again: the oldest login that waits is answered. */
  onSessionEnded(): void {
    if (this.sessions.size < this.workers) this.waitingLogins.shift()?.();
  }
}

function collectingLogger() {
  const lines: Array<Record<string, unknown> & { level: number; msg: string }> = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines, warnings: () => lines.filter((line) => line.level >= 40) };
}

let ils: FakeIls;
let log: ReturnType<typeof collectingLogger>;
const pools: Sip2Pool[] = [];

function makePool(overrides: Partial<PoolOptions> = {}): Sip2Pool {
  const pool = new Sip2Pool({
    connect: ils.connect,
    min: 1,
    max: 4,
    acquireTimeoutMs: 5000,
    maxWaiting: 100,
    keepaliveIntervalMs: 0,
    maxLifetimeMs: 0,
    backoff: { initialMs: 50, maxMs: 400 },
    circuit: { failureThreshold: 3, coolDownMs: { initial: 1000, max: 4000 } },
    logger: log.logger,
    ...overrides,
  });
  pools.push(pool);
  return pool;
}

/** Settles a promise without letting an unobserved rejection escape. */
function settle<T>(promise: Promise<T>): Promise<PromiseSettledResult<T>> {
  return promise.then(
    (value) => ({ status: 'fulfilled', value }),
    (reason: unknown) => ({ status: 'rejected', reason }),
  );
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  ils = new FakeIls();
  log = collectingLogger();
});

afterEach(() => {
  for (const pool of pools.splice(0)) pool.destroy();
  vi.useRealTimers();
});

describe('the pool queue with a worker-limited ILS', () => {
  it('serves waiting requests on the connection released meanwhile while a further login hangs, and counts no failure', async () => {
    ils.workers = 1;
    const pool = makePool({ min: 1, max: 4 });
    await pool.start();
    const calls = Array.from({ length: 6 }, () => settle(pool.send(ITEM)));
    // Six requests one after another on the one served session: well before the extra logins time out.
    await vi.advanceTimersByTimeAsync(6 * ANSWER_MS);
    const results = await Promise.all(calls);
    expect(results.map((r) => r.status)).toEqual(Array(6).fill('fulfilled'));
    expect(ils.sent.filter((code) => code === '17')).toHaveLength(6);
    expect(ils.connects).toBe(4); // the first, plus three opened beside the queue whose logins hang
    await vi.advanceTimersByTimeAsync(LOGIN_TIMEOUT_MS);
    expect(pool.stats()).toMatchObject({
      connections: 1,
      sessionLimit: 1,
      consecutiveFailures: 0,
      connectFailures: 0,
      circuit: 'closed',
    });
  });

  it('learns how many sessions the ILS serves, stops growing past it and says so once with advice', async () => {
    ils.workers = 2;
    const pool = makePool({ min: 0, max: 4 });
    const first = Array.from({ length: 8 }, () => settle(pool.send(ITEM)));
    await vi.advanceTimersByTimeAsync(LOGIN_TIMEOUT_MS + 8 * ANSWER_MS);
    expect((await Promise.all(first)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(pool.stats().sessionLimit).toBe(2);
    const connectsBefore = ils.connects;

    const second = Array.from({ length: 8 }, () => settle(pool.send(ITEM)));
    await vi.advanceTimersByTimeAsync(8 * ANSWER_MS);
    expect((await Promise.all(second)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(ils.connects, 'no login is tried past the learned limit').toBe(connectsBefore);
    expect(ils.maxRunning).toBe(2);
    const advice = log.warnings().filter((line) => /serves only 2 SIP2 sessions/.test(line.msg));
    expect(advice).toHaveLength(1);
    expect(advice[0]!.msg).toMatch(/sip2\.pool\.max to 2/);
    expect(advice[0]!.msg).toMatch(/SIPconfig\.xml/);
  });

  it('tries to grow past a learned limit again once sessionLimitRetryMs has passed', async () => {
    ils.workers = 1;
    const pool = makePool({ min: 1, max: 2, sessionLimitRetryMs: 60_000 });
    await pool.start();
    void settle(pool.send(ITEM));
    void settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(LOGIN_TIMEOUT_MS);
    expect(pool.stats().sessionLimit).toBe(1);
    ils.workers = 2;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(pool.stats().sessionLimit).toBeNull();
    const calls = [settle(pool.send(ITEM)), settle(pool.send(ITEM))];
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await Promise.all(calls)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(pool.stats().connections).toBe(2);
  });

  it('fails the waiting requests at once, as not sent, when a login hangs and no other connection works', async () => {
    ils.mode = 'silent';
    const pool = makePool({ min: 0, max: 2 });
    const call = settle(pool.send(RENEW));
    await vi.advanceTimersByTimeAsync(LOGIN_TIMEOUT_MS);
    const result = await call;
    expect(result.status).toBe('rejected');
    const error = (result as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(IlsTimeout);
    expect(error).toMatchObject({ reason: 'login-timeout', requestSent: false });
    expect(pool.stats().consecutiveFailures).toBeGreaterThan(0);
  });

  it('fails waiting requests with the connect error at once when the ILS refuses connections', async () => {
    ils.mode = 'refuse';
    const pool = makePool({ min: 0, max: 2, acquireTimeoutMs: 60_000 });
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(0);
    const result = await call;
    expect((result as PromiseRejectedResult).reason).toMatchObject({ reason: 'refused', requestSent: false });
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(IlsUnavailable);
  });
});

describe('the pool queue', () => {
  it('never runs more requests than there are free connections, whatever the queue holds', async () => {
    const pool = makePool({ min: 0, max: 3 });
    const calls = Array.from({ length: 20 }, () => settle(pool.send(ITEM)));
    await vi.advanceTimersByTimeAsync(20 * ANSWER_MS);
    expect((await Promise.all(calls)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(ils.maxRunning).toBe(3);
    expect(pool.stats()).toMatchObject({ connections: 3, created: 3, waiting: 0 });
  });

  it('refuses a request that would have to wait beyond maxWaiting at once, and one that waits past the acquire timeout', async () => {
    const pool = makePool({ min: 1, max: 1, maxWaiting: 1, acquireTimeoutMs: 150 });
    await pool.start();
    ils.answerMs = 400;
    const running = settle(pool.send(ITEM));
    const waiting = settle(pool.send(ITEM));
    const refused = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(0);
    expect((await refused).status).toBe('rejected');
    expect(((await refused) as PromiseRejectedResult).reason).toMatchObject({ reason: 'queue-full' });
    await vi.advanceTimersByTimeAsync(150);
    expect(((await waiting) as PromiseRejectedResult).reason).toBeInstanceOf(PoolRefused);
    expect(((await waiting) as PromiseRejectedResult).reason).toMatchObject({
      reason: 'acquire-timeout',
      requestSent: false,
    });
    await vi.advanceTimersByTimeAsync(400);
    expect((await running).status).toBe('fulfilled');
    expect(ils.sent.filter((code) => code === '17')).toHaveLength(1);
  });

  it('gives up on each waiting request acquireTimeoutMs after it came, not when an earlier one gave up', async () => {
    const pool = makePool({ min: 1, max: 1, acquireTimeoutMs: 150 });
    await pool.start();
    ils.answerMs = 1000;
    const running = settle(pool.send(ITEM));
    let firstDone = false;
    let secondDone = false;
    const first = settle(pool.send(ITEM)).finally(() => {
      firstDone = true;
    });
    await vi.advanceTimersByTimeAsync(100);
    const second = settle(pool.send(ITEM)).finally(() => {
      secondDone = true;
    });
    await vi.advanceTimersByTimeAsync(60); // t = 160: the first waited 160 ms, the second 60
    expect([firstDone, secondDone]).toEqual([true, false]);
    expect(((await first) as PromiseRejectedResult).reason).toMatchObject({ reason: 'acquire-timeout' });
    await vi.advanceTimersByTimeAsync(80); // t = 240: the second waited 140 ms
    expect(secondDone).toBe(false);
    await vi.advanceTimersByTimeAsync(20); // t = 260: 160 ms
    expect(((await second) as PromiseRejectedResult).reason).toMatchObject({ reason: 'acquire-timeout' });
    await vi.advanceTimersByTimeAsync(1000);
    expect((await running).status).toBe('fulfilled');
    expect(pool.stats().waiting).toBe(0);
  });

  it('sends a keepalive only once a connection has been idle for the whole interval, however long it was busy before', async () => {
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 1000 });
    await pool.start();
    // Busy across several intervals, with idle gaps shorter than one.
    for (let round = 0; round < 8; round++) {
      const call = settle(pool.send(ITEM));
      await vi.advanceTimersByTimeAsync(ANSWER_MS + 300);
      expect((await call).status).toBe('fulfilled');
    }
    expect(ils.sent).not.toContain('99');
    await vi.advanceTimersByTimeAsync(700); // 1000 ms idle since the last answer
    expect(ils.sent.filter((code) => code === '99')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(ANSWER_MS + 1000); // idle again for a whole interval after the 99
    expect(ils.sent.filter((code) => code === '99')).toHaveLength(2);
  });

  it('re-arms the keepalive of a connection that was busy when it came due: one 99 a whole interval after the answer', async () => {
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 1000 });
    await pool.start();
    ils.answerMs = 1500; // busy across the moment its keepalive comes due
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(1500);
    expect((await call).status).toBe('fulfilled');
    expect(ils.sent).toEqual(['17']);
    ils.answerMs = ANSWER_MS;
    await vi.advanceTimersByTimeAsync(999);
    expect(ils.sent).toEqual(['17']);
    await vi.advanceTimersByTimeAsync(1);
    expect(ils.sent).toEqual(['17', '99']);
  });

  it('keeps a connection a keepalive holds out of the count, and the request waits for it rather than opening another', async () => {
    const pool = makePool({ min: 1, max: 2, keepaliveIntervalMs: 1000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(1000); // the keepalive 99 is now in flight
    expect(ils.sent).toEqual(['99']);
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS * 2);
    expect((await call).status).toBe('fulfilled');
    expect(ils.sent).toEqual(['99', '17']);
    expect(ils.connects).toBe(1);
  });
});

describe('idle closes and the circuit', () => {
  it('treats the ILS closing an idle connection as normal: no circuit count, no warning, replaced when needed', async () => {
    const pool = makePool({ min: 1, max: 2 });
    await pool.start();
    for (let round = 0; round < 10; round++) {
      for (const session of [...ils.sessions]) session.closeByPeer();
      const call = settle(pool.send(ITEM));
      await vi.advanceTimersByTimeAsync(ANSWER_MS);
      expect((await call).status).toBe('fulfilled');
    }
    expect(pool.stats()).toMatchObject({ circuit: 'closed', consecutiveFailures: 0, connectFailures: 0 });
    expect(log.warnings()).toEqual([]);
    expect(log.lines.filter((line) => /closes idle SIP2 sessions/.test(line.msg))).toHaveLength(1);
  });

  it('counts a connection lost with a request in flight as a failure of that request', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    const call = settle(pool.send(RENEW));
    await vi.advanceTimersByTimeAsync(10);
    [...ils.sessions][0]!.closeByPeer();
    const result = await call;
    expect((result as PromiseRejectedResult).reason).toMatchObject({ reason: 'closed', requestSent: true });
    expect(pool.stats().consecutiveFailures).toBe(1);
  });

  it('retires the idle sessions when one is found dead mid-request, so the retried read runs on a new one', async () => {
    const pool = makePool({ min: 2, max: 2 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.stats().connections).toBe(2);
    const [first, second] = [...ils.sessions];
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(10);
    first!.closeByPeer(); // the ILS restarted: this close reached us with the read in flight, the other one's not yet
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await call).status).toBe('fulfilled');
    expect(second!.isClosed).toBe(true);
    expect(second!.sent).toEqual([]);
    expect(first!.sent).toEqual(['17']);
    expect(
      ils.sent.filter((code) => code === '17'),
      'sent once, retried once on a session opened after the failure',
    ).toHaveLength(2);
    expect(ils.connects).toBeGreaterThanOrEqual(3);
  });

  it('a keepalive that meets an idle close on its way is no failure either', async () => {
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 500 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(500);
    [...ils.sessions][0]!.closeByPeer(); // the 99 is in flight: the ILS's timeout and the keepalive crossed
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.stats()).toMatchObject({ consecutiveFailures: 0, circuit: 'closed' });
    expect(log.warnings()).toEqual([]);
  });

  it('a successful login counts as success: failures before it do not add up to an open circuit', async () => {
    const pool = makePool({ min: 0, max: 1 });
    for (let round = 0; round < 5; round++) {
      const call = settle(pool.send(RENEW)); // a write: not tried again
      await vi.advanceTimersByTimeAsync(10);
      for (const session of [...ils.sessions]) session.closeByPeer(); // in flight: a failure
      await call;
      expect(pool.stats().consecutiveFailures, `round ${round}`).toBe(1);
    }
    expect(pool.stats().circuit).toBe('closed');
  });

  it('opens the circuit after repeated failures, fails waiting work at once, and closes it with a probe on a new session', async () => {
    ils.mode = 'refuse';
    const pool = makePool({ min: 0, max: 1 });
    for (let i = 0; i < 3; i++) await settle(pool.send(ITEM));
    expect(pool.stats().circuit).toBe('open');
    const refused = await settle(pool.send(ITEM));
    expect((refused as PromiseRejectedResult).reason).toMatchObject({ reason: 'circuit-open' });
    ils.mode = 'serve';
    await vi.advanceTimersByTimeAsync(1000);
    expect(pool.stats().circuit).toBe('closed');
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await call).status).toBe('fulfilled');
  });
});

describe('an ILS that closes idle sessions sooner than the keepalive', () => {
  const learned = () => log.lines.filter((line) => /keepalives now go every/.test(line.msg));

  it('learns its idle timeout from two closes, keeps the sessions open with keepalives at half of it, says so once', async () => {
    ils.idleTimeoutMs = 3000;
    const pool = makePool({ min: 2, max: 2, keepaliveIntervalMs: 20_000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.stats()).toMatchObject({ connections: 2, keepaliveIntervalMs: 20_000 });
    // One session busy a while: the two fall silent at different moments, so their closes come apart.
    await vi.advanceTimersByTimeAsync(1000);
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await call).status).toBe('fulfilled');
    await vi.advanceTimersByTimeAsync(2000); // the other one's 3 s: closed, replaced, nothing learned from one close
    expect(pool.stats().keepaliveIntervalMs).toBe(20_000);
    expect(learned()).toEqual([]);
    await vi.advanceTimersByTimeAsync(1200); // the busy one's 3 s since its answer: the same timeout, measured again
    expect(pool.stats().keepaliveIntervalMs).toBe(1500);
    const [line] = learned();
    expect(line).toMatchObject({ level: 30, idleTimeoutMs: 3000, keepaliveMs: 1500, configuredKeepaliveMs: 20_000 });
    expect(line!.msg).toContain(
      'after about 3 s, sooner than sip2.pool.keepaliveMs (20000): keepalives now go every 1.5 s',
    );
    expect(line!.msg).toContain('Set sip2.pool.keepaliveMs to 1500 (PAIA_SIP2_POOL_KEEPALIVE_MS)');
    // The replacement opened before the learning keeps its session too: its timer was set anew.
    await vi.advanceTimersByTimeAsync(1000);
    const connects = ils.connects;
    const keepalives = ils.sent.filter((code) => code === '99').length;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(ils.connects, 'no new login while idle').toBe(connects);
    expect(ils.sent.filter((code) => code === '99').length - keepalives).toBeGreaterThanOrEqual(2 * 19);
    expect(pool.stats().connections).toBe(2);
    expect(learned()).toHaveLength(1);
    expect(log.lines.filter((line) => /closes idle SIP2 sessions/.test(line.msg))).toHaveLength(1);
    expect(log.warnings()).toEqual([]);
  });

  it('rounds a learned keepalive down to whole tenths of a second: closes measured a few ms late still give 1500', async () => {
    // What a busy event loop measures: the ILS's 3 s, and a few milliseconds of its own.
    ils.idleTimeoutMs = 3007;
    const pool = makePool({ min: 2, max: 2, keepaliveIntervalMs: 20_000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(1000);
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await call).status).toBe('fulfilled');
    await vi.advanceTimersByTimeAsync(3300);
    expect(pool.stats().keepaliveIntervalMs).toBe(1500);
    expect(learned()[0]!.msg).toContain('Set sip2.pool.keepaliveMs to 1500 (PAIA_SIP2_POOL_KEEPALIVE_MS)');
  });

  it('learns nothing from sessions ended at one moment, each idle for another while (an ILS restart)', async () => {
    const pool = makePool({ min: 3, max: 3, keepaliveIntervalMs: 20_000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(0);
    for (let round = 0; round < 2; round++) {
      await vi.advanceTimersByTimeAsync(1000);
      const call = settle(pool.send(ITEM));
      await vi.advanceTimersByTimeAsync(ANSWER_MS);
      await call;
    }
    for (const session of [...ils.sessions]) session.closeByPeer();
    await vi.advanceTimersByTimeAsync(5000);
    expect(pool.stats()).toMatchObject({ connections: 3, keepaliveIntervalMs: 20_000 });
    expect(learned()).toEqual([]);
  });

  it('learns nothing from two ILS restarts an hour apart that ended sessions idle for about the same while', async () => {
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 20_000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(0);
    /** Waits for the next keepalive to be answered, then ends the session (an ILS restart) `idleMs` later. */
    const restartIdleFor = async (idleMs: number) => {
      const keepalives = ils.sent.filter((code) => code === '99').length;
      while (ils.sent.filter((code) => code === '99').length === keepalives) await vi.advanceTimersByTimeAsync(100);
      await vi.advanceTimersByTimeAsync(ANSWER_MS + idleMs);
      for (const session of [...ils.sessions]) session.closeByPeer();
      await vi.advanceTimersByTimeAsync(ANSWER_MS * 4);
    };
    await restartIdleFor(10_000);
    await vi.advanceTimersByTimeAsync(3_600_000);
    await restartIdleFor(8_060);
    // Keepalives after 20 s idle were answered all along: the ILS keeps idle sessions longer than 10 s.
    expect(pool.stats()).toMatchObject({ connections: 1, keepaliveIntervalMs: 20_000 });
    expect(learned()).toEqual([]);
  });

  it('keeps its keepalive against a timeout too short for one of at least 1 s, and gives the advice once', async () => {
    ils.idleTimeoutMs = 1000;
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 20_000 });
    await pool.start();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ils.connects).toBeGreaterThan(3);
    expect(pool.stats().keepaliveIntervalMs).toBe(20_000);
    expect(learned()).toEqual([]);
    expect(log.lines.filter((line) => /closes idle SIP2 sessions/.test(line.msg))).toHaveLength(1);
  });
});

describe('a refused terminal login', () => {
  it('reaches the waiting request as such, and the circuit it opens refuses requests naming it, until a login works', async () => {
    ils.mode = 'reject-login';
    const pool = makePool({ min: 0, max: 1 });
    const first = await settle(pool.send(ITEM));
    expect((first as PromiseRejectedResult).reason).toMatchObject({ reason: 'login-rejected', requestSent: false });
    for (let i = 0; i < 2; i++) await settle(pool.send(ITEM));
    expect(pool.stats().circuit).toBe('open');
    const refused = (await settle(pool.send(ITEM))) as PromiseRejectedResult;
    expect(refused.reason).toBeInstanceOf(PoolRefused);
    expect(refused.reason).toMatchObject({ reason: 'terminal-login-refused', retryAfterSeconds: 1 });
    // The probe meets an ILS that now refuses connections: the circuit says what failed last.
    ils.mode = 'refuse';
    await vi.advanceTimersByTimeAsync(1000);
    expect(pool.stats().circuit).toBe('open');
    expect(((await settle(pool.send(ITEM))) as PromiseRejectedResult).reason).toMatchObject({
      reason: 'circuit-open',
    });
    ils.mode = 'serve';
    await vi.advanceTimersByTimeAsync(2000);
    expect(pool.stats().circuit).toBe('closed');
  });
});

describe('callers that stop waiting', () => {
  it('takes a cancelled request out of the queue: it is never sent', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    const busy = settle(pool.send(ITEM));
    const controller = new AbortController();
    const cancelledCall = settle(pool.send(RENEW, { signal: controller.signal }));
    controller.abort('client-gone');
    await vi.advanceTimersByTimeAsync(ANSWER_MS * 3);
    const result = await cancelledCall;
    expect((result as PromiseRejectedResult).reason).toBeInstanceOf(CallCancelled);
    expect((result as PromiseRejectedResult).reason).toMatchObject({ reason: 'client-gone', requestSent: false });
    expect((await busy).status).toBe('fulfilled');
    expect(ils.sent).toEqual(['17']);
    expect(pool.stats()).toMatchObject({ waiting: 0, consecutiveFailures: 0 });
  });

  it('drains at once when the last waiting request gives up while nothing runs, instead of waiting out the drain timeout', async () => {
    ils.mode = 'silent';
    const pool = makePool({ min: 0, max: 1, acquireTimeoutMs: 200 });
    const call = settle(pool.send(ITEM));
    let closed = false;
    const closing = pool.close(5000).then(() => {
      closed = true;
    });
    await vi.advanceTimersByTimeAsync(250);
    expect((await call).status).toBe('rejected');
    expect(((await call) as PromiseRejectedResult).reason).toMatchObject({ reason: 'acquire-timeout' });
    expect(closed).toBe(true);
    await closing;
    expect(log.warnings().some((line) => /did not drain in time/.test(line.msg))).toBe(false);
  });

  it('drains at once when a failed login refuses the last waiting request while closing, instead of waiting out the drain timeout', async () => {
    ils.mode = 'silent';
    const pool = makePool({ min: 0, max: 1, acquireTimeoutMs: 60_000 });
    const call = settle(pool.send(ITEM));
    let closed = false;
    const closing = pool.close(5000).then(() => {
      closed = true;
    });
    await vi.advanceTimersByTimeAsync(LOGIN_TIMEOUT_MS + 10);
    expect(((await call) as PromiseRejectedResult).reason).toMatchObject({ reason: 'login-timeout' });
    expect(closed).toBe(true);
    await closing;
    expect(log.warnings().some((line) => /did not drain in time/.test(line.msg))).toBe(false);
  });

  it('answers a caller whose deadline passes mid-exchange at once; the write finishes, its outcome is logged, the connection comes back', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    const controller = new AbortController();
    const call = settle(pool.send(RENEW, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(10);
    controller.abort('deadline');
    const result = await call;
    expect((result as PromiseRejectedResult).reason).toMatchObject({
      code: 'CALL_CANCELLED',
      reason: 'deadline',
      requestSent: true,
    });
    expect(pool.stats().running).toBe(1); // the renew still holds its connection
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect(
      log
        .warnings()
        .some((line) => line.code === '29' && /finished after its caller had stopped waiting/.test(line.msg)),
    ).toBe(true);
    const next = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await next).status).toBe('fulfilled');
    expect(ils.connects).toBe(1);
  });

  it('refuses a request whose signal was aborted before it was made', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    const controller = new AbortController();
    controller.abort('deadline');
    const result = await settle(pool.send(ITEM, { signal: controller.signal }));
    expect((result as PromiseRejectedResult).reason).toMatchObject({ reason: 'deadline', requestSent: false });
    expect(ils.sent).toEqual([]);
  });
});

describe('scheduled pauses (maintenance windows)', () => {
  /** A pause from `start` to `end` (epoch ms) of the fake clock: a pure function of the time asked with. */
  const pauseBetween = (start: number, end: number) => (now: Date) =>
    now.getTime() >= start && now.getTime() < end ? { until: new Date(end), description: 'until 02:30 (UTC)' } : null;

  it('inside a pause: refuses at once with Retry-After to its end, opens no connection, and fills again after it', async () => {
    const start = Date.now();
    const pool = makePool({ min: 2, pause: pauseBetween(start, start + 90_000) });
    await pool.start();
    expect(ils.connects).toBe(0);
    const refused = await settle(pool.send(ITEM));
    expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(PoolRefused);
    expect((refused as PromiseRejectedResult).reason).toMatchObject({
      reason: 'maintenance',
      retryAfterSeconds: 90,
      message: 'the library system is in scheduled maintenance until 02:30 (UTC)',
    });
    expect(pool.stats()).toMatchObject({ paused: true, connections: 0 });
    await vi.advanceTimersByTimeAsync(60_000);
    expect(ils.connects).toBe(0);
    expect(pool.currentPause?.until.getTime()).toBe(start + 90_000);
    await vi.advanceTimersByTimeAsync(31_000);
    expect(pool.currentPause).toBeNull();
    expect(ils.connects).toBe(2);
    expect(pool.stats()).toMatchObject({ paused: false, connections: 2 });
    const served = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await served).status).toBe('fulfilled');
    expect(pool.stats().circuit).toBe('closed');
  });

  it('when a pause begins: idle sessions are closed, busy ones after their request, and nothing waits', async () => {
    const start = Date.now() + 5000;
    const pool = makePool({ min: 2, max: 2, pause: pauseBetween(start, start + 60_000) });
    await pool.start();
    expect(pool.stats().connections).toBe(2);
    await vi.advanceTimersByTimeAsync(5000 - ANSWER_MS / 2);
    // One request runs across the start of the pause: it finishes, its session is then closed.
    const running = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await running).status).toBe('fulfilled');
    expect(pool.stats()).toMatchObject({ connections: 0, paused: true });
    expect(ils.sessions.size).toBe(0);
    const connectsBefore = ils.connects;
    await vi.advanceTimersByTimeAsync(30_000);
    expect(ils.connects).toBe(connectsBefore);
    expect(log.lines.some((line) => /scheduled maintenance of the ILS until 02:30 \(UTC\)/.test(line.msg))).toBe(true);
  });
});

describe('direct hand-off to waiting requests', () => {
  it('hands a released connection straight to the first waiting request, in arrival order, never through the idle list', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    ils.manual = true;
    const order: string[] = [];
    const calls = ['a', 'b', 'c', 'd'].map((name) =>
      settle(pool.send(ITEM)).then((result) => {
        order.push(name);
        return result;
      }),
    );
    await vi.advanceTimersByTimeAsync(0);
    expect(pool.stats()).toMatchObject({ running: 1, waiting: 3, idle: 0 });
    for (let answered = 1; answered <= 4; answered++) {
      ils.answerNext();
      await vi.advanceTimersByTimeAsync(0);
      // The connection already carries the next request: it was never idle while one waited.
      expect(ils.held).toHaveLength(answered < 4 ? 1 : 0);
      expect(pool.stats()).toMatchObject({ waiting: Math.max(0, 3 - answered), idle: answered < 4 ? 0 : 1 });
    }
    expect((await Promise.all(calls)).every((r) => r.status === 'fulfilled')).toBe(true);
    expect(order).toEqual(['a', 'b', 'c', 'd']);
    expect(ils.connects).toBe(1);
  });

  for (const when of ['just before', 'just after'] as const) {
    it(`gives the connection to the next waiting request when the first one's caller gives up ${when} its release; none is lost or handed twice`, async () => {
      const pool = makePool({ min: 1, max: 1 });
      await pool.start();
      ils.manual = true;
      const caller = new AbortController();
      const running = pool.send(ITEM);
      const first = settle(pool.send(RENEW, { signal: caller.signal }));
      const second = settle(pool.send(ITEM));
      if (when === 'just before') {
        ils.answerNext(); // the release follows a few microtasks later, in this same step
        caller.abort('client-gone');
      } else {
        // The running request's caller hears of its answer right after the release handed the connection on.
        void running.then(() => caller.abort('client-gone'));
        ils.answerNext();
      }
      await vi.advanceTimersByTimeAsync(0);
      const cancelledCall = (await first) as PromiseRejectedResult;
      expect(cancelledCall.reason).toBeInstanceOf(CallCancelled);
      expect(cancelledCall.reason).toMatchObject({ requestSent: when === 'just after' });
      if (when === 'just after') {
        // The renew went out and finishes on the connection before the next request gets it.
        expect(ils.sent).toEqual(['17', '29']);
        ils.answerNext();
        await vi.advanceTimersByTimeAsync(0);
      }
      expect(ils.sent).toEqual(when === 'just after' ? ['17', '29', '17'] : ['17', '17']);
      ils.answerNext();
      await vi.advanceTimersByTimeAsync(0);
      expect((await second).status).toBe('fulfilled');
      expect(pool.stats()).toMatchObject({ connections: 1, idle: 1, running: 0, waiting: 0 });
      expect(ils.connects).toBe(1);
    });
  }

  it('a waiting request that times out at the moment of a release: the connection goes to the next one in line', async () => {
    const pool = makePool({ min: 1, max: 1, acquireTimeoutMs: 100 });
    await pool.start();
    ils.manual = true;
    const running = settle(pool.send(ITEM));
    const first = settle(pool.send(RENEW)); // the line's timer: due at t = 100
    await vi.advanceTimersByTimeAsync(50);
    const second = settle(pool.send(ITEM));
    // Due at t = 100 as well, and set after the line's timer: the timeout runs first, then the release.
    setTimeout(() => ils.answerNext(), 50);
    await vi.advanceTimersByTimeAsync(50);
    expect(((await first) as PromiseRejectedResult).reason).toMatchObject({
      reason: 'acquire-timeout',
      requestSent: false,
    });
    expect((await running).status).toBe('fulfilled');
    expect(ils.sent).toEqual(['17', '17']);
    ils.answerNext();
    await vi.advanceTimersByTimeAsync(0);
    expect((await second).status).toBe('fulfilled');
    expect(pool.stats()).toMatchObject({ connections: 1, idle: 1, running: 0, waiting: 0 });
  });

  it('a waiting request whose timeout comes due right after a release that reached it keeps the connection', async () => {
    const pool = makePool({ min: 1, max: 1, acquireTimeoutMs: 100 });
    await pool.start();
    ils.manual = true;
    const running = settle(pool.send(ITEM));
    // Due at t = 100 and set before the line's timer: the release runs first.
    setTimeout(() => ils.answerNext(), 100);
    const waiting = settle(pool.send(RENEW));
    await vi.advanceTimersByTimeAsync(100);
    expect((await running).status).toBe('fulfilled');
    expect(ils.sent).toEqual(['17', '29']);
    expect(pool.stats()).toMatchObject({ running: 1, waiting: 0, idle: 0 });
    await vi.advanceTimersByTimeAsync(1000); // its timeout is long past: it holds the connection, it no longer waits
    ils.answerNext();
    await vi.advanceTimersByTimeAsync(0);
    expect((await waiting).status).toBe('fulfilled');
    expect(pool.stats()).toMatchObject({ connections: 1, idle: 1, running: 0 });
  });
});

describe('housekeeping and waiting requests', () => {
  it('a keepalive coming due at the moment its connection is released to a waiting request does not take it', async () => {
    ils.manual = true;
    // Set before the pool's keepalive timer, both due at t = 1000: the release runs first.
    setTimeout(() => ils.answerNext(), 1000);
    const pool = makePool({ min: 1, max: 1, keepaliveIntervalMs: 1000 });
    await pool.start(); // idle from t = 0: its keepalive is due at t = 1000
    const first = settle(pool.send(ITEM)); // takes it; the keepalive timer runs on
    const waiting = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(1000);
    expect((await first).status).toBe('fulfilled');
    expect(ils.sent, 'the keepalive found the connection handed on, not idle').toEqual(['17', '17']);
    expect(pool.stats()).toMatchObject({ running: 1, waiting: 0, idle: 0 });
    ils.answerNext();
    await vi.advanceTimersByTimeAsync(0);
    expect((await waiting).status).toBe('fulfilled');
    await vi.advanceTimersByTimeAsync(1000); // idle for a whole interval now: the keepalive takes it
    expect(ils.sent).toEqual(['17', '17', '99']);
  });

  it('the circuit probe takes an idle connection and gives it back through release: the next request gets it, no new login', async () => {
    const pool = makePool({ min: 1, max: 1 });
    await pool.start();
    ils.failWith = new IlsProtocolError('unexpected-message', 'the ILS answered garbage', { requestSent: true });
    for (let i = 0; i < 3; i++) {
      const call = settle(pool.send(RENEW)); // a write: not tried again
      await vi.advanceTimersByTimeAsync(ANSWER_MS);
      expect((await call).status).toBe('rejected');
    }
    expect(pool.stats()).toMatchObject({ circuit: 'open', connections: 1, idle: 1 });
    ils.failWith = null;
    await vi.advanceTimersByTimeAsync(1000 + ANSWER_MS); // the cool-down (at most 1 s), then the probe's 99
    expect(ils.sent.filter((code) => code === '99')).toHaveLength(1);
    expect(pool.stats()).toMatchObject({ circuit: 'closed', connections: 1, idle: 1, running: 0 });
    const call = settle(pool.send(ITEM));
    await vi.advanceTimersByTimeAsync(ANSWER_MS);
    expect((await call).status).toBe('fulfilled');
    expect(ils.connects).toBe(1);
  });
});
