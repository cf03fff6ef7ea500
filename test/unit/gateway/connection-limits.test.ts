import { createServer, type Server } from 'node:http';
import { type AddressInfo, connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type ConnectionLimits, guardServer } from '../../../src/gateway/connection-limits.js';

const LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  receiveTimeoutMs: 10_000,
  keepAliveTimeoutMs: 10_000,
  maxConnections: 100,
  maxConnectionsPerAddress: 1,
};

/**
 * A real node:http server with guardServer on 127.0.0.1 whose connections seem to come from the addresses
 * given, in the order they connect: loopback has no second IPv6 host, let alone one in another /64, so the
 * socket's remoteAddress is the one thing faked. A request is answered 503 where guardServer refused its
 * connection (as the gateway's fetch wrapper does), 200 otherwise.
 */
async function serverSeeing(addresses: string[]): Promise<{ server: Server; port: number }> {
  const refused = new WeakSet<Socket>();
  const server = createServer((request, response) => {
    response.writeHead(refused.has(request.socket) ? 503 : 200, { Connection: 'close' }).end();
  });
  // Ahead of guardServer's listener, which reads the address.
  server.prependListener('connection', (socket: Socket) => {
    Object.defineProperty(socket, 'remoteAddress', { value: addresses.shift() ?? '127.0.0.1' });
  });
  guardServer(server, LIMITS, { refused, closeRefusedAtOnce: false });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

const sockets: Socket[] = [];
let open: Server | undefined;

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  open?.closeAllConnections();
  await new Promise((resolve) => (open ? open.close(resolve) : resolve(undefined)));
  open = undefined;
});

/** Connects and waits until the server has taken the connection (so that the next one is counted after it). */
async function connectTo(server: Server, port: number): Promise<Socket> {
  const taken = new Promise((resolve) => server.once('connection', resolve));
  const socket = connect({ host: '127.0.0.1', port });
  sockets.push(socket);
  socket.on('error', () => {});
  await taken;
  return socket;
}

/** The status of one GET on a connection of its own, at most 5 s. */
async function statusOn(socket: Socket): Promise<number> {
  socket.setEncoding('latin1');
  socket.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`no answer within 5 s: ${text}`)), 5000);
    socket.on('data', (chunk: string) => {
      text += chunk;
      const status = /^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1];
      if (status !== undefined) {
        clearTimeout(timer);
        resolve(Number(status));
      }
    });
  });
}

describe('guardServer: http.maxConnectionsPerAddress', () => {
  it('counts two addresses of one IPv6 /64 as one address, and one of another /64 apart', async () => {
    const { server, port } = await serverSeeing(['2001:db8:1:2::a', '2001:db8:1:2:ffff::b', '2001:db8:1:3::a']);
    open = server;
    await connectTo(server, port); // holds the /64's one place
    const sameBlock = await connectTo(server, port);
    const otherBlock = await connectTo(server, port);
    expect(await statusOn(sameBlock)).toBe(503);
    expect(await statusOn(otherBlock)).toBe(200);
  });

  it('counts an IPv4-mapped IPv6 address as its IPv4 address', async () => {
    const { server, port } = await serverSeeing(['192.0.2.7', '::ffff:192.0.2.7', '192.0.2.8']);
    open = server;
    await connectTo(server, port);
    expect(await statusOn(await connectTo(server, port))).toBe(503);
    expect(await statusOn(await connectTo(server, port))).toBe(200);
  });
});
