/**
 * Failure translation, end to end: a real gateway process in front of a real
 * simulator process, one test per fault the simulator can inject. Each test
 * checks the HTTP status, the PAIA `error` code, that the description gives
 * away nothing internal (hosts, ports, stacks, socket error codes, secrets),
 * and that the answer came within the bound the configuration promises. A
 * 500 is never acceptable.
 *
 * Bounds (wall time of one HTTP request, measured in this process): the SIP2
 * round trips the failure needs, each at most RESPONSE_MS (CONNECT_MS for the
 * TCP connect), plus MARGIN for HTTP, two processes and a busy test machine.
 */
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type Client,
  expectOk,
  expectRequestError,
  item,
  type Reply,
  type Session,
  useFixture,
} from '../conformance/support.js';

const RESPONSE_MS = 800;
const CONNECT_MS = 1000;
const ACQUIRE_MS = 1000;
const MARGIN_MS = 1500;
const WRONG_TERMINAL_PASSWORD = 'not-the-terminal-password-7f3a';
/** Latency of the slow simulator in the queue test. */
const SLOW_MS = 700;

const BASE = {
  // No background fill: connections are opened by requests, so a fault hits the message under test.
  PAIA_SIP2_POOL_MIN: '0',
  // Every request must reach the ILS for its fault to show.
  PAIA_CACHE_ITEMS_ENABLED: 'false',
  PAIA_CACHE_ACCOUNTS_ENABLED: 'false',
  PAIA_SIP2_POOL_KEEPALIVE_MS: '0',
  PAIA_SIP2_TIMEOUTS_RESPONSE_MS: String(RESPONSE_MS),
  PAIA_SIP2_TIMEOUTS_CONNECT_MS: String(CONNECT_MS),
  PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: String(ACQUIRE_MS),
};

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function timed(call: () => Promise<Reply>): Promise<{ reply: Reply; ms: number }> {
  const started = performance.now();
  const reply = await call();
  return { reply, ms: performance.now() - started };
}

/** Nothing internal in an error answer: no address or port, no stack, no socket error code, no secret, no SIP2 detail. */
function expectNoInternals(reply: Reply): void {
  const what = `${reply.request} -> ${reply.status} ${reply.text}`;
  const description = reply.body.error_description;
  expect(typeof description, what).toBe('string');
  const text = String(description);
  expect(text, what).not.toMatch(/\b\d{1,3}(?:\.\d{1,3}){3}\b/); // IPv4 address
  expect(text, what).not.toMatch(/localhost|::1|127\.0\.0\.1/);
  expect(text, what).not.toMatch(/:\d{2,5}\b/); // host:port
  expect(text, what).not.toMatch(/\b(?:93|94|97|98|99|63|64|29|30|15|16) message|checksum|sequence number|\bA[YZ]\b/i);
  // the whole body: no stack frame, source file, socket error code, error class or secret anywhere
  for (const body of [text, reply.text]) {
    expect(body, what).not.toMatch(/\bat \S+ \(|\bat (?:async )?\S+:\d+:\d+|\.ts\b|node:|node_modules/);
    expect(body, what).not.toMatch(
      /E(?:CONNREFUSED|CONNRESET|PIPE|TIMEDOUT|HOSTUNREACH)|\b[A-Z][a-z]+Error\b|Backend[A-Z]\w+|Sip2\w+/,
    );
    expect(body, what).not.toMatch(/paia-secret|alice-pass/);
    expect(body, what).not.toContain(WRONG_TERMINAL_PASSWORD);
  }
}

function expectWithin(ms: number, bound: number, what: string): void {
  expect(ms, `${what}: answered after ${Math.round(ms)} ms, bound ${bound} ms`).toBeLessThan(bound);
}

describe('failure translation: every simulator fault, end to end', () => {
  const fx = useFixture('generic', { ...BASE, PAIA_SIP2_POOL_MAX: '2' }, [
    // extras[0]: a gateway whose terminal password the ILS rejects
    { ...BASE, PAIA_SIP2_TERMINAL_PASSWORD: WRONG_TERMINAL_PASSWORD },
    // extras[1]: one connection, one waiting place, for the queue-full test
    {
      ...BASE,
      PAIA_SIP2_POOL_MAX: '1',
      PAIA_SIP2_POOL_MAX_WAITING: '1',
      PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS: String(4 * SLOW_MS),
      PAIA_SIP2_TIMEOUTS_RESPONSE_MS: String(2 * SLOW_MS),
    },
  ]);
  let alice: Session;

  beforeAll(async () => {
    alice = await fx().client.login('alice');
  });

  /** Faults off, data as in the file, and the main gateway serving again (the circuit may have to probe first). */
  async function settle(client: Client = fx().client, token = alice.token): Promise<void> {
    await fx().sim.reset();
    const deadline = Date.now() + 30_000;
    for (;;) {
      const reply = await client.get('/core/alice', { token });
      if (reply.status === 200) return;
      expect(reply.status, reply.text).not.toBe(500);
      if (Date.now() > deadline)
        throw new Error(`the gateway did not serve again within 30 s: ${reply.status} ${reply.text}`);
      await sleep(200);
    }
  }

  afterEach(async () => {
    await settle();
  });

  it('connection refused: 502 bad_gateway at once (nothing was sent, so no retry)', async () => {
    await settle();
    await fx().sim.setFaults({ refuseConnections: true });
    await fx().sim.disconnectAll();
    await sleep(50);
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 502, error: 'bad_gateway' });
    expectNoInternals(reply);
    // one connect, refused at once
    expectWithin(ms, CONNECT_MS + MARGIN_MS, 'refused');
  });

  it('connection reset mid-reply (dropMidReply): 502 bad_gateway after one retry of the read on a fresh connection', async () => {
    await settle();
    const before = await fx().sim.counters();
    await fx().sim.setFaults({ dropMidReply: true });
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 502, error: 'bad_gateway' });
    expectNoInternals(reply);
    // the 63 (dropped), then a fresh connection: connect, 93 (dropped)
    expectWithin(ms, RESPONSE_MS + CONNECT_MS + RESPONSE_MS + MARGIN_MS, 'dropMidReply');
    const after = await fx().sim.counters();
    expect(
      (after.received['63'] ?? 0) - (before.received['63'] ?? 0),
      'the read was sent once, its retry never logged in',
    ).toBe(1);
  });

  it('connection reset mid-reply on a renewal: 200 with the outcome unknown on the document, never sent twice', async () => {
    await settle();
    const before = await fx().sim.counters();
    await fx().sim.setFaults({ dropMidReply: 1 });
    const { reply, ms } = await timed(() =>
      fx().client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token: alice.token }),
    );
    const body = expectOk(reply);
    const [doc] = body.doc as Array<Record<string, unknown>>;
    expect(doc?.item).toBe(item('it-0002'));
    expect(String(doc?.error), reply.text).toMatch(/outcome unknown/);
    expectWithin(ms, RESPONSE_MS + MARGIN_MS, 'renew with dropMidReply');
    const after = await fx().sim.counters();
    expect((after.received['29'] ?? 0) - (before.received['29'] ?? 0), '29 received').toBe(1);
    expect((after.executed['29'] ?? 0) - (before.executed['29'] ?? 0), '29 executed').toBe(1);
  });

  it("terminal login rejected (wrong terminal password): 503 naming the service's own login, not access_denied, and no password in the answer", async () => {
    const { client } = fx().extras[0]!;
    const { reply, ms } = await timed(() => client.loginReply('alice', 'alice-pass'));
    expectRequestError(reply, { status: 503, error: 'service_unavailable', api: 'auth' });
    expect(reply.body.error_description).toMatch(/^this service cannot log in to the library system right now/);
    expect(reply.headers.get('retry-after')).toMatch(/^\d+$/);
    expectNoInternals(reply);
    // connect + 93 answered with 940
    expectWithin(ms, CONNECT_MS + RESPONSE_MS + MARGIN_MS, 'login rejected');
    // what the gateway logs may name the cause, but never the password
    expect(fx().extras[0]!.gateway.stderr()).not.toContain(WRONG_TERMINAL_PASSWORD);
  });

  it('corrupt checksums after every 97: 502 bad_gateway once the resend bound is spent', async () => {
    await settle();
    await fx().sim.setFaults({ corruptChecksums: true });
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 502, error: 'bad_gateway' });
    expectNoInternals(reply);
    // 63 + two 97 (one response bound), retry: connect + 93 + two 97 (one response bound)
    expectWithin(ms, RESPONSE_MS + CONNECT_MS + RESPONSE_MS + MARGIN_MS, 'corruptChecksums');
    const counters = await fx().sim.counters();
    expect(counters.received['97'] ?? 0, '97 resend requests were tried').toBeGreaterThanOrEqual(2);
  });

  it('garbage instead of SIP2: 502 bad_gateway', async () => {
    await settle();
    await fx().sim.setFaults({ garbage: true });
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 502, error: 'bad_gateway' });
    expectNoInternals(reply);
    expectWithin(ms, RESPONSE_MS + CONNECT_MS + RESPONSE_MS + MARGIN_MS, 'garbage');
  });

  it('hang: 504 gateway_timeout after the response timeout, not later', async () => {
    await settle();
    await fx().sim.setFaults({ hang: 1 });
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 504, error: 'gateway_timeout' });
    expectNoInternals(reply);
    expect(ms, 'not before the response timeout').toBeGreaterThanOrEqual(RESPONSE_MS - 50);
    // a timed-out read is not retried: one response bound
    expectWithin(ms, RESPONSE_MS + MARGIN_MS, 'hang');
  });

  it('latency beyond the response timeout: 504 gateway_timeout at the bound', async () => {
    await settle();
    await fx().sim.setFaults({ latencyMs: 2 * RESPONSE_MS });
    const { reply, ms } = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(reply, { status: 504, error: 'gateway_timeout' });
    expectNoInternals(reply);
    expect(ms).toBeGreaterThanOrEqual(RESPONSE_MS - 50);
    expectWithin(ms, RESPONSE_MS + MARGIN_MS, 'latency');
    // latency within the bound is just slow
    await fx().sim.setFaults({ latencyMs: RESPONSE_MS / 4 });
    const slow = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectOk(slow.reply);
  });

  it('rejectMessage: the ILS refuses the message; a refusal on the document (renew, request) or not_found (patron), never a 5xx', async () => {
    await settle();
    const before = await fx().sim.counters();

    await fx().sim.setFaults({ rejectMessage: '29' });
    const renew = await timed(() =>
      fx().client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token: alice.token }),
    );
    const [renewed] = expectOk(renew.reply).doc as Array<Record<string, unknown>>;
    expect(renewed).toMatchObject({ status: 3, item: item('it-0002') });
    expect(String(renewed?.error), renew.reply.text).toMatch(/rejected/);
    expectWithin(renew.ms, RESPONSE_MS + MARGIN_MS, 'renew refused');

    await fx().sim.setFaults({ rejectMessage: '15' });
    const request = await timed(() =>
      fx().client.post('/core/alice/request', { doc: [{ item: item('it-0030') }] }, { token: alice.token }),
    );
    const [requested] = expectOk(request.reply).doc as Array<Record<string, unknown>>;
    expect(requested).toMatchObject({ status: 5, item: item('it-0030') });
    expect(typeof requested?.error).toBe('string');
    expectWithin(request.ms, RESPONSE_MS + MARGIN_MS, 'request refused');

    await fx().sim.setFaults({ rejectMessage: '63' });
    const patron = await timed(() => fx().client.get('/core/alice', { token: alice.token }));
    expectRequestError(patron.reply, { status: 404, error: 'not_found' });
    expectNoInternals(patron.reply);
    expectWithin(patron.ms, RESPONSE_MS + MARGIN_MS, 'patron refused');

    const after = await fx().sim.counters();
    expect((after.executed['29'] ?? 0) - (before.executed['29'] ?? 0), 'refused renewals were not executed').toBe(0);
    expect((after.executed['15'] ?? 0) - (before.executed['15'] ?? 0), 'refused holds were not executed').toBe(0);
  });

  it('queue full: 503 service_unavailable with Retry-After at once, while admitted requests are served', async () => {
    const { client } = fx().extras[1]!;
    await settle();
    // Four patrons: four identical reads at once would share a single 63 (SharedReads).
    const sessions = [
      await client.login('alice'),
      await client.login('dave'),
      await client.login('frank'),
      await client.login('hanna', { password: 'hanna-pass' }),
    ];
    await fx().sim.setFaults({ latencyMs: SLOW_MS });
    // one runs on the only connection, one waits, two find the waiting room full
    const replies = await Promise.all(
      sessions.map((session) => timed(() => client.get(`/core/${session.patron}`, { token: session.token }))),
    );
    const statuses = replies.map(({ reply }) => reply.status).sort();
    expect(statuses, replies.map(({ reply }) => `${reply.status} ${reply.text}`).join('\n')).toEqual([
      200, 200, 503, 503,
    ]);
    for (const { reply, ms } of replies) {
      if (reply.status === 200) {
        // at most one wait for the running request, then its own round trip
        expectWithin(ms, 2 * SLOW_MS + MARGIN_MS, 'admitted');
        continue;
      }
      expectRequestError(reply, { status: 503, error: 'service_unavailable' });
      expectNoInternals(reply);
      expect(reply.headers.get('retry-after') ?? '', 'Retry-After').toMatch(/^[1-9]\d*$/);
      // refused before any SIP2: well before the running request's answer
      expectWithin(ms, SLOW_MS, 'queue full');
    }
  });

  it('circuit open: after repeated failures 503 at once with Retry-After, writes not sent, then recovery without a restart', async () => {
    await settle();
    const { client, sim } = fx();
    const before = await sim.counters();
    await sim.setFaults({ refuseConnections: true });
    await sim.disconnectAll();
    await sleep(50);

    // Every request is one refused connect (a failure) until the circuit opens (default threshold: 5).
    const failures: number[] = [];
    let open: { reply: Reply; ms: number } | undefined;
    for (let i = 0; i < 8 && open === undefined; i++) {
      const attempt = await timed(() => client.get('/core/alice', { token: alice.token }));
      if (attempt.reply.status === 503) open = attempt;
      else {
        expectRequestError(attempt.reply, { status: 502, error: 'bad_gateway' });
        failures.push(attempt.reply.status);
      }
    }
    // Default threshold 5; a connection that the ILS dropped right after its login would count as well.
    expect(failures.length, 'bad_gateway answers before the circuit opened').toBeGreaterThanOrEqual(1);
    expect(failures.length, 'bad_gateway answers before the circuit opened').toBeLessThanOrEqual(5);
    expect(open, 'the circuit opened').toBeDefined();

    // Open: every method answers 503 at once, with Retry-After, without touching the ILS.
    const openReplies = [
      open!,
      await timed(() => client.get('/core/alice/items', { token: alice.token })),
      await timed(() => client.post('/core/alice/renew', { doc: [{ item: item('it-0002') }] }, { token: alice.token })),
      await timed(() =>
        client.post('/core/alice/request', { doc: [{ item: item('it-0030') }] }, { token: alice.token }),
      ),
      await timed(() => client.loginReply('alice', 'alice-pass')),
    ];
    for (const [i, { reply, ms }] of openReplies.entries()) {
      expectRequestError(reply, { status: 503, error: 'service_unavailable', api: i === 4 ? 'auth' : 'core' });
      expectNoInternals(reply);
      const retryAfter = Number(reply.headers.get('retry-after'));
      expect(
        Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 30,
        `Retry-After ${reply.headers.get('retry-after')}`,
      ).toBe(true);
      expectWithin(ms, 300, 'circuit open');
    }

    // The ILS comes back; nobody restarts the gateway. The probe (a new connection: 93 + 99) closes the circuit.
    await sim.setFaults({ refuseConnections: false });
    const cleared = Date.now();
    const first = await client.get('/core/alice', { token: alice.token });
    // Retry-After is honest: the gateway serves again within it (plus a second for the probe and rounding).
    const promised = first.status === 503 ? Number(first.headers.get('retry-after')) : 0;
    let reply = first;
    while (reply.status !== 200 && Date.now() - cleared < 35_000) {
      expectRequestError(reply, { status: 503, error: 'service_unavailable' });
      await sleep(100);
      reply = await client.get('/core/alice', { token: alice.token });
    }
    expectOk(reply);
    const recovered = await sim.counters();
    expect(
      (recovered.received['93'] ?? 0) - (before.received['93'] ?? 0),
      'one login: the probe; the request reused its connection',
    ).toBe(1);
    expect(
      Date.now() - cleared,
      `served again after ${Date.now() - cleared} ms, Retry-After was ${promised}`,
    ).toBeLessThan((promised + 1) * 1000 + MARGIN_MS);
    expectOk(await client.get('/core/alice/items', { token: alice.token }));

    const after = await sim.counters();
    expect((after.executed['29'] ?? 0) - (before.executed['29'] ?? 0), 'no renewal reached the ILS').toBe(0);
    expect((after.executed['15'] ?? 0) - (before.executed['15'] ?? 0), 'no hold reached the ILS').toBe(0);
  });
});
