import net from 'node:net';
import { checksum } from '../../src/sip2/checksum.js';
import type { ConnectionOptions } from '../../src/sip2/connection.js';
import { sip2DateFrom } from '../../src/sip2/date.js';
import type { PatronInformation } from '../../src/sip2/spec.js';

/**
 * A real TCP SIP2 peer on loopback whose every answer the test writes by hand:
 * for protocol corners (96 after 97, stale sequence numbers, a 98 in place of
 * a response) that a well-behaved ILS, or the simulator, never produces.
 */
export interface ScriptedPeer {
  port: number;
  /** Every frame received, as latin1 text without terminator, per connection in arrival order. */
  received: string[];
  /** Raw bytes of every frame received, terminator included. */
  receivedRaw: Buffer[];
  connections: number;
  close(): Promise<void>;
}

type Reply = (text: string) => void;
export type Script = (frame: string, reply: Reply, socket: net.Socket) => void;

/** Appends AY<seq>AZ<checksum> (seq taken from the request frame) the way an ACS with error detection does. */
export function signed(body: string, seq: number | null = null): string {
  const head = seq === null ? `${body}AZ` : `${body}AY${seq}AZ`;
  return head + checksum(Buffer.from(head, 'latin1'));
}

export function sequenceOf(frame: string): number | null {
  const m = /AY(\d)AZ[0-9A-F]{4}$/.exec(frame);
  return m ? Number(m[1]) : null;
}

/** Answers 93 with 941 and 99 with a minimal 98, then hands every other frame to `script`. */
export async function startScriptedPeer(script: Script): Promise<ScriptedPeer> {
  const peer: ScriptedPeer = { port: 0, received: [], receivedRaw: [], connections: 0, close: async () => {} };
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    peer.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    let buffer = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let cr = buffer.indexOf(0x0d); cr !== -1; cr = buffer.indexOf(0x0d)) {
        const raw = buffer.subarray(0, cr + 1);
        buffer = buffer.subarray(cr + 1);
        const frame = raw.toString('latin1', 0, raw.length - 1).replace(/^\n+/, '');
        peer.receivedRaw.push(Buffer.from(raw));
        peer.received.push(frame);
        const reply: Reply = (text) => socket.write(Buffer.from(`${text}\r`, 'latin1'));
        const seq = sequenceOf(frame);
        if (frame.startsWith('93')) reply(signed('941', seq));
        else if (frame.startsWith('99') && peer.received.filter((f) => f.startsWith('99')).length === 1)
          reply(signed(acsStatus(), seq));
        else script(frame, reply, socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  peer.port = (server.address() as net.AddressInfo).port;
  peer.close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return peer;
}

function acsStatus(online = 'Y'): string {
  return `98${online}YYYNN030003${'20261121    120000'}2.00AODEMO|AMScripted Library|BXYNNNYYYYYYYNNYYY|`;
}

/** Options for a Sip2Connection to a scripted peer on 127.0.0.1 (utf-8, CR, error detection, terminal paia). */
export function peerConnectionOptions(port: number, overrides: Partial<ConnectionOptions> = {}): ConnectionOptions {
  return {
    host: '127.0.0.1',
    port,
    charset: 'utf-8',
    terminator: '\r',
    errorDetection: true,
    loginUserId: 'paia',
    loginPassword: 'paia-secret',
    connectTimeoutMs: 2000,
    responseTimeoutMs: 1000,
    maxResends: 2,
    ...overrides,
  };
}

/** A fixed transaction date for scripted exchanges. */
export const NOW = sip2DateFrom(new Date(2026, 10, 21, 12, 0, 0));

/** A 63 for alice with her password, and a 64 a peer may answer it with. */
export const PATRON_INFO: PatronInformation = {
  code: '63',
  language: '001',
  transactionDate: NOW,
  summary: null,
  institutionId: 'DEMO',
  patronIdentifier: 'alice',
  patronPassword: 'alice-pass',
};
export const PATRON_REPLY = `64              001${'20261121    120000'}000000000000000000000000AODEMO|AAalice|AEAlice Example|BLY|CQY|`;
