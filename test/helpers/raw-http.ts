import { connect, type Socket } from 'node:net';

/**
 * HTTP below any client library: a TCP connection to the gateway on which a
 * test writes exactly the bytes it wants (a slow head, a bad request line,
 * a body after a signal) and reads exactly what comes back, for the answers
 * the server writes below the app.
 */

export interface RawExchange {
  /** Everything the server sent before it closed the connection. */
  text: string;
  /** Milliseconds from connecting to the server's close. */
  closedAfterMs: number;
}

/** Opens a raw TCP connection to the gateway, lets `talk` write on it, and collects what comes back until the server closes (at most `timeoutMs`). */
export function raw(url: string, talk: (socket: Socket) => void, timeoutMs = 15_000): Promise<RawExchange> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect({ host: hostname, port: Number(port) }, () => talk(socket));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the gateway did not close the connection within ${timeoutMs} ms; got: ${text.slice(0, 300)}`));
    }, timeoutMs);
    socket.on('error', () => {}); // a reset after the answer is a close too
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, closedAfterMs: Date.now() - started });
    });
  });
}

/** Status, head and parsed JSON body of a raw HTTP response that came whole. */
export function parseRaw(text: string): { status: number; headers: string; body: Record<string, unknown> } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), headers: head, body: JSON.parse(body) as Record<string, unknown> };
}

/** A TCP connection that sends nothing and stays open until the test ends it, resolved once connected. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => resolve(socket));
    socket.on('error', reject);
  });
}
