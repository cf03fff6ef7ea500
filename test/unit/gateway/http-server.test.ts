import { type AddressInfo, createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ConnectionLimits } from '../../../src/gateway/connection-limits.js';
import { listenHttp, serveHandedConnections } from '../../../src/gateway/http-server.js';
import { createLogger } from '../../../src/log.js';

const LIMITS: ConnectionLimits = {
  headersTimeoutMs: 10_000,
  receiveTimeoutMs: 10_000,
  keepAliveTimeoutMs: 10_000,
  maxConnections: 100,
  maxConnectionsPerAddress: null,
};

const common = {
  fetch: () => new Response('ok'),
  tls: null,
  maxHeaderBytes: 16_384,
  limits: LIMITS,
  logger: createLogger({ level: 'silent' }),
};

describe('the HTTP server', () => {
  it('counts the requests it received, none of them in flight once answered (the idle trim reads both)', async () => {
    const server = await listenHttp({ ...common, host: '127.0.0.1', port: 0 });
    try {
      expect(server.requests).toBe(0);
      for (let i = 0; i < 3; i++) expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      expect(server.requests).toBe(3);
      expect(server.inFlight).toBe(0);
    } finally {
      server.destroy();
    }
  });

  it("counts the requests of a worker's handed connections too", async () => {
    // A plain listener hands each connection over, as the primary of several workers does.
    const worker = serveHandedConnections({ ...common, url: 'http://127.0.0.1' });
    const primary = createServer((socket) => worker.accept(socket));
    await new Promise<void>((resolve) => primary.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = primary.address() as AddressInfo;
      for (let i = 0; i < 2; i++) expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200);
      expect(worker.requests).toBe(2);
      expect(worker.inFlight).toBe(0);
    } finally {
      worker.destroy();
      primary.close();
    }
  });
});
