/**
 * The connection's onRoundTrip observer, against a scripted SIP2 peer on
 * loopback (in-process, real sockets): once per request/response exchange, with the
 * request code and ok or the error code; passed through by the pool.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ConnectionOptions,
  type RoundTripEvent,
  Sip2Connection,
  sip2Sessions,
} from '../../src/sip2/connection.js';
import { IlsTimeout, Sip2EncodeError } from '../../src/sip2/errors.js';
import { Sip2Pool } from '../../src/sip2/index.js';
import {
  PATRON_INFO,
  PATRON_REPLY,
  peerConnectionOptions,
  type Script,
  type ScriptedPeer,
  sequenceOf,
  signed,
  startScriptedPeer,
} from '../helpers/scripted-peer.js';

const answerPatron: Script = (frame, reply) => {
  if (frame.startsWith('63')) reply(signed(PATRON_REPLY, sequenceOf(frame)));
};

function options(
  port: number,
  events: RoundTripEvent[],
  overrides: Partial<ConnectionOptions> = {},
): ConnectionOptions {
  return peerConnectionOptions(port, { onRoundTrip: (event) => void events.push(event), ...overrides });
}

let peer: ScriptedPeer | null = null;
let connection: Sip2Connection | null = null;
afterEach(async () => {
  connection?.destroy();
  connection = null;
  await peer?.close();
  peer = null;
});

const summary = (events: RoundTripEvent[]) => events.map(({ code, outcome }) => `${code} ${outcome}`);

describe('ConnectionOptions.onRoundTrip', () => {
  it('reports the 93 login and 99 status of open(), then each request, with its duration in seconds', async () => {
    peer = await startScriptedPeer(answerPatron);
    const events: RoundTripEvent[] = [];
    connection = await Sip2Connection.open(options(peer.port, events));
    expect(summary(events)).toEqual(['93 ok', '99 ok']);
    await connection.send(PATRON_INFO);
    await connection.send(PATRON_INFO);
    expect(summary(events)).toEqual(['93 ok', '99 ok', '63 ok', '63 ok']);
    for (const event of events) {
      expect(event.seconds).toBeGreaterThanOrEqual(0);
      expect(event.seconds).toBeLessThan(60); // seconds, not milliseconds
    }
  });

  it('counts a request with a 97 resend as one exchange', async () => {
    let first = true;
    peer = await startScriptedPeer((frame, reply) => {
      if (frame.startsWith('63')) {
        if (first)
          reply(`${PATRON_REPLY}AY${sequenceOf(frame)}AZ0000`); // bad checksum: the gateway sends 97
        else reply(signed(PATRON_REPLY, sequenceOf(frame)));
        first = false;
      } else if (frame.startsWith('97')) {
        reply(signed(PATRON_REPLY, sequenceOf(peer!.received.filter((f) => f.startsWith('63')).at(-1)!)));
      }
    });
    const events: RoundTripEvent[] = [];
    connection = await Sip2Connection.open(options(peer.port, events));
    await connection.send(PATRON_INFO);
    expect(summary(events)).toEqual(['93 ok', '99 ok', '63 ok']);
  });

  it('reports a failed exchange with its error code (an ILS that never answers: ILS_TIMEOUT)', async () => {
    peer = await startScriptedPeer(() => {});
    const events: RoundTripEvent[] = [];
    connection = await Sip2Connection.open(options(peer.port, events, { responseTimeoutMs: 200 }));
    await expect(connection.send(PATRON_INFO)).rejects.toBeInstanceOf(IlsTimeout);
    expect(summary(events)).toEqual(['93 ok', '99 ok', '63 ILS_TIMEOUT']);
  });

  it('reports nothing for a message that could not be encoded (nothing was sent)', async () => {
    peer = await startScriptedPeer(answerPatron);
    const events: RoundTripEvent[] = [];
    connection = await Sip2Connection.open(options(peer.port, events));
    await expect(connection.send({ ...PATRON_INFO, patronIdentifier: 'a|b' })).rejects.toBeInstanceOf(Sip2EncodeError);
    expect(summary(events)).toEqual(['93 ok', '99 ok']);
  });

  it('a throwing observer never breaks the exchange', async () => {
    peer = await startScriptedPeer(answerPatron);
    let calls = 0;
    connection = await Sip2Connection.open(
      options(peer.port, [], {
        onRoundTrip: () => {
          calls++;
          throw new Error('metrics bug');
        },
      }),
    );
    const response = await connection.send(PATRON_INFO);
    expect(response.personalName).toBe('Alice Example');
    expect(calls).toBe(3);
  });

  it('the pool hands the observer to every connection it opens', async () => {
    peer = await startScriptedPeer(answerPatron);
    const events: RoundTripEvent[] = [];
    const { id: _id, logger: _logger, ...connectionOptions } = options(peer.port, events);
    const pool = new Sip2Pool({
      connect: sip2Sessions(connectionOptions),
      min: 0,
      max: 1,
      acquireTimeoutMs: 5000,
      maxWaiting: 10,
      keepaliveIntervalMs: 0,
      maxLifetimeMs: 0,
      backoff: { initialMs: 100, maxMs: 1000 },
    });
    try {
      await pool.send(PATRON_INFO);
      await pool.send(PATRON_INFO);
    } finally {
      pool.destroy();
    }
    // One connection opened on demand (93, 99), then both requests on it.
    expect(summary(events)).toEqual(['93 ok', '99 ok', '63 ok', '63 ok']);
  });
});
