import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/index.js';
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

describe('the IPC messages', () => {
  it('are told apart from anything else on the channel by their "paia-sip2:" type', () => {
    expect(isFromWorker({ type: 'paia-sip2:hello' })).toBe(true);
    expect(
      isFromWorker({ type: 'paia-sip2:listening', url: 'http://127.0.0.1:1', baseUrl: 'http://127.0.0.1:1' }),
    ).toBe(true);
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
