import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';

function setup(freeAttemptsPerUser = 3, freeAttemptsPerAddress = 10) {
  let now = 1_000_000;
  const throttle = new LoginThrottle({
    freeAttemptsPerUser,
    freeAttemptsPerAddress,
    baseDelayMs: 1000,
    maxDelayMs: 8000,
    now: () => now,
  });
  return {
    throttle,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** A login the ILS rejects: begun, then failed (as the login route does). */
function fail(throttle: LoginThrottle, user: string, address?: string): void {
  const gate = throttle.begin(user, address);
  if (!gate.allowed) throw new Error('locked');
  gate.attempt.failed();
}

describe('LoginThrottle', () => {
  it('allows the free attempts, then locks with doubling delays up to the cap', () => {
    const { throttle, advance } = setup();
    for (let i = 0; i < 3; i++) fail(throttle, 'alice');
    expect(throttle.begin('alice')).toMatchObject({ allowed: false, retryAfterSeconds: 1, reason: 'locked' });
    advance(1000);
    fail(throttle, 'alice');
    expect(throttle.begin('alice')).toMatchObject({ allowed: false, retryAfterSeconds: 2, reason: 'locked' });
    advance(2000);
    fail(throttle, 'ALICE '); // same username, other spelling
    expect(throttle.begin('alice')).toMatchObject({ allowed: false, retryAfterSeconds: 4, reason: 'locked' });
    advance(4000);
    fail(throttle, 'alice');
    advance(8000);
    fail(throttle, 'alice');
    expect(throttle.begin('alice')).toMatchObject({ allowed: false, retryAfterSeconds: 8, reason: 'locked' }); // capped
    expect(throttle.begin('bob').allowed).toBe(true); // other users unaffected
  });

  it('counts an attempt from its start, so parallel guesses do not slip through', () => {
    const { throttle } = setup();
    const gates = Array.from({ length: 5 }, () => throttle.begin('alice'));
    expect(gates.map((g) => g.allowed)).toEqual([true, true, true, false, false]);
  });

  it('clears the username on success, takes back an attempt the ILS never judged', () => {
    const { throttle } = setup();
    fail(throttle, 'alice');
    fail(throttle, 'alice');
    const ok = throttle.begin('alice');
    if (!ok.allowed) throw new Error('locked');
    ok.attempt.succeeded();
    for (let i = 0; i < 3; i++) fail(throttle, 'alice');
    expect(throttle.begin('alice').allowed).toBe(false);

    const other = setup();
    for (let i = 0; i < 5; i++) {
      const gate = other.throttle.begin('carol');
      if (!gate.allowed) throw new Error('locked');
      gate.attempt.undo(); // backend down: never counted
    }
    expect(other.throttle.begin('carol').allowed).toBe(true);
  });

  it('counts per client address too, and success there does not reset it', () => {
    const { throttle } = setup(100, 3);
    fail(throttle, 'u1', '10.0.0.1');
    fail(throttle, 'u2', '10.0.0.1');
    const ok = throttle.begin('alice', '10.0.0.1');
    if (!ok.allowed) throw new Error('locked');
    ok.attempt.succeeded(); // takes back only its own attempt
    fail(throttle, 'u3', '10.0.0.1');
    expect(throttle.begin('u4', '10.0.0.1').allowed).toBe(false);
    expect(throttle.begin('u4', '10.0.0.2').allowed).toBe(true);
  });

  it('does not count logins in flight against their address: many patrons logging in at once from one discovery system', () => {
    const { throttle } = setup(3, 3);
    const inFlight = ['p1', 'p2', 'p3', 'p4', 'p5', 'p6'].map((user) => throttle.begin(user, '10.0.0.9'));
    expect(inFlight.every((gate) => gate.allowed)).toBe(true);
    for (const gate of inFlight) if (gate.allowed) gate.attempt.succeeded();
    expect(throttle.begin('p7', '10.0.0.9').allowed).toBe(true);
  });

  it('counts an address failure once the ILS has rejected it', () => {
    const { throttle } = setup(100, 2);
    const first = throttle.begin('u1', '10.0.0.3');
    const second = throttle.begin('u2', '10.0.0.3');
    expect(throttle.begin('u3', '10.0.0.3').allowed).toBe(true); // nothing failed yet
    if (!first.allowed || !second.allowed) throw new Error('locked');
    first.attempt.failed();
    second.attempt.failed();
    expect(throttle.begin('u4', '10.0.0.3')).toMatchObject({ allowed: false, reason: 'locked' });
  });
});
