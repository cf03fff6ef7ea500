import { createServer, connect as netConnect, type Socket } from 'node:net';

/**
 * A plain TCP proxy on 127.0.0.1 in front of a SIP2 server that watches the
 * frames going through, for tests that must know what reached the ILS at
 * once: per message code, how many connections had a request sent and not
 * yet answered, and the most there ever were. SIP2 answers each request on
 * its connection before the next one (3M: one request outstanding per
 * terminal), so a connection's outstanding request is its last one until
 * the next frame comes back. Bytes pass unchanged; frames end in CR (an LF
 * after it is ignored). A 97 (resend) is not a new request.
 */
export interface Sip2Tap {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  /** Most connections at once with a request of `code` at the ILS. */
  peak(code: string): number;
  /** Requests of `code` sent through the tap. */
  sent(code: string): number;
  /** Starts counting peaks afresh (requests at the ILS now count as the new starting point). */
  resetPeaks(): void;
  close(): Promise<void>;
}

/** Complete CR-terminated frames from a connection's bytes so far; the incomplete rest stays in `state.rest`. */
function frames(state: { rest: string }, chunk: Buffer): string[] {
  const text = state.rest + chunk.toString('latin1');
  const parts = text.split('\r');
  state.rest = parts.pop() ?? '';
  return parts.map((part) => part.replace(/^\n/, '')).filter((part) => part !== '');
}

export async function startSip2Tap(upstreamPort: number): Promise<Sip2Tap> {
  const atIls = new Map<string, number>();
  const peaks = new Map<string, number>();
  const sentCounts = new Map<string, number>();
  const sockets = new Set<Socket>();

  const server = createServer((client) => {
    const upstream = netConnect({ host: '127.0.0.1', port: upstreamPort });
    sockets.add(client);
    sockets.add(upstream);
    let outstanding: string | null = null;
    const answered = () => {
      if (outstanding === null) return;
      atIls.set(outstanding, (atIls.get(outstanding) ?? 1) - 1);
      outstanding = null;
    };
    const fromClient = { rest: '' };
    const fromServer = { rest: '' };
    client.on('data', (chunk: Buffer) => {
      for (const frame of frames(fromClient, chunk)) {
        const code = frame.slice(0, 2);
        if (code === '97') continue;
        answered(); // a client that sends again has given up on the last answer
        outstanding = code;
        sentCounts.set(code, (sentCounts.get(code) ?? 0) + 1);
        const now = (atIls.get(code) ?? 0) + 1;
        atIls.set(code, now);
        peaks.set(code, Math.max(peaks.get(code) ?? 0, now));
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (frames(fromServer, chunk).length > 0) answered();
      client.write(chunk);
    });
    const end = () => {
      answered();
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end);
    upstream.on('error', end);
    client.on('close', end);
    upstream.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };

  return {
    port,
    peak: (code) => peaks.get(code) ?? 0,
    sent: (code) => sentCounts.get(code) ?? 0,
    resetPeaks: () => {
      peaks.clear();
      for (const [code, count] of atIls) peaks.set(code, count);
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
