import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { startIdleTrim } from '../../src/idle-trim.js';

const INTERVAL = 1000;
const MB = 1024 * 1024;

/** A server's counters and a heap the test moves, with a trim that records its calls. */
function fixture(collect = vi.fn()) {
  const state = { requests: 0, inFlight: 0, heap: 40 * MB };
  const trim = startIdleTrim({
    activity: () => ({ requests: state.requests, inFlight: state.inFlight }),
    idleMs: INTERVAL,
    collect: () => {
      collect();
      state.heap = 45 * MB;
    },
    heapSize: () => state.heap,
    afterStartMs: null,
  });
  return { state, trim, collect };
}

describe('startIdleTrim', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('collects once after a whole quiet interval follows a burst that grew the heap, then not again while idle', () => {
    const { state, trim, collect } = fixture();
    state.requests = 500;
    state.heap = 80 * MB;
    vi.advanceTimersByTime(INTERVAL);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(INTERVAL);
    expect(collect).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(10 * INTERVAL);
    expect(collect).toHaveBeenCalledTimes(1);
    trim?.stop();
  });

  it('waits while requests keep coming or one is still in flight', () => {
    const { state, trim, collect } = fixture();
    state.heap = 80 * MB;
    for (let i = 0; i < 5; i++) {
      state.requests += 10;
      vi.advanceTimersByTime(INTERVAL);
    }
    expect(collect).not.toHaveBeenCalled();
    state.inFlight = 1;
    vi.advanceTimersByTime(3 * INTERVAL);
    expect(collect).not.toHaveBeenCalled();
    // The call that was running at the last check ended in this interval: a whole quiet one must follow.
    state.inFlight = 0;
    vi.advanceTimersByTime(INTERVAL);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(INTERVAL);
    expect(collect).toHaveBeenCalledTimes(1);
    trim?.stop();
  });

  it('counts an interval with a few probes as quiet: a load balancer checking /readyz every 2 s does not keep it from trimming', () => {
    const collect = vi.fn();
    let requests = 0;
    let heap = 40 * MB;
    const trim = startIdleTrim({
      activity: () => ({ requests, inFlight: 0 }),
      idleMs: 10_000,
      collect,
      heapSize: () => heap,
      afterStartMs: null,
    });
    requests += 1000;
    heap = 80 * MB;
    vi.advanceTimersByTime(10_000);
    expect(collect).not.toHaveBeenCalled();
    for (let second = 0; second < 10; second += 2) {
      requests += 1;
      vi.advanceTimersByTime(2000);
    }
    expect(collect).toHaveBeenCalledTimes(1);
    trim?.stop();
  });

  it('leaves a heap alone that grew by less than an eighth since the last trim', () => {
    const { state, trim, collect } = fixture();
    state.requests = 1;
    state.heap = 44 * MB;
    vi.advanceTimersByTime(2 * INTERVAL);
    expect(collect).not.toHaveBeenCalled();
    state.requests = 2;
    state.heap = 46 * MB;
    vi.advanceTimersByTime(2 * INTERVAL);
    expect(collect).toHaveBeenCalledTimes(1);
    trim?.stop();
  });

  it('trims what start-up left once, soon after the start, when nothing is in flight; then only after bursts', () => {
    const collect = vi.fn();
    let heap = 40 * MB;
    const trim = startIdleTrim({
      activity: () => ({ requests: 0, inFlight: 0 }),
      idleMs: 10_000,
      collect: () => {
        collect();
        heap = 20 * MB;
      },
      heapSize: () => heap,
      afterStartMs: 1000,
    });
    vi.advanceTimersByTime(999);
    expect(collect).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1);
    expect(collect).toHaveBeenCalledTimes(1);
    // The heap the checks compare against is what that trim left: 22 MB is not an eighth more than 20.
    heap = 22 * MB;
    vi.advanceTimersByTime(30_000);
    expect(collect).toHaveBeenCalledTimes(1);
    trim?.stop();
  });

  it('leaves start-up alone while a call is in flight or requests keep coming then, and trims nothing once stopped before it', () => {
    const collect = vi.fn();
    const busy = startIdleTrim({
      activity: () => ({ requests: 0, inFlight: 1 }),
      idleMs: 10_000,
      collect,
      heapSize: () => 40 * MB,
    });
    vi.advanceTimersByTime(5000);
    busy?.stop();
    // Already serving a second after the start (a worker replaced behind a load balancer): left to the checks.
    let requests = 0;
    const serving = startIdleTrim({
      activity: () => ({ requests, inFlight: 0 }),
      idleMs: 10_000,
      collect,
      heapSize: () => 40 * MB,
    });
    requests = 50;
    vi.advanceTimersByTime(5000);
    serving?.stop();
    const stopped = startIdleTrim({
      activity: () => ({ requests: 0, inFlight: 0 }),
      idleMs: 10_000,
      collect,
      heapSize: () => 40 * MB,
    });
    stopped?.stop();
    vi.advanceTimersByTime(5000);
    expect(collect).not.toHaveBeenCalled();
  });

  it('stops checking once stopped', () => {
    const { state, trim, collect } = fixture();
    trim?.stop();
    state.requests = 100;
    state.heap = 80 * MB;
    vi.advanceTimersByTime(5 * INTERVAL);
    expect(collect).not.toHaveBeenCalled();
  });

  it('does not start without a collection to run (node without --expose-gc)', () => {
    expect(startIdleTrim({ activity: () => ({ requests: 0, inFlight: 0 }), collect: null })).toBeNull();
  });

  it("uses node's gc() when it is there: the collection for memory pressure on Node 22 and later, a plain full one on Node 20", () => {
    const gc = vi.fn();
    vi.stubGlobal('gc', gc);
    try {
      let heap = 10 * MB;
      let requests = 0;
      const trim = startIdleTrim({
        activity: () => ({ requests, inFlight: 0 }),
        idleMs: INTERVAL,
        heapSize: () => heap,
        afterStartMs: null,
      });
      requests = 1;
      heap = 20 * MB;
      vi.advanceTimersByTime(2 * INTERVAL);
      trim?.stop();
      const v8Major = Number(process.versions.v8.split('.')[0]);
      expect(gc.mock.calls).toEqual(v8Major >= 12 ? [[{ type: 'major', flavor: 'last-resort' }]] : [[]]);
    } finally {
      vi.unstubAllGlobals();
    }
  });
});
