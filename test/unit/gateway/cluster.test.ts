import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/index.js';
import { nextInTurn } from '../../../src/gateway/cluster/hand-out.js';
import { Heartbeat, PING_INTERVAL_MS } from '../../../src/gateway/cluster/heartbeat.js';
import { isFromWorker, isToWorker } from '../../../src/gateway/cluster/messages.js';
import { restartDelayMs } from '../../../src/gateway/cluster/primary.js';

/** The pure parts of `serve --workers N`; the processes themselves are in test/integration/workers.test.ts. */

describe('restartDelayMs', () => {
  it('waits half a second after a first crash and doubles per crash in a row, up to 30 s', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(restartDelayMs)).toEqual([
      500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

describe('nextInTurn', () => {
  const all = () => true;

  it('goes round the workers in order, starting at the first', () => {
    const turns: (number | null)[] = [];
    let last = -1;
    for (let i = 0; i < 7; i += 1) {
      const next = nextInTurn(3, last, all);
      turns.push(next);
      last = next ?? last;
    }
    expect(turns).toEqual([0, 1, 2, 0, 1, 2, 0]);
  });

  it('skips a worker that cannot take a connection and comes back to it once it can', () => {
    const busy = new Set([1]);
    const canTake = (index: number) => !busy.has(index);
    expect(nextInTurn(3, 0, canTake)).toBe(2);
    expect(nextInTurn(3, 2, canTake)).toBe(0);
    busy.delete(1);
    expect(nextInTurn(3, 0, canTake)).toBe(1);
  });

  it('gives the last worker again when it is the only one that can take a connection', () => {
    expect(nextInTurn(2, 1, (index) => index === 1)).toBe(1);
    expect(nextInTurn(1, 0, all)).toBe(0);
  });

  it('is null when no worker can take a connection (or there is none)', () => {
    expect(nextInTurn(3, 1, () => false)).toBeNull();
    expect(nextInTurn(0, -1, all)).toBeNull();
  });
});

describe('Heartbeat', () => {
  it('is not late while every ping is answered', () => {
    const heartbeat = new Heartbeat();
    expect(heartbeat.lateMs(1000)).toBe(0);
    const beat = heartbeat.ping(1000);
    heartbeat.answered(beat);
    expect(heartbeat.lateMs(9000)).toBe(0);
  });

  it('is as late as its oldest unanswered ping, and an answer to a later ping answers the earlier ones too', () => {
    const heartbeat = new Heartbeat();
    const first = heartbeat.ping(0);
    heartbeat.ping(PING_INTERVAL_MS);
    const third = heartbeat.ping(2 * PING_INTERVAL_MS);
    expect(heartbeat.lateMs(2500)).toBe(2500);
    heartbeat.answered(first);
    expect(heartbeat.lateMs(2500)).toBe(2500 - PING_INTERVAL_MS);
    heartbeat.answered(third);
    expect(heartbeat.lateMs(2500)).toBe(0);
  });

  it('ignores an answer to a ping it never sent or already counted', () => {
    const heartbeat = new Heartbeat();
    heartbeat.answered(5);
    const beat = heartbeat.ping(0);
    heartbeat.answered(beat - 1);
    expect(heartbeat.lateMs(100)).toBe(100);
  });
});

describe('the IPC messages', () => {
  it('are told apart from anything else on the channel by their "paia-sip2:" type', () => {
    expect(isFromWorker({ type: 'paia-sip2:hello' })).toBe(true);
    expect(isFromWorker({ type: 'paia-sip2:ready' })).toBe(true);
    expect(isFromWorker({ type: 'paia-sip2:took', id: 7 })).toBe(true);
    expect(isToWorker({ type: 'paia-sip2:connection', id: 7 })).toBe(true);
    expect(isToWorker({ type: 'paia-sip2:ping', beat: 1 })).toBe(true);
    expect(isFromWorker({ type: 'paia-sip2:pong', beat: 1 })).toBe(true);
    expect(isFromWorker({ type: 'paia-sip2:listening' })).toBe(false);
    expect(isToWorker({ type: 'paia-sip2:stop' })).toBe(true);
    expect(isToWorker({ type: 'paia-sip2:hello' })).toBe(false);
    expect(isFromWorker({ type: 'paia-sip2:stop' })).toBe(false);
    expect(isFromWorker({ cmd: 'NODE_CLUSTER', act: 'online' })).toBe(false);
    expect(isToWorker('paia-sip2:stop')).toBe(false);
    expect(isToWorker(null)).toBe(false);
  });

  it('carry the whole configuration unchanged: every setting survives JSON, as the channel sends it', () => {
    const config = configSchema.parse({
      http: { publicUrl: 'https://lib.example.org/paia', tls: { cert: '/c.pem', key: '/k.pem' }, workers: 2 },
      sip2: {
        host: 'ils.example.org',
        tls: { ca: '/ca.pem', servername: 'ils' },
        charset: 'latin1',
        terminal: { user: 'paia-gateway', password: 'gateway-secret', location: '' },
        institution: 'CPL',
        pageSize: 20,
      },
      paia: { itemUri: 'https://lib.example.org/item/{barcode}', editionUri: 'https://lib.example.org/title/{title}' },
      state: { store: 'redis', redis: { url: 'redis://127.0.0.1:6379' } },
    });
    expect(JSON.parse(JSON.stringify(config))).toEqual(config);
  });
});
