import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { patronPerWorker } from './b1-throughput.js';
import type { GeneratedLibrary } from './data.js';
import { type HttpLoopOptions, httpLoop, type LoopResult } from './driver.js';
import type { Gateway, Simulator } from './processes.js';
import { metOf, ms, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B9 isolation (issue 29): does one library's ILS going silent cost another
 * library anything? On the gateway with every library, library B is kept
 * under a steady load (a closed loop of LOAD_CONNECTIONS patrons), and A's
 * own patrons call at a steady pace, while library A's simulator is healthy,
 * then stopped with SIGSTOP (a paused ILS: its TCP connections stay open and
 * nothing answers, the worst case for a pool), then continued again. B's p50 with A paused ÷ B's p50 before, which must be within the
 * run's noise (how far the phase after, A healthy again, lies from the one
 * before) or 10 %, whichever is larger, as issue 29 asks ("within noise of
 * before"); every answer of B must be 200.
 */

const LOAD_CONNECTIONS = 4;
/** A's patrons call once per this many ms, in every phase: a library's traffic, not a flood. */
const A_PACE_MS = 25;
/** Every call to A ends by then: the gateway answers 504 after sip2.timeouts.responseMs (5 s by default). */
const A_CALL_TIMEOUT_MS = 15_000;
const RATIO_TARGET = 1.1;
const READY_TIMEOUT_MS = 30_000;

interface Phase {
  name: string;
  result: LoopResult;
}

export interface Isolation {
  phases: Phase[];
  /** What A's patrons' calls got, by HTTP status (or error), per phase (by when each was sent). */
  aOutcomes: Record<string, number>[];
}

/** The three phases on `gateway`, B = library `b`, A = library `a` (ids), `simulatorA` the process paused. */
export async function measureIsolation(
  settings: Settings,
  gateway: Gateway,
  ids: { a: string; b: string },
  simulatorA: Simulator,
  library: GeneratedLibrary,
): Promise<Isolation> {
  const onB = await patronPerWorker(gateway.url, library, `/${ids.b}`);
  const onA = await patronPerWorker(gateway.url, library, `/${ids.a}`);
  const loadB = (): Promise<LoopResult> =>
    httpLoop({
      origin: gateway.url,
      path: '/core/',
      requestFor: onB,
      connections: LOAD_CONNECTIONS,
      warmupMs: settings.warmupMs,
      durationMs: settings.b1WindowMs,
    });
  // A's patrons call at the same pace in every phase, so that the phases differ in A's ILS alone.
  const outcomes: Record<string, number>[] = [{}, {}, {}];
  let phase = 0;
  const paced = paceCalls(gateway.url, onA, () => outcomes[phase]!);
  const phases: Phase[] = [];
  try {
    phases.push({ name: 'A healthy, before', result: await loadB() });
    phase = 1;
    process.kill(simulatorA.pid, 'SIGSTOP');
    try {
      phases.push({ name: 'A paused (SIGSTOP)', result: await loadB() });
    } finally {
      process.kill(simulatorA.pid, 'SIGCONT');
    }
    phase = 2;
    await untilLibraryReady(gateway, ids.a);
    phases.push({ name: 'A healthy again, after', result: await loadB() });
  } finally {
    paced.stop();
    await paced.done;
  }
  return { phases, aOutcomes: outcomes };
}

/**
 * A's patrons calling at a steady pace (not waiting for answers), until stopped; done when every call has
 * ended. Each call's outcome counts in the bucket current when it was sent.
 */
function paceCalls(
  origin: string,
  requestFor: NonNullable<HttpLoopOptions['requestFor']>,
  bucket: () => Record<string, number>,
): { stop(): void; done: Promise<void> } {
  const calls: Promise<void>[] = [];
  let worker = 0;
  const timer = setInterval(() => {
    const { path, headers } = requestFor(worker++ % LOAD_CONNECTIONS);
    const outcomes = bucket();
    calls.push(
      fetch(`${origin}${path}`, { headers, signal: AbortSignal.timeout(A_CALL_TIMEOUT_MS) }).then(
        async (response) => {
          await response.arrayBuffer();
          outcomes[response.status] = (outcomes[response.status] ?? 0) + 1;
        },
        (error: Error) => {
          const label = `error: ${error.name}`;
          outcomes[label] = (outcomes[label] ?? 0) + 1;
        },
      ),
    );
  }, A_PACE_MS);
  let stopped: () => void = () => {};
  const stop = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  return {
    stop: () => {
      clearInterval(timer);
      stopped();
    },
    done: stop.then(() => Promise.all(calls)).then(() => undefined),
  };
}

/** /readyz until it lists library `id` as ready again (bounded). */
async function untilLibraryReady(gateway: Gateway, id: string): Promise<void> {
  const deadline = performance.now() + READY_TIMEOUT_MS;
  for (;;) {
    const response = await fetch(`${gateway.url}/readyz`, { signal: AbortSignal.timeout(5000) });
    const body = (await response.json()) as { libraries?: Record<string, { status: string }> };
    if (body.libraries?.[id]?.status === 'ready') return;
    if (performance.now() > deadline)
      throw new Error(`library ${id} was not ready again within ${READY_TIMEOUT_MS / 1000} s of its ILS continuing`);
    await sleep(100);
  }
}

export function isolationRow(isolation: Isolation, ids: { a: string; b: string }, libraries: number): Row {
  const [before, paused, after] = isolation.phases.map((phase) => phase.result) as [LoopResult, LoopResult, LoopResult];
  const ratio = paused.p50 / before.p50;
  // Two phases with A healthy differ by this much: what the machine alone moves B's p50 by in this run.
  const noise = Math.abs(after.p50 - before.p50) / before.p50;
  const allowed = 1 + Math.max(RATIO_TARGET - 1, noise);
  const failuresOfB = isolation.phases.reduce((sum, phase) => sum + phase.result.failures, 0);
  const valid = failuresOfB === 0 && isolation.phases.every((phase) => phase.result.completed > 0);
  return {
    id: 'B9 isolation',
    what: `p50 of GET /core at library B of ${libraries} while library A's ILS is paused (SIGSTOP) ÷ before, with A healthy; B's answers all 200`,
    result: `${ratio.toFixed(2)} (${ms(paused.p50)} ÷ ${ms(before.p50)})`,
    target: `within noise: <= 1 + max(${(RATIO_TARGET - 1).toFixed(1)}, noise) = ${allowed.toFixed(2)}`,
    met: metOf(ratio <= allowed, valid),
    notes: [
      `result = B's p50 with A paused ÷ B's p50 before, with A healthy (${ms(before.p50)}); noise = how far B's p50 with A healthy again after (${ms(after.p50)}) lies from the one before: ${(noise * 100).toFixed(0)} %; B = ${ids.b}, A = ${ids.a}; B under a closed loop of ${LOAD_CONNECTIONS} patrons per phase (warm-up + ${before.durationS.toFixed(0)} s window), A's patrons calling every ${A_PACE_MS} ms throughout`,
      ...isolation.phases.map(
        (phase) =>
          `${phase.name}: B ${phase.result.completed} answers in the window, p50 ${ms(phase.result.p50)}, p99 ${ms(phase.result.p99)}, outcomes ${JSON.stringify(phase.result.outcomes)}`,
      ),
      `A's patrons, calling every ${A_PACE_MS} ms in every phase, answered (by when each call was sent): ${isolation.phases.map((phase, i) => `${phase.name} ${JSON.stringify(isolation.aOutcomes[i])}`).join('; ')} (a call still waiting when A continued is answered then; one waiting longer than sip2.timeouts.responseMs gets 504, and 503 comes from a full pool or an open circuit)`,
      ...(valid ? [] : [`INVALID: ${failuresOfB} of B's answers were not 200, or a phase completed none`]),
    ],
  };
}
