import { describe, expect, it } from 'vitest';
import { CircuitBreaker, type CircuitTransition } from '../../../src/sip2/circuit.js';

function breaker(options: { threshold?: number; initial?: number; max?: number; random?: number } = {}) {
  let now = 1_000_000;
  const transitions: CircuitTransition[] = [];
  const circuit = new CircuitBreaker(
    {
      failureThreshold: options.threshold ?? 3,
      coolDownMs: { initial: options.initial ?? 1000, max: options.max ?? 8000 },
    },
    { now: () => now, random: () => options.random ?? 1, onTransition: (t) => transitions.push(t) },
  );
  return {
    circuit,
    transitions,
    advance(ms: number) {
      now += ms;
    },
  };
}

describe('circuit breaker', () => {
  it('opens after N consecutive failures; a success in between resets the count', () => {
    const { circuit, transitions } = breaker({ threshold: 3 });
    circuit.recordFailure('a');
    circuit.recordFailure('b');
    circuit.recordSuccess();
    circuit.recordFailure('c');
    circuit.recordFailure('d');
    expect(circuit.state).toBe('closed');
    expect(circuit.consecutiveFailures).toBe(2);
    circuit.recordFailure('e');
    expect(circuit.state).toBe('open');
    expect(transitions).toEqual([{ from: 'closed', to: 'open', reason: 'e', failures: 3, trips: 1, probeInMs: 1000 }]);
  });

  it('refuses probes during the cool-down and tells how long to wait', () => {
    const { circuit, advance } = breaker({ threshold: 1, initial: 2500 });
    expect(circuit.retryAfterSeconds()).toBe(0);
    circuit.recordFailure('x');
    expect(circuit.msUntilProbe()).toBe(2500);
    expect(circuit.retryAfterSeconds()).toBe(3);
    expect(circuit.tryStartProbe()).toBe(false);
    advance(2400);
    expect(circuit.retryAfterSeconds()).toBe(1);
    expect(circuit.tryStartProbe()).toBe(false);
    advance(100);
    expect(circuit.tryStartProbe()).toBe(true);
    expect(circuit.state).toBe('half-open');
    expect(circuit.retryAfterSeconds()).toBe(1);
    // only one probe
    expect(circuit.tryStartProbe()).toBe(false);
  });

  it('half-open: the probe alone decides; stragglers are ignored', () => {
    const { circuit, advance } = breaker({ threshold: 1 });
    circuit.recordFailure('x');
    circuit.recordSuccess();
    expect(circuit.state).toBe('open');
    advance(1000);
    circuit.tryStartProbe();
    circuit.recordFailure('straggler');
    circuit.recordSuccess();
    expect(circuit.state).toBe('half-open');
    circuit.probeSucceeded();
    expect(circuit.state).toBe('closed');
    expect(circuit.consecutiveFailures).toBe(0);
  });

  it('grows the cool-down per failed probe up to the cap, and starts again from the base once a probe succeeds', () => {
    const { circuit, advance, transitions } = breaker({ threshold: 1, initial: 1000, max: 5000 });
    circuit.recordFailure('x');
    for (let i = 0; i < 4; i++) {
      advance(circuit.msUntilProbe());
      expect(circuit.tryStartProbe()).toBe(true);
      circuit.probeFailed('still down');
    }
    expect(transitions.filter((t) => t.to === 'open').map((t) => t.probeInMs)).toEqual([1000, 2000, 4000, 5000, 5000]);
    advance(circuit.msUntilProbe());
    circuit.tryStartProbe();
    circuit.probeSucceeded();
    expect(circuit.consecutiveTrips).toBe(0);
    // the ILS answers again: new trouble later waits the base cool-down, not the doubled one of the outage
    circuit.recordFailure('new trouble');
    expect(circuit.msUntilProbe()).toBe(1000);
  });

  it('jitters the cool-down between half and all of it', () => {
    const low = breaker({ threshold: 1, random: 0 });
    low.circuit.recordFailure('x');
    expect(low.circuit.msUntilProbe()).toBe(500);
    const mid = breaker({ threshold: 1, random: 0.5 });
    mid.circuit.recordFailure('x');
    expect(mid.circuit.msUntilProbe()).toBe(750);
  });

  it('rejects nonsense options', () => {
    expect(() => new CircuitBreaker({ failureThreshold: 0, coolDownMs: { initial: 1, max: 1 } })).toThrow(RangeError);
    expect(() => new CircuitBreaker({ failureThreshold: 1, coolDownMs: { initial: 10, max: 5 } })).toThrow(RangeError);
  });
});
