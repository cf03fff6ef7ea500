import { readFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import tls from 'node:tls';

export interface TlsProxy {
  /** The proxy's TLS port on 127.0.0.1. */
  port: number;
  close(): Promise<void>;
}

/**
 * A TLS-terminating proxy on 127.0.0.1 in front of a plain SIP2 port, as
 * stunnel would be in front of an ILS: each TLS client gets its own plain
 * connection upstream, and either side closing closes the other.
 */
export async function startTlsProxy(
  certificate: { cert: string; key: string },
  upstreamPort: number,
): Promise<TlsProxy> {
  const server = tls.createServer(
    { cert: readFileSync(certificate.cert), key: readFileSync(certificate.key) },
    (client) => {
      const upstream = netConnect({ host: '127.0.0.1', port: upstreamPort });
      client.pipe(upstream).pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    },
  );
  // A client that gives up on the handshake (an untrusted certificate) is the test's business, not an error here.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
