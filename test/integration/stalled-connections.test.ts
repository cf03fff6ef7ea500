/**
 * Issue 24, item 1, against the real gateway process: connections answered
 * below the app (408 for a head too slow, 503 for a connection beyond the
 * caps) from clients that never close their side of the connection. The
 * gateway must close them for good after the answer, so that they give back
 * their file descriptor and their places under http.maxConnections and
 * http.maxConnectionsPerAddress: a fresh client gets 200 soon after.
 */
import { existsSync, readdirSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { parseRaw } from '../helpers/raw-http.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

/** The stalled head: a request line and a Host header, never the blank line that ends the head. */
const PARTIAL_HEAD = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n';
/** Connections opened at once; more at a time would overflow the listen backlog and cost SYN retries. */
const BATCH = 100;
/** The bound the issue sets: after the answers, a fresh client is served within this. */
const FRESH_WITHIN_MS = 2000;

interface Stalled {
  socket: Socket;
  /** Everything received until the gateway ended its side (its FIN); the client never ends its own. */
  answered: Promise<string>;
}

/**
 * A client that connects, writes `head` (and more through `drip`, if given) and never closes its side: it keeps
 * its socket half-open after the gateway's FIN (allowHalfOpen), as the red team's clients did.
 */
function stall(url: string, head: string, drip?: (socket: Socket) => void): Promise<Stalled> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), allowHalfOpen: true });
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    // A reset once the gateway destroys a socket that still had bytes of ours unread.
    socket.on('error', () => {});
    const answered = new Promise<string>((settle) => {
      socket.once('end', () => settle(text));
      socket.once('close', () => settle(text));
    });
    socket.once('connect', () => {
      socket.write(head);
      drip?.(socket);
      resolve({ socket, answered });
    });
    socket.once('error', reject);
  });
}

async function stallMany(url: string, count: number, head: string, drip?: (socket: Socket) => void) {
  const all: Stalled[] = [];
  while (all.length < count) {
    const batch = Math.min(BATCH, count - all.length);
    all.push(...(await Promise.all(Array.from({ length: batch }, () => stall(url, head, drip)))));
  }
  return all;
}

/** Resolves with what each promise gives, or rejects after `timeoutMs` saying how many did. */
async function all<T>(promises: Array<Promise<T>>, timeoutMs: number, what: string): Promise<T[]> {
  let done = 0;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${done} of ${promises.length} ${what} within ${timeoutMs} ms`)),
      timeoutMs,
    );
  });
  try {
    const counted = promises.map((p) =>
      p.then((value) => {
        done++;
        return value;
      }),
    );
    return await Promise.race([Promise.all(counted), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Milliseconds until `path` answers 200 on a fresh connection, trying again until `withinMs`; null if never. */
async function msUntilOk(url: string, path: string, withinMs: number): Promise<number | null> {
  const started = Date.now();
  while (Date.now() - started < withinMs) {
    try {
      const response = await fetch(`${url}${path}`, {
        headers: { connection: 'close' },
        signal: AbortSignal.timeout(500),
      });
      await response.arrayBuffer();
      if (response.status === 200) return Date.now() - started;
    } catch {
      // refused or timed out: try again
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return null;
}

/** The gateway process's open file descriptors (Linux); null where /proc has none. */
function openFds(pid: number): number | null {
  const dir = `/proc/${pid}/fd`;
  return existsSync(dir) ? readdirSync(dir).length : null;
}

/** Open descriptors of `pid` once they are below `bound`, looking until `withinMs`; the last count if never. */
async function fdsBelow(pid: number, bound: number, withinMs: number): Promise<number> {
  const started = Date.now();
  let count = openFds(pid) ?? 0;
  while (count >= bound && Date.now() - started < withinMs) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    count = openFds(pid) ?? 0;
  }
  return count;
}

describe('stalled request heads answered 408 are closed for good', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess | undefined;
  let stalled: Stalled[] = [];

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
  });

  afterEach(async () => {
    for (const s of stalled) s.socket.destroy();
    stalled = [];
    await gateway?.stop();
    gateway = undefined;
  });

  afterAll(async () => {
    await sim?.stop();
  });

  const cases: Array<[string, number, Record<string, string>]> = [
    [
      '1000 from 127.0.0.1 fill http.maxConnections (1000, no cap per address)',
      1000,
      { PAIA_HTTP_MAX_CONNECTIONS: '1000', PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: 'null' },
    ],
    [
      '100 from 127.0.0.1 fill http.maxConnectionsPerAddress (100)',
      100,
      { PAIA_HTTP_MAX_CONNECTIONS: '1000', PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '100' },
    ],
  ];

  for (const [name, count, caps] of cases) {
    it(`${name}: each gets its JSON 408, then a fresh client and /healthz get 200 within 2 s`, async () => {
      gateway = await startGatewayProcess({
        sip2Port: sim.port,
        dialect: 'generic',
        env: { PAIA_HTTP_HEADERS_TIMEOUT_MS: '1000', PAIA_HTTP_RECEIVE_TIMEOUT_MS: '2000', ...caps },
      });
      const fdsBefore = openFds(gateway.pid);
      stalled = await stallMany(gateway.url, count, PARTIAL_HEAD);
      // Every place is taken now: the next connection is refused.
      const refused = await fetch(`${gateway.url}/healthz`, {
        headers: { connection: 'close' },
        signal: AbortSignal.timeout(5000),
      });
      expect(refused.status).toBe(503);

      const texts = await all(
        stalled.map((s) => s.answered),
        15_000,
        'answered',
      );
      for (const text of texts) {
        const { status, body } = parseRaw(text);
        expect(status).toBe(408);
        expect(body).toEqual({
          error: 'invalid_request',
          code: 408,
          error_description: 'the request did not arrive in time',
        });
      }
      // The clients keep their side open; only the gateway can end these connections.
      expect(stalled.every((s) => !s.socket.destroyed)).toBe(true);

      const fresh = await msUntilOk(gateway.url, '/daia?format=json&id=it-0030', FRESH_WITHIN_MS);
      expect(fresh, 'a fresh client was refused for 2 s after the 408s').not.toBeNull();
      expect(await msUntilOk(gateway.url, '/healthz', 500)).not.toBeNull();
      // The gateway gives the descriptors back, the last ones a grace after their 408 (Linux only: /proc).
      if (fdsBefore !== null) expect(await fdsBelow(gateway.pid, fdsBefore + 50, 3000)).toBeLessThan(fdsBefore + 50);
    });
  }
});

describe('a refused connection trickling its request head gets its 503 and is closed', () => {
  let sim: SimulatorProcess;
  let gateway: GatewayProcess;
  const sockets: Socket[] = [];

  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--log-level', 'warn'] });
    gateway = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      // The two holders keep their places for 10 s: long past the refused connections' deadline.
      env: { PAIA_HTTP_HEADERS_TIMEOUT_MS: '10000', PAIA_HTTP_MAX_CONNECTIONS_PER_ADDRESS: '2' },
    });
  });

  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await gateway?.stop();
    await sim?.stop();
  });

  it('100 refused clients sending a byte every 100 ms: each gets a JSON 503 and is closed within 4 s', async () => {
    const holders = await stallMany(gateway.url, 2, PARTIAL_HEAD);
    sockets.push(...holders.map((h) => h.socket));
    const started = Date.now();
    // A header value one byte at a time: the head stays valid and unfinished, and bytes keep coming.
    const tricklers = await stallMany(gateway.url, 100, `${PARTIAL_HEAD}X-Trickle: `, (socket) => {
      const drip = setInterval(() => socket.writable && socket.write('a'), 100);
      socket.once('close', () => clearInterval(drip));
    });
    sockets.push(...tricklers.map((t) => t.socket));

    const texts = await all(
      tricklers.map((t) => t.answered),
      5000,
      'answered',
    );
    for (const text of texts) {
      const { status, headers, body } = parseRaw(text);
      expect(status).toBe(503);
      expect(headers).toMatch(/retry-after: 1/i);
      expect(body).toMatchObject({ error: 'service_unavailable', code: 503 });
    }
    // Closed for good: a client that goes on writing gets a reset once the gateway destroyed its socket.
    const closed = await all(
      tricklers.map(
        (t) =>
          new Promise<number>((resolve) => {
            if (t.socket.destroyed) resolve(Date.now() - started);
            else t.socket.once('close', () => resolve(Date.now() - started));
          }),
      ),
      5000,
      'closed by the gateway',
    );
    expect(Math.max(...closed)).toBeLessThan(4000);

    for (const holder of holders) holder.socket.destroy();
    expect(await msUntilOk(gateway.url, '/healthz', FRESH_WITHIN_MS)).not.toBeNull();
  });
});
