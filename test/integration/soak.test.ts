/**
 * Soak: mixed PAIA traffic from several virtual patrons against a real
 * gateway process and a real simulator process, while faults are switched on
 * and off and the simulator is killed (SIGKILL) and restarted twice.
 *
 * Bounded in time (the fault schedule, about 40 s) and in count (at most
 * MAX_REQUESTS client requests). It asserts:
 *   - no 500, and no other status than 200, 502, 503, 504 while a fault is on;
 *   - no answer past its bound (below);
 *   - every request that ran in a clean window (no fault on, every request
 *     sent while it was on answered, and the gateway serving again after it)
 *     answered 200 and correctly;
 *   - no renew (29), hold or cancel (15) executed twice: per simulator
 *     incarnation, executed <= confirmed + unknown (and >= confirmed), where
 *     confirmed = documents whose answer shows the ILS ran the message (done
 *     or refused by the ILS), unknown = documents reported "outcome unknown".
 *     Documents "not sent", refused by fault injection, or in a request that
 *     failed as a whole (the backend fails a whole write only when nothing
 *     may have run) must not have run at all.
 * and prints a summary for the issue note.
 *
 * Bound per method. One attempt of a SIP2 request through the pool takes at
 * most ACQUIRE (waiting for a connection) + CONNECT + 2 x RESPONSE (opening
 * one: TCP, 93 login, 99 status) + RESPONSE (the request itself). A read may
 * be tried once more on a fresh connection (2 attempts); a write is never
 * re-sent (1 attempt). Methods run stages of requests in parallel:
 *   login, patron, fees: 1 read stage (63; every soak patron's lists fit one page)
 *   items: 2 read stages (the five 63 lists in parallel, then the 17s in parallel)
 *   renew, request, cancel: 1 write stage (one 29 or 15 per document, in parallel)
 * plus MARGIN for HTTP, JSON and two processes on a busy machine.
 *
 * The simulator's counters restart with each incarnation: they are read just
 * before each kill, with writes held back for that moment (a gate) so none is
 * in flight when the counters are read. Reads keep running across the kill.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_ENV, Client, item, PASSWORDS, type Reply } from '../conformance/support.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type CountersState, type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const RESPONSE_MS = 800;
const CONNECT_MS = 500;
const ACQUIRE_MS = 1500;
const MARGIN_MS = 1000;
const ATTEMPT_MS = ACQUIRE_MS + CONNECT_MS + 3 * RESPONSE_MS;
const READ_STAGE_MS = 2 * ATTEMPT_MS;
const WRITE_STAGE_MS = ATTEMPT_MS;

type Method = 'login' | 'patron' | 'items' | 'fees' | 'renew' | 'request' | 'cancel';
const METHODS: readonly Method[] = ['login', 'patron', 'items', 'fees', 'renew', 'request', 'cancel'];
const BOUND_MS: Readonly<Record<Method, number>> = {
  login: READ_STAGE_MS + MARGIN_MS,
  patron: READ_STAGE_MS + MARGIN_MS,
  fees: READ_STAGE_MS + MARGIN_MS,
  items: 2 * READ_STAGE_MS + MARGIN_MS,
  renew: WRITE_STAGE_MS + MARGIN_MS,
  request: WRITE_STAGE_MS + MARGIN_MS,
  cancel: WRITE_STAGE_MS + MARGIN_MS,
};

/** Client requests at most (the canary that watches recovery comes on top). */
const MAX_REQUESTS = 4000;
/** Pause of each virtual patron between its requests. */
const THINK_MS = 60;
/** Clean traffic between two faults. */
const GAP_MS = 1500;
/** Pulsed faults: set again this often, this many times. */
const PULSES = 12;
const PULSE_EVERY_MS = 200;

type Doc = Record<string, unknown>;
type Outcome = 'confirmed' | 'unknown' | 'not-sent' | 'fault-rejected';
type HoldState = 'none' | 'held' | 'unknown';

interface Answer {
  client: string;
  method: Method;
  status: number;
  ms: number;
  faulted: boolean;
  /** Index into the fault list of the fault that was on or healing, -1 in a clean window. */
  window: number;
}

interface WriteRecord {
  id: number;
  code: '29' | '15';
  method: 'renew' | 'request' | 'cancel';
  patron: string;
  target: string;
  incarnation: number;
  outcome: Outcome;
}

interface FaultRecord {
  name: string;
  atMs: number;
  /** From switching it on to switching it off (for a kill: to the restarted simulator listening). */
  onMs: number;
  /** From switching the fault off (or restarting the simulator) to the gateway serving again. */
  recoveryMs: number;
  requestsDuring: number;
  /** Client answers by status while the fault was on or healing. */
  statuses: Map<number, number>;
}

interface Op {
  method: Method;
  run: (client: Client, token: string) => Promise<Reply>;
  /** For writes: what the document is about. */
  write?: { code: '29' | '15'; target: string; hold?: string };
  /** Returns what is wrong with a 200 answer in a clean window, or null. */
  check: (reply: Reply, holdBefore: HoldState) => string | null;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Holds writes back while the simulator's counters are read before a kill. */
class WriteGate {
  private closed = false;
  private inFlight = 0;
  private waiting: Array<() => void> = [];
  private drained: Array<() => void> = [];

  async enter(): Promise<void> {
    while (this.closed) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.inFlight++;
  }

  leave(): void {
    this.inFlight--;
    if (this.inFlight === 0) for (const resolve of this.drained.splice(0)) resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.inFlight > 0) await new Promise<void>((resolve) => this.drained.push(resolve));
  }

  open(): void {
    this.closed = false;
    for (const resolve of this.waiting.splice(0)) resolve();
  }
}

// ------------------------------------------------------------ what correct answers look like (demo data)

const PATRONS: Readonly<Record<string, { name: string; status: number; loans: string[]; fees: string }>> = {
  alice: { name: 'Alice Example', status: 0, loans: ['it-0001', 'it-0002', 'it-0003'], fees: '3.50 EUR' },
  emile: { name: 'Émile Zoë Ångström', status: 0, loans: ['em-0001', 'em-0002', 'em-0003'], fees: '0.00 EUR' },
  frank: { name: 'Frank Borrower', status: 0, loans: ['it-0020'], fees: '0.00 EUR' },
  dave: { name: 'Dave Manybooks', status: 0, loans: [], fees: '0.00 EUR' },
  carol: { name: 'Carol Blocked', status: 3, loans: ['it-0070'], fees: '12.00 EUR' },
  bob: { name: 'Bob Expired', status: 2, loans: ['it-0060'], fees: '0.00 EUR' },
};

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function docsOf(reply: Reply): Doc[] {
  return Array.isArray(reply.body.doc) ? (reply.body.doc as Doc[]) : [];
}

function classify(reply: Reply, doc: Doc | undefined): Outcome {
  // A write fails as a whole (502/503/504) only when no document may have run; 4xx never reach the ILS.
  if (reply.status === 0) return 'unknown';
  if (reply.status !== 200 || doc === undefined) return 'not-sent';
  const error = doc.error;
  if (typeof error !== 'string') return 'confirmed';
  if (/outcome unknown/i.test(error)) return 'unknown';
  if (/not sent/i.test(error)) return 'not-sent';
  if (/rejected by fault injection/i.test(error)) return 'fault-rejected';
  // refused by the ILS (renewal limit, hold queue, duplicate hold ...): the ILS ran the message
  return 'confirmed';
}

function patronOp(patron: string): Op {
  const want = PATRONS[patron]!;
  return {
    method: 'patron',
    run: (client, token) => client.get(`/core/${patron}`, { token }),
    check: (reply) =>
      reply.body.name === want.name && reply.body.status === want.status
        ? null
        : `patron ${patron}: ${reply.text.slice(0, 200)}`,
  };
}

function itemsOp(patron: string): Op {
  const want = PATRONS[patron]!;
  return {
    method: 'items',
    run: (client, token) => client.get(`/core/${patron}/items`, { token }),
    check: (reply) => {
      const docs = docsOf(reply);
      for (const loan of want.loans) {
        const doc = docs.find((d) => d.item === item(loan));
        if (doc?.status !== 3)
          return `items ${patron}: loan ${loan} missing or not status 3: ${reply.text.slice(0, 300)}`;
      }
      if (patron === 'alice' && docs.find((d) => d.item === item('it-0010'))?.status !== 4)
        return 'items alice: the hold on the shelf (it-0010) is not status 4';
      return null;
    },
  };
}

function feesOp(patron: string): Op {
  const want = PATRONS[patron]!;
  return {
    method: 'fees',
    run: (client, token) => client.get(`/core/${patron}/fees`, { token }),
    check: (reply) => (reply.body.amount === want.fees ? null : `fees ${patron}: ${reply.text.slice(0, 200)}`),
  };
}

function loginOp(patron: string): Op {
  return {
    method: 'login',
    run: (client) => client.loginReply(patron, PASSWORDS[patron]!),
    check: (reply) =>
      typeof reply.body.access_token === 'string' && reply.body.patron === patron
        ? null
        : `login ${patron}: ${reply.text.slice(0, 200)}`,
  };
}

/** `mustSucceed`: the ILS has no reason to refuse (no limit, no holds); otherwise a refusal by the ILS is fine too. */
function renewOp(patron: string, barcode: string, expect: 'succeed' | 'refuse' | 'either'): Op {
  return {
    method: 'renew',
    write: { code: '29', target: barcode },
    run: (client, token) => client.post(`/core/${patron}/renew`, { doc: [{ item: item(barcode) }] }, { token }),
    check: (reply) => {
      const [doc] = docsOf(reply);
      if (doc?.item !== item(barcode) || doc.status !== 3)
        return `renew ${patron} ${barcode}: ${reply.text.slice(0, 200)}`;
      const refused = typeof doc.error === 'string';
      if (refused && /outcome unknown|not sent|fault injection/i.test(doc.error as string))
        return `renew ${patron} ${barcode} in a clean window: ${doc.error}`;
      if (!refused && !(typeof doc.duedate === 'string' && DATE.test(doc.duedate)))
        return `renew ${patron} ${barcode}: no due date: ${reply.text.slice(0, 200)}`;
      if (expect === 'succeed' && refused) return `renew ${patron} ${barcode} refused: ${doc.error}`;
      if (expect === 'refuse' && !refused) return `renew ${patron} ${barcode} should have been refused`;
      return null;
    },
  };
}

function requestOp(patron: string, barcode: string): Op {
  return {
    method: 'request',
    write: { code: '15', target: `+${barcode}`, hold: `${patron}:${barcode}` },
    run: (client, token) => client.post(`/core/${patron}/request`, { doc: [{ item: item(barcode) }] }, { token }),
    check: (reply, before) => {
      const [doc] = docsOf(reply);
      if (doc?.item !== item(barcode)) return `request ${patron} ${barcode}: ${reply.text.slice(0, 200)}`;
      const placed = doc.error === undefined && (doc.status === 1 || doc.status === 2);
      const refused =
        typeof doc.error === 'string' &&
        doc.status === 5 &&
        !/outcome unknown|not sent|fault injection/i.test(doc.error);
      if (before === 'none' && !placed)
        return `request ${patron} ${barcode} (no hold yet) not placed: ${reply.text.slice(0, 200)}`;
      if (before === 'held' && !refused)
        return `request ${patron} ${barcode} (hold exists) not refused: ${reply.text.slice(0, 200)}`;
      if (before === 'unknown' && !placed && !refused)
        return `request ${patron} ${barcode}: ${reply.text.slice(0, 200)}`;
      return null;
    },
  };
}

function cancelOp(patron: string, barcode: string): Op {
  return {
    method: 'cancel',
    write: { code: '15', target: `-${barcode}`, hold: `${patron}:${barcode}` },
    run: (client, token) => client.post(`/core/${patron}/cancel`, { doc: [{ item: item(barcode) }] }, { token }),
    check: (reply, before) => {
      const [doc] = docsOf(reply);
      if (doc?.item !== item(barcode)) return `cancel ${patron} ${barcode}: ${reply.text.slice(0, 200)}`;
      const cancelled = doc.error === undefined && doc.status === 0;
      const refused =
        typeof doc.error === 'string' &&
        doc.status === 1 &&
        !/outcome unknown|not sent|fault injection/i.test(doc.error);
      if (before === 'held' && !cancelled)
        return `cancel ${patron} ${barcode} (hold exists) not cancelled: ${reply.text.slice(0, 200)}`;
      if (before === 'none' && !refused)
        return `cancel ${patron} ${barcode} (no hold) not refused: ${reply.text.slice(0, 200)}`;
      if (before === 'unknown' && !cancelled && !refused)
        return `cancel ${patron} ${barcode}: ${reply.text.slice(0, 200)}`;
      return null;
    },
  };
}

// ------------------------------------------------------------ the soak

describe('soak: mixed traffic while the simulator dies twice and faults come and go', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    sim = await startSimulatorProcess({ dialect: 'generic', extraArgs: ['--log-level', 'warn'] });
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: {
        ...BASE_ENV,
        PAIA_SIP2_POOL_MIN: '1',
        PAIA_SIP2_POOL_MAX: '4',
        PAIA_SIP2_POOL_MAX_WAITING: '50',
        PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
        PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
        PAIA_SIP2_TIMEOUTS_RESPONSE_MS: String(RESPONSE_MS),
        PAIA_SIP2_TIMEOUTS_CONNECT_MS: String(CONNECT_MS),
        // The soak is about the ILS failing, not about client limits: its few patrons log in and ask far more than people do.
        PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '1000',
        PAIA_AUTH_REQUESTS_PER_MINUTE: '100000',
        PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await sim?.stop();
  });

  it('no 500, nothing past its bound, clean requests correct, no write executed twice', async () => {
    const client = new Client(gateway.url);
    const tokens = new Map<string, string>();
    for (const patron of ['alice', 'emile', 'frank', 'dave', 'carol', 'bob'])
      tokens.set(patron, (await client.login(patron)).token);
    const canaryToken = (await client.login('alice')).token;

    // ---------------------------------------------------------- shared state
    const answers: Answer[] = [];
    const canary: Answer[] = [];
    const writes: WriteRecord[] = [];
    const problems: string[] = [];
    const holds = new Map<string, HoldState>();
    const incarnations: CountersState[] = [];
    const faults: FaultRecord[] = [];
    const gate = new WriteGate();
    let incarnation = 0;
    let epoch = 0;
    let clean = true;
    /** Index the running fault will have in `faults`; -1 while clean. */
    let currentFault = -1;
    let stopped = false;
    let sent = 0;
    /** Requests without their answer yet: those sent while a fault was on still count as failures when they end. */
    const inFlight = new Set<Promise<Reply>>();
    let writeId = 0;
    let daveNext = 11;
    let daveWrapped = false;
    const started = performance.now();
    const elapsed = () => performance.now() - started;

    const cycles: Record<string, (step: number) => Op> = {
      alice: (step) =>
        [
          patronOp('alice'),
          itemsOp('alice'),
          renewOp('alice', 'it-0002', 'either'),
          feesOp('alice'),
          requestOp('alice', 'it-0030'),
          itemsOp('alice'),
          cancelOp('alice', 'it-0030'),
          renewOp('alice', 'it-0003', 'refuse'),
          loginOp('alice'),
        ][step % 9]!,
      emile: (step) =>
        [
          patronOp('emile'),
          renewOp('emile', 'em-0001', 'either'),
          requestOp('emile', 'it-0031'),
          feesOp('emile'),
          cancelOp('emile', 'it-0031'),
          itemsOp('emile'),
          renewOp('emile', 'em-0002', 'either'),
        ][step % 7]!,
      frank: (step) =>
        [
          patronOp('frank'),
          renewOp('frank', 'it-0020', 'refuse'),
          requestOp('frank', 'it-0032'),
          itemsOp('frank'),
          cancelOp('frank', 'it-0032'),
          feesOp('frank'),
        ][step % 6]!,
      dave: (step) => {
        const kind = step % 4;
        if (kind === 1 || kind === 3) {
          // a new item every time: dave's 120 loans have no renewals and no holds, so each renewal must succeed
          const barcode = `dv-${String(daveNext).padStart(4, '0')}`;
          const firstRenewal = !daveWrapped;
          if (daveNext >= 120) {
            daveNext = 11;
            daveWrapped = true;
          } else {
            daveNext++;
          }
          return renewOp('dave', barcode, firstRenewal ? 'succeed' : 'either');
        }
        return kind === 0 ? patronOp('dave') : step % 8 === 2 ? loginOp('dave') : feesOp('dave');
      },
      carol: (step) => [patronOp('carol'), feesOp('carol'), itemsOp('carol')][step % 3]!,
      bob: (step) => [patronOp('bob'), itemsOp('bob'), loginOp('bob')][step % 3]!,
    };

    async function perform(name: string, op: Op): Promise<void> {
      sent++;
      const startEpoch = epoch;
      const startClean = clean;
      const startFault = currentFault;
      const holdKey = op.write?.hold;
      const holdBefore = holdKey ? (holds.get(holdKey) ?? 'none') : 'none';
      const writeIncarnation = incarnation;
      const t0 = performance.now();
      let reply: Reply;
      const running = op.run(client, tokens.get(name)!);
      inFlight.add(running);
      try {
        reply = await running;
      } catch (error) {
        reply = { status: 0, text: String(error), body: {}, request: op.method } as unknown as Reply;
      } finally {
        inFlight.delete(running);
      }
      const ms = performance.now() - t0;
      const faulted = !(startClean && clean && epoch === startEpoch);
      const window = faulted ? (currentFault >= 0 ? currentFault : startFault) : -1;
      answers.push({ client: name, method: op.method, status: reply.status, ms, faulted, window });

      if (reply.status === 0) problems.push(`${name} ${op.method}: no HTTP answer (${reply.text})`);
      if (reply.status === 500) problems.push(`${name} ${op.method}: 500 ${reply.text.slice(0, 300)}`);
      if (ms > BOUND_MS[op.method])
        problems.push(`${name} ${op.method}: ${Math.round(ms)} ms, bound ${BOUND_MS[op.method]} ms`);
      if (faulted && ![200, 502, 503, 504].includes(reply.status))
        problems.push(`${name} ${op.method} during a fault: ${reply.status} ${reply.text.slice(0, 200)}`);
      if (!faulted) {
        const wrong =
          reply.status === 200 ? op.check(reply, holdBefore) : `${reply.status} ${reply.text.slice(0, 200)}`;
        if (wrong) problems.push(`clean window, ${name} ${op.method} at ${(elapsed() / 1000).toFixed(1)} s: ${wrong}`);
      }

      if (op.write) {
        const outcome = classify(reply, docsOf(reply)[0]);
        writes.push({
          id: ++writeId,
          code: op.write.code,
          method: op.method as WriteRecord['method'],
          patron: name,
          target: op.write.target,
          incarnation: writeIncarnation,
          outcome,
        });
        if (holdKey && writeIncarnation === incarnation) {
          const doc = docsOf(reply)[0];
          const ok = outcome === 'confirmed' && doc?.error === undefined;
          if (outcome === 'unknown') holds.set(holdKey, 'unknown');
          else if (ok) holds.set(holdKey, op.method === 'request' ? 'held' : 'none');
          else if (outcome === 'confirmed' && holdBefore === 'unknown') {
            // refused by the ILS: a refused request means a hold exists, a refused cancel that none does
            holds.set(holdKey, op.method === 'request' ? 'held' : 'none');
          }
        }
      }
    }

    async function virtualPatron(name: string): Promise<void> {
      for (let step = 0; !stopped && sent < MAX_REQUESTS; step++) {
        const op = cycles[name]!(step);
        if (op.write) await gate.enter();
        try {
          await perform(name, op);
        } finally {
          if (op.write) gate.leave();
        }
        await sleep(THINK_MS);
      }
    }

    /** Polls GET /core/alice until the gateway answers 200 again. */
    async function recovered(): Promise<void> {
      const t0 = performance.now();
      for (;;) {
        const c0 = performance.now();
        const reply = await client.get('/core/alice', { token: canaryToken });
        const ms = performance.now() - c0;
        canary.push({
          client: 'canary',
          method: 'patron',
          status: reply.status,
          ms,
          faulted: true,
          window: currentFault,
        });
        if (reply.status === 500) problems.push(`canary: 500 ${reply.text.slice(0, 300)}`);
        if (ms > BOUND_MS.patron) problems.push(`canary: ${Math.round(ms)} ms`);
        if (reply.status === 200) return;
        if (performance.now() - t0 > 40_000)
          throw new Error(`the gateway did not serve again within 40 s: ${reply.status} ${reply.text}`);
        await sleep(100);
      }
    }

    async function fault(
      name: string,
      onMs: number,
      on: () => Promise<unknown>,
      off: () => Promise<unknown>,
    ): Promise<void> {
      await sleep(GAP_MS);
      const atMs = elapsed();
      const before = sent;
      clean = false;
      epoch++;
      currentFault = faults.length;
      const onAt = performance.now();
      await on();
      await sleep(onMs);
      await off();
      const offAt = performance.now();
      const wasOnMs = Math.round(offAt - onAt);
      // A request the fault held up can still fail after the fault is off (a hang ends in its response timeout), and
      // such failures may open the circuit: the clean window starts once every one of them has its answer.
      await Promise.allSettled([...inFlight]);
      await recovered();
      const recoveryMs = performance.now() - offAt;
      faults.push({ name, atMs, onMs: wasOnMs, recoveryMs, requestsDuring: sent - before, statuses: new Map() });
      clean = true;
      currentFault = -1;
    }

    async function killAndRestart(downMs: number): Promise<void> {
      await fault(
        `simulator SIGKILL, down ${downMs} ms, restarted`,
        downMs,
        async () => {
          // Writes are held back only while the counters of the dying incarnation are read; reads keep running.
          await gate.close();
          incarnations.push(await sim.counters());
          await sim.kill('SIGKILL');
          incarnation++;
          holds.clear(); // the restarted simulator starts from the demo data
          daveNext = 11;
          daveWrapped = false;
          gate.open();
        },
        () => sim.restart(),
      );
    }

    async function pulses(faults: Parameters<SimulatorProcess['setFaults']>[0]): Promise<void> {
      for (let i = 0; i < PULSES; i++) {
        await sim.setFaults(faults);
        await sleep(PULSE_EVERY_MS);
      }
    }

    await sim.reset();
    const traffic = Promise.all(Object.keys(cycles).map((name) => virtualPatron(name)));

    // ---------------------------------------------------------- the schedule (about 40 s)
    await fault(
      'latency 150 ms + jitter 100 ms (within the bound)',
      2500,
      () => sim.setFaults({ latencyMs: 150, jitterMs: 100 }),
      () => sim.clearFaults(),
    );
    await killAndRestart(1500);
    // Pulses (the next N responses, again and again) lose single answers on connections that otherwise work: a renew
    // or hold hit that way has an unknown outcome, and a gateway that re-sent it on a fresh connection would run it twice.
    await fault(
      `dropMidReply x2, ${PULSES} pulses`,
      0,
      () => pulses({ dropMidReply: 2 }),
      () => sim.clearFaults(),
    );
    // `true`: every response while on
    await fault(
      'hang (every response)',
      1500,
      () => sim.setFaults({ hang: true }),
      () => sim.clearFaults(),
    );
    await fault(
      `corruptChecksums x3, ${PULSES} pulses`,
      0,
      () => pulses({ corruptChecksums: 3 }),
      () => sim.clearFaults(),
    );
    await fault(
      'garbage (every response)',
      1500,
      () => sim.setFaults({ garbage: true }),
      () => sim.clearFaults(),
    );
    await killAndRestart(1500);
    await fault(
      'rejectMessage 29',
      2000,
      () => sim.setFaults({ rejectMessage: '29' }),
      () => sim.clearFaults(),
    );
    await fault(
      'refuseConnections + all connections dropped',
      2000,
      async () => {
        await sim.setFaults({ refuseConnections: true });
        await sim.disconnectAll();
      },
      () => sim.clearFaults(),
    );
    await sleep(GAP_MS);
    stopped = true;
    await traffic;
    await gate.close();
    incarnations.push(await sim.counters());

    // ---------------------------------------------------------- writes against the simulator's counters
    interface Ledger {
      incarnation: number;
      code: '29' | '15';
      sent: number;
      confirmed: number;
      unknown: number;
      notRun: number;
      received: number;
      executed: number;
      duplicates: number;
      missing: number;
    }
    const ledger: Ledger[] = [];
    for (const [index, counters] of incarnations.entries()) {
      for (const code of ['29', '15'] as const) {
        const mine = writes.filter((w) => w.incarnation === index && w.code === code);
        const confirmed = mine.filter((w) => w.outcome === 'confirmed').length;
        const unknown = mine.filter((w) => w.outcome === 'unknown').length;
        const executed = counters.executed[code] ?? 0;
        ledger.push({
          incarnation: index + 1,
          code,
          sent: mine.length,
          confirmed,
          unknown,
          notRun: mine.length - confirmed - unknown,
          received: counters.received[code] ?? 0,
          executed,
          duplicates: Math.max(0, executed - confirmed - unknown),
          missing: Math.max(0, confirmed - executed),
        });
      }
    }
    const duplicates = ledger.reduce((sum, row) => sum + row.duplicates, 0);
    const missing = ledger.reduce((sum, row) => sum + row.missing, 0);

    // ---------------------------------------------------------- the summary
    const all = [...answers, ...canary];
    for (const a of answers) {
      const statuses = faults[a.window]?.statuses;
      statuses?.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    }
    const statusList = (statuses: Map<number, number>) =>
      [...statuses]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${status}: ${n}`)
        .join(', ');
    const byStatus = new Map<number, number>();
    for (const a of all) byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
    const cleanAnswers = answers.filter((a) => !a.faulted);
    const lines: string[] = [];
    lines.push('', '=== soak summary ===');
    lines.push(
      `duration ${(elapsed() / 1000).toFixed(1)} s; client requests sent ${sent} (cap ${MAX_REQUESTS}) + ${canary.length} canary requests; ${cleanAnswers.length} in clean windows, ${answers.length - cleanAnswers.length} while a fault was on or healing`,
    );
    lines.push(
      `timeouts: response ${RESPONSE_MS} ms, connect ${CONNECT_MS} ms, acquire ${ACQUIRE_MS} ms; pool min 1, max 4, maxWaiting 50; circuit defaults`,
    );
    lines.push('', `faults injected: ${faults.length}`);
    lines.push(
      '| at s | fault | on ms | recovery ms | requests sent meanwhile | answers (sent meanwhile or in flight) |',
      '|---|---|---|---|---|---|',
    );
    for (const f of faults) {
      lines.push(
        `| ${(f.atMs / 1000).toFixed(1)} | ${f.name} | ${f.onMs} | ${Math.round(f.recoveryMs)} | ${f.requestsDuring} | ${statusList(f.statuses)} |`,
      );
    }
    lines.push('', `answers by status (client + canary): ${statusList(byStatus)}`);
    lines.push(
      '',
      '| method | answers | 200 | 502 | 503 | 504 | other | longest ms | bound ms |',
      '|---|---|---|---|---|---|---|---|---|',
    );
    for (const method of METHODS) {
      const mine = answers.filter((a) => a.method === method);
      const count = (s: number) => mine.filter((a) => a.status === s).length;
      const other = mine.filter((a) => ![200, 502, 503, 504].includes(a.status)).length;
      const longest = Math.max(0, ...mine.map((a) => a.ms));
      lines.push(
        `| ${method} | ${mine.length} | ${count(200)} | ${count(502)} | ${count(503)} | ${count(504)} | ${other} | ${Math.round(longest)} | ${BOUND_MS[method]} |`,
      );
    }
    const worst = all.reduce((w, a) => (a.ms / BOUND_MS[a.method] > w.ms / BOUND_MS[w.method] ? a : w), all[0]!);
    lines.push(
      `longest answer relative to its bound: ${worst.method} (${worst.client}) ${Math.round(worst.ms)} ms of ${BOUND_MS[worst.method]} ms`,
    );
    lines.push('', 'writes per simulator incarnation (executed must lie in [confirmed, confirmed + unknown]):');
    lines.push(
      '| incarnation | code | docs sent | confirmed | unknown | not run | 15/29 received | executed | duplicates | missing |',
      '|---|---|---|---|---|---|---|---|---|---|',
    );
    for (const r of ledger) {
      lines.push(
        `| ${r.incarnation} | ${r.code} | ${r.sent} | ${r.confirmed} | ${r.unknown} | ${r.notRun} | ${r.received} | ${r.executed} | ${r.duplicates} | ${r.missing} |`,
      );
    }
    const outcomes = new Map<Outcome, number>();
    for (const w of writes) outcomes.set(w.outcome, (outcomes.get(w.outcome) ?? 0) + 1);
    lines.push(
      `write documents: ${writes.length} (${[...outcomes].map(([o, n]) => `${o} ${n}`).join(', ')}); duplicates ${duplicates}; missing ${missing}`,
    );
    lines.push(
      `500s: ${byStatus.get(500) ?? 0}; answers past their bound: ${all.filter((a) => a.ms > BOUND_MS[a.method]).length}; problems: ${problems.length}`,
    );
    console.log(lines.join('\n'));

    // ---------------------------------------------------------- the verdict
    expect(problems.slice(0, 20), problems.slice(0, 20).join('\n')).toEqual([]);
    expect(byStatus.get(500) ?? 0).toBe(0);
    expect(all.filter((a) => a.ms > BOUND_MS[a.method])).toEqual([]);
    expect(duplicates, 'writes executed more often than the gateway could have sent them').toBe(0);
    expect(missing, 'writes confirmed to the client that the ILS never executed').toBe(0);
    expect(incarnations).toHaveLength(3);
    expect(faults).toHaveLength(9);
    // the soak actually soaked: traffic in clean windows and during faults, and every kind of answer
    expect(cleanAnswers.length).toBeGreaterThan(200);
    expect(answers.length - cleanAnswers.length).toBeGreaterThan(50);
    expect(writes.filter((w) => w.outcome === 'confirmed').length).toBeGreaterThan(50);
    for (const status of [200, 503])
      expect(byStatus.get(status) ?? 0, `answers with status ${status}`).toBeGreaterThan(0);
  }, 180_000);
});
