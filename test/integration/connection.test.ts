import net from 'node:net';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { AnomalyLog } from '../../src/sip2/anomalies.js';
import { type ConnectionOptions, Sip2Connection } from '../../src/sip2/connection.js';
import { IlsProtocolError, IlsTimeout, IlsUnavailable, Sip2EncodeError } from '../../src/sip2/errors.js';
import type { Renew } from '../../src/sip2/spec.js';
import {
  NOW,
  PATRON_INFO,
  PATRON_REPLY,
  peerConnectionOptions,
  type Script,
  type ScriptedPeer,
  sequenceOf,
  signed,
  startScriptedPeer,
} from '../helpers/scripted-peer.js';

const RENEW: Renew = {
  code: '29',
  thirdPartyAllowed: false,
  noBlock: false,
  transactionDate: NOW,
  nbDueDate: null,
  institutionId: 'DEMO',
  patronIdentifier: 'alice',
  itemIdentifier: 'it-0001',
};
const RENEW_REPLY = `301YNN${'20261121    120000'}AODEMO|AAalice|ABit-0001|AJSome title|AH20261219    235900|`;

const options = peerConnectionOptions;

let peer: ScriptedPeer | null = null;
let connection: Sip2Connection | null = null;
afterEach(async () => {
  connection?.destroy();
  connection = null;
  await peer?.close();
  peer = null;
});

async function connect(script: Script, overrides: Partial<ConnectionOptions> = {}): Promise<Sip2Connection> {
  peer = await startScriptedPeer(script);
  connection = await Sip2Connection.open(options(peer.port, overrides));
  return connection;
}

const requestsOf = (code: string) => peer!.received.filter((frame) => frame.startsWith(code));

describe('SIP2 connection against a scripted peer', () => {
  it('logs in with 93 (AY0) and reads the ACS status from 99 before it is ready', async () => {
    const conn = await connect(() => {});
    expect(peer!.received[0]).toMatch(/^9300CNpaia\|COpaia-secret\|AY0AZ[0-9A-F]{4}$/);
    expect(peer!.received[1]).toMatch(/^9900802\.00AY1AZ[0-9A-F]{4}$/);
    expect(conn.status).toBe('ready');
    expect(conn.acsStatus?.institutionId).toBe('DEMO');
    expect(conn.acsStatus?.supportedMessages).toBe('YNNNYYYYYYYNNYYY');
  });

  it('answers a request and advances the AY sequence number, wrapping after 9', async () => {
    const conn = await connect((frame, reply) => reply(signed(PATRON_REPLY, sequenceOf(frame))));
    for (let i = 0; i < 12; i++) {
      const response = await conn.send(PATRON_INFO);
      expect(response.personalName).toBe('Alice Example');
    }
    const sequences = requestsOf('63').map(sequenceOf);
    expect(sequences).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 0, 1, 2, 3]);
  });

  it('rejects a refused terminal login with IlsUnavailable that does not leak the password', async () => {
    const server = net.createServer((socket) => socket.on('data', () => socket.write(`${signed('940', 0)}\r`)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const error = await Sip2Connection.open(options(port)).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(IlsUnavailable);
      expect((error as Error).message).toMatch(/rejected the SIP2 terminal login/);
      expect((error as Error).message).not.toContain('paia-secret');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reports a refused TCP connection as IlsUnavailable', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    await new Promise((resolve) => server.close(resolve));
    const error = await Sip2Connection.open(options(port)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsUnavailable);
    expect((error as Error).message).toMatch(/ECONNREFUSED/);
  });

  it('gives IlsTimeout (request sent) when the ILS never answers, and closes the connection', async () => {
    const conn = await connect(() => {});
    const started = Date.now();
    const error = await conn.send(PATRON_INFO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsTimeout);
    expect((error as IlsTimeout).requestSent).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
    expect(conn.status).toBe('closed');
  });

  it('bounds each request from its own sending: two slow answers in a row, each in time, both arrive', async () => {
    // 400 ms per answer against a 700 ms bound: the second answer comes 800 ms after the first request went out.
    const conn = await connect(
      (frame, reply) => {
        if (frame.startsWith('63')) setTimeout(() => reply(signed(PATRON_REPLY, sequenceOf(frame))), 400);
      },
      { responseTimeoutMs: 700 },
    );
    expect((await conn.send(PATRON_INFO)).personalName).toBe('Alice Example');
    expect((await conn.send(PATRON_INFO)).personalName).toBe('Alice Example');
    expect(conn.status).toBe('ready');
  });

  it('sends 97 after a bad checksum and takes the good resend', async () => {
    let answers = 0;
    const conn = await connect((frame, reply) => {
      if (frame.startsWith('63')) {
        answers++;
        reply(`${PATRON_REPLY}AY${sequenceOf(frame)}AZ0000`); // wrong checksum
      } else if (frame.startsWith('97')) {
        const last = requestsOf('63').at(-1)!;
        reply(signed(PATRON_REPLY, sequenceOf(last)));
      }
    });
    const response = await conn.send(PATRON_INFO);
    expect(response.patronIdentifier).toBe('alice');
    expect(answers).toBe(1);
    expect(requestsOf('97')).toEqual(['97AZFEF5']);
  });

  it('gives up with IlsProtocolError after maxResends unreadable answers', async () => {
    const conn = await connect((frame, reply) => {
      if (frame.startsWith('63') || frame.startsWith('97')) reply('%%garbage%%');
    });
    const error = await conn.send(PATRON_INFO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsProtocolError);
    expect(requestsOf('97')).toHaveLength(2);
    expect(requestsOf('63')).toHaveLength(1);
    expect(conn.status).toBe('closed');
  });

  it('resends the identical bytes of a renew when the ILS answers 96, and never otherwise', async () => {
    let seen = 0;
    const conn = await connect((frame, reply) => {
      if (!frame.startsWith('29')) return;
      seen++;
      reply(seen === 1 ? signed('96') : signed(RENEW_REPLY, sequenceOf(frame)));
    });
    const response = await conn.send(RENEW);
    expect(response.ok).toBe(true);
    const renewals = peer!.receivedRaw.filter((raw) => raw.toString('latin1').startsWith('29'));
    expect(renewals).toHaveLength(2);
    expect(renewals[1]!.equals(renewals[0]!)).toBe(true);
  });

  it('treats a 96 in answer to its own 97 as a failed exchange (3M rule)', async () => {
    const conn = await connect((frame, reply) => {
      if (frame.startsWith('63')) reply('64garbage-without-checksum');
      else if (frame.startsWith('97')) reply(signed('96'));
    });
    const error = await conn.send(PATRON_INFO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsProtocolError);
    expect((error as Error).message).toMatch(/96 after 97/);
  });

  it('discards a response carrying another sequence number and waits for the right one', async () => {
    const conn = await connect((frame, reply) => {
      const seq = sequenceOf(frame)!;
      reply(signed(PATRON_REPLY.replace('Alice Example', 'Stale Answer'), (seq + 5) % 10));
      setTimeout(() => reply(signed(PATRON_REPLY, seq)), 20);
    });
    const response = await conn.send(PATRON_INFO);
    expect(response.personalName).toBe('Alice Example');
  });

  it('logs a flood of stale frames as one line with a count, not one warning per frame', async () => {
    const lines: Array<{ msg: string; anomaly?: string; level: number }> = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const counted: string[] = [];
    const anomalies = new AnomalyLog({ logger, onAnomaly: (kind) => counted.push(kind) });
    const conn = await connect(
      (frame, reply) => {
        const seq = sequenceOf(frame)!;
        for (let i = 0; i < 2000; i++)
          reply(signed(PATRON_REPLY.replace('Alice Example', 'Stale Answer'), (seq + 1 + (i % 9)) % 10));
        reply(signed(PATRON_REPLY, seq));
      },
      { logger, anomalies },
    );
    for (let i = 0; i < 3; i++) expect((await conn.send(PATRON_INFO)).personalName).toBe('Alice Example');
    expect(counted.filter((kind) => kind === 'stale-sequence')).toHaveLength(6000);
    expect(lines.filter((line) => line.anomaly === 'stale-sequence')).toHaveLength(1);
    anomalies.flush();
    const summary = lines.filter((line) => line.anomaly === 'stale-sequence').at(-1) as { count?: number };
    expect(summary.count).toBe(5999);
  });

  it('re-sends a read the ILS answered with a 98 status, but fails a renew instead of re-sending it', async () => {
    const conn = await connect((frame, reply) => {
      const seq = sequenceOf(frame);
      const earlier = (code: string) => peer!.received.filter((f) => f.startsWith(code)).length;
      if (frame.startsWith('63'))
        reply(
          earlier('63') === 1
            ? signed('98NYYYNN030003' + '20261121    120000' + '2.00AODEMO|BXYNNNYYYYYYYNNYYY|', seq)
            : signed(PATRON_REPLY, seq),
        );
      if (frame.startsWith('29'))
        reply(signed('98NYYYNN030003' + '20261121    120000' + '2.00AODEMO|BXYNNNYYYYYYYNNYYY|', seq));
    });
    const response = await conn.send(PATRON_INFO);
    expect(response.personalName).toBe('Alice Example');
    expect(requestsOf('63')).toHaveLength(2);
    expect(conn.acsStatus?.onlineStatus).toBe(false);

    const error = await conn.send(RENEW).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsProtocolError);
    expect((error as IlsProtocolError).requestSent).toBe(true);
    expect(requestsOf('29')).toHaveLength(1);
  });

  it('reports EOF in the middle of a reply as IlsUnavailable with the request sent', async () => {
    const conn = await connect((_frame, _reply, socket) => {
      socket.end(Buffer.from(PATRON_REPLY.slice(0, 20), 'latin1'));
    });
    const error = await conn.send(PATRON_INFO).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(IlsUnavailable);
    expect((error as IlsUnavailable).requestSent).toBe(true);
    expect(conn.status).toBe('closed');
  });

  it('refuses a value containing the field delimiter before anything is sent', async () => {
    const conn = await connect((frame, reply) => reply(signed(PATRON_REPLY, sequenceOf(frame))));
    const error = await conn.send({ ...PATRON_INFO, patronPassword: 'pa|ss' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Sip2EncodeError);
    expect((error as Error).message).not.toContain('pa|ss');
    expect(requestsOf('63')).toHaveLength(0);
    expect(conn.status).toBe('ready');
  });

  it('accepts CRLF-terminated answers from the ILS', async () => {
    const conn = await connect((frame, _reply, socket) => {
      socket.write(`${signed(PATRON_REPLY, sequenceOf(frame))}\r\n`);
    });
    expect((await conn.send(PATRON_INFO)).patronIdentifier).toBe('alice');
    expect((await conn.send(PATRON_INFO)).patronIdentifier).toBe('alice');
  });

  it('refuses a second request while one is in flight', async () => {
    const conn = await connect((frame, reply) => setTimeout(() => reply(signed(PATRON_REPLY, sequenceOf(frame))), 50));
    const first = conn.send(PATRON_INFO);
    await expect(conn.send(PATRON_INFO)).rejects.toBeInstanceOf(IlsUnavailable);
    expect((await first).patronIdentifier).toBe('alice');
  });
});
