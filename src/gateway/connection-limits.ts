import type { Server as HttpServer, IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { addressKey } from '../auth/address-key.js';

/**
 * The HTTP server's own limits, below the Hono app: how long a client may
 * take to send a request head and a whole request, how long an idle
 * keep-alive connection stays open, and how many connections are open at
 * once (in total and per client address). Requests Node refuses before the
 * app sees them (a malformed request line, a head too large, a head or body
 * too slow, an HTTP/1.1 request without Host, an Expect header other than
 * 100-continue) get a JSON error body in PAIA's shape instead of Node's bare
 * status line, where the socket can still take one. A connection answered
 * here is closed for good: Node's server is half-open (allowHalfOpen), so
 * ending our side alone would let a client that never closes its own keep
 * the socket, and its places under the caps, for ever.
 */

export interface ConnectionLimits {
  /** The request head must have arrived within this (Node's headersTimeout). */
  headersTimeoutMs: number;
  /** The whole request, head and body, must have arrived within this (Node's requestTimeout). */
  receiveTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (Node's keepAliveTimeout). */
  keepAliveTimeoutMs: number;
  /** Open connections at most; one more is refused. */
  maxConnections: number;
  /**
   * Open connections per client address at most (the socket's address, so behind a proxy: the proxy's; IPv6 per
   * /64, as addressKey counts it); null: no cap.
   */
  maxConnectionsPerAddress: number | null;
}

/**
 * How often Node looks for connections past headersTimeout or requestTimeout
 * (its default is 30 s, which would let a slow client keep its connection up
 * to 30 s past the bound).
 */
const CHECK_INTERVAL_MS = 1000;
/**
 * A refused connection gets this long, from its connect, to send its request (answered 503 by the fetch wrapper);
 * then it gets the 503 here and is closed. A fixed deadline, not an idle timeout: a client trickling a byte now
 * and then would keep resetting an idle timeout, and a refused connection is counted nowhere.
 */
const REFUSED_GRACE_MS = 1000;
/**
 * How long a connection answered below the app stays after its answer was written before it is destroyed (at
 * once if the client ends its side first). The answer is a few hundred bytes and goes to the kernel at once, but
 * whatever the client sends after the socket is gone is answered with a reset, which can make the client discard
 * the answer unread: it gets about a round trip's time, with room to spare, to read it. Short, because until
 * then the connection keeps its file descriptor and its places under the connection caps.
 */
const CLOSE_GRACE_MS = 1000;

/** The options of node:http / node:https createServer for the limits, and for the answers given here. */
export function serverOptions(limits: ConnectionLimits) {
  return {
    headersTimeout: limits.headersTimeoutMs,
    requestTimeout: limits.receiveTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, limits.headersTimeoutMs),
    // Node would answer a missing Host itself, with an empty body and no event to hook: hostRequired answers it.
    requireHostHeader: false,
  };
}

const MISSING_HOST = {
  error: 'invalid_request',
  code: 400,
  error_description: 'the request has no Host header, which HTTP/1.1 requires',
};

const EXPECTATION_FAILED = {
  error: 'invalid_request',
  code: 417,
  error_description: 'the Expect header asks for something other than 100-continue, which this server cannot meet',
};

/**
 * A JSON answer written on Node's response, that closes the connection (Node destroys the socket once the
 * answer is flushed): the request it answers may have a body on its way that nobody will read. Node leaves out
 * the body of an answer to HEAD.
 */
function answerAndClose(response: ServerResponse, body: { code: number }): void {
  const json = JSON.stringify(body);
  response.writeHead(body.code, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-store',
    Connection: 'close',
  });
  response.end(json);
}

/**
 * Node's requireHostHeader check (RFC 9112 3.2: an HTTP/1.1 request without Host is answered 400), in front of
 * `listener`, with PAIA's JSON body. HTTP/1.0 needs no Host; without one Hono's adapter cannot build the URL,
 * and its errorHandler answers 400 (requestErrorResponse).
 */
export function hostRequired(listener: RequestListener): RequestListener {
  return (request: IncomingMessage, response: ServerResponse) => {
    if (request.httpVersionMajor === 1 && request.httpVersionMinor === 1 && request.headers.host === undefined) {
      answerAndClose(response, MISSING_HOST);
      return;
    }
    listener(request, response);
  };
}

/** A complete HTTP/1.1 response with a JSON body (only its head for a HEAD request) that closes the connection. */
function rawJsonResponse(
  status: number,
  reason: string,
  body: Record<string, unknown>,
  headOnly: boolean,
  headers: Record<string, string> = {},
): string {
  const json = JSON.stringify(body);
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(json)}`,
    'Cache-Control: no-store',
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    'Connection: close',
    '',
    headOnly ? '' : json,
  ].join('\r\n');
}

/** What Node's clientError codes become: status, reason phrase, PAIA error code and description. */
function clientErrorAnswer(code: string | undefined): [number, string, string, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large', 'invalid_request', 'the request head is too large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout', 'invalid_request', 'the request did not arrive in time'];
    default:
      return [400, 'Bad Request', 'invalid_request', 'the request is not valid HTTP/1.1'];
  }
}

/** Sockets closed for good by closeForGood, and the sockets whose requests never reach the app. */
interface Closing {
  closing: WeakSet<Socket>;
  refused: WeakSet<Socket>;
}

/**
 * Writes an answer below the app (when given) and closes the connection for good: Node's server is half-open,
 * so `end()` alone would leave the socket open for as long as the client keeps its side open. It is destroyed
 * when the client ends its side, or after CLOSE_GRACE_MS. Until then what the client still sends is read and
 * parsed as before (so that its bytes do not turn the close into a reset), but a request finished after the
 * answer (a head completed after its 408) is refused without the app.
 */
function closeForGood(socket: Socket, answer: string | null, sets: Closing): void {
  if (sets.closing.has(socket)) return;
  sets.closing.add(socket);
  sets.refused.add(socket);
  if (answer !== null) socket.end(answer);
  const timer = setTimeout(() => socket.destroy(), CLOSE_GRACE_MS);
  timer.unref();
  socket.once('end', () => socket.destroy());
  socket.once('close', () => clearTimeout(timer));
}

/** Whether Node is writing a response on the socket (its answer, not ours, then goes out). */
function inResponse(socket: Socket): boolean {
  return (socket as Socket & { _httpMessage?: unknown })._httpMessage != null;
}

export interface GuardOptions {
  /**
   * Sockets whose requests the fetch wrapper answers 503 without running the app: connections beyond the caps,
   * and connections already answered here. Filled by guardServer.
   */
  refused: WeakSet<Socket>;
  /**
   * Close a connection beyond the caps at once instead of answering its request 503: over HTTPS it is a TCP
   * socket before its handshake, which cannot be answered.
   */
  closeRefusedAtOnce: boolean;
}

/** Counts connections and refuses those beyond the caps, and answers client errors in JSON. */
export function guardServer(server: HttpServer, limits: ConnectionLimits, options: GuardOptions): void {
  let total = 0;
  const perAddress = new Map<string, number>();
  const sets: Closing = { closing: new WeakSet<Socket>(), refused: options.refused };

  server.on('connection', (socket: Socket) => {
    // One IPv6 host picks addresses from its /64 at will: the cap per address would bind it not at all.
    const address = addressKey(socket.remoteAddress);
    const fromAddress = perAddress.get(address) ?? 0;
    const overTotal = total >= limits.maxConnections;
    const overAddress = limits.maxConnectionsPerAddress !== null && fromAddress >= limits.maxConnectionsPerAddress;
    if (overTotal || overAddress) {
      if (options.closeRefusedAtOnce) {
        socket.destroy();
        return;
      }
      options.refused.add(socket);
      // A request that comes in time is answered 503 by the fetch wrapper, and Node closes the connection after
      // it (Connection: close); one still on its way then gets the 503 from here.
      const deadline = setTimeout(() => {
        const answer = socket.writable && !inResponse(socket) ? rawTooManyConnections() : null;
        closeForGood(socket, answer, sets);
      }, REFUSED_GRACE_MS);
      deadline.unref();
      socket.once('close', () => clearTimeout(deadline));
      return;
    }
    total += 1;
    perAddress.set(address, fromAddress + 1);
    socket.once('close', () => {
      total -= 1;
      const left = (perAddress.get(address) ?? 1) - 1;
      if (left <= 0) perAddress.delete(address);
      else perAddress.set(address, left);
    });
  });

  // Node answers an Expect it cannot meet 417 with an empty body unless this event has a listener. The request
  // reaches no app: its client waits for a 100 Continue that never comes before it sends its body.
  server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    answerAndClose(response, EXPECTATION_FAILED);
  });

  // Node's default answers these with a bare status line; PAIA clients get a body they can read.
  server.on('clientError', (error: NodeJS.ErrnoException & { rawPacket?: unknown }, socket: Socket) => {
    // Bytes sent after our answer fail to parse again; the answer stands and the close is under way.
    if (sets.closing.has(socket)) return;
    const answering = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent;
    if (error.code === 'ECONNRESET' || !socket.writable || answering) {
      socket.destroy();
      return;
    }
    const [status, reason, paiaError, description] = clientErrorAnswer(error.code);
    // A parse error carries the bytes being parsed: a HEAD request's answer must have no body (its client would
    // read the body as the next response). A head that came in pieces may not show its method: it gets the body.
    const packet = error.rawPacket;
    const headOnly = Buffer.isBuffer(packet) && packet.subarray(0, 5).toString('latin1') === 'HEAD ';
    closeForGood(
      socket,
      rawJsonResponse(status, reason, { error: paiaError, code: status, error_description: description }, headOnly),
      sets,
    );
  });
}

function jsonResponse(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store', ...headers },
  });
}

const TOO_MANY_CONNECTIONS = {
  error: 'service_unavailable',
  code: 503,
  error_description: 'too many connections are open (from this address or in total); please try again later',
};

/** The 503 a refused connection's request gets. */
export function tooManyConnectionsResponse(): Response {
  return jsonResponse(503, TOO_MANY_CONNECTIONS, { 'Retry-After': '1', Connection: 'close' });
}

/** The same 503 written to the socket, for a refused connection whose request did not come in time. */
function rawTooManyConnections(): string {
  return rawJsonResponse(503, 'Service Unavailable', TOO_MANY_CONNECTIONS, false, { 'Retry-After': '1' });
}

/**
 * The answer to a request Hono's Node adapter could not turn into a Request
 * (an invalid Host header, a backslash or bad escape in the path: its
 * RequestError), which it would answer with an empty 400.
 */
export function requestErrorResponse(error: unknown): Response {
  const name = error instanceof Error ? error.name : '';
  if (name === 'RequestError')
    return jsonResponse(400, {
      error: 'invalid_request',
      code: 400,
      error_description: 'the request line or Host header is not valid',
    });
  // The adapter passes on anything the app's fetch threw at once: a bug, never detailed to the client.
  return jsonResponse(500, {
    error: 'internal_error',
    code: 500,
    error_description: 'an unexpected error occurred in the server',
  });
}
