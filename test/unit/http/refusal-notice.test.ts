import { describe, expect, it } from 'vitest';
import { RefusalNotice } from '../../../src/http/refusal-notice.js';

function notice(options: { afterRefusals?: number; everyMs?: number; maxAddresses?: number } = {}) {
  let now = 0;
  const noticed: Array<[string, number]> = [];
  const refusals = new RefusalNotice({
    ...options,
    notice: (address, count) => noticed.push([address, count]),
    now: () => now,
  });
  return {
    refusals,
    noticed,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

describe('RefusalNotice', () => {
  it('notices an address once when it reaches its refusals, then not again within the period', () => {
    const { refusals, noticed, advance } = notice({ afterRefusals: 3, everyMs: 60_000 });
    refusals.refused('192.0.2.1');
    refusals.refused('192.0.2.1');
    expect(noticed).toEqual([]);
    refusals.refused('192.0.2.1');
    expect(noticed).toEqual([['192.0.2.1', 3]]);
    for (let i = 0; i < 1000; i += 1) refusals.refused('192.0.2.1');
    advance(59_999);
    refusals.refused('192.0.2.1');
    expect(noticed).toHaveLength(1);
    // A new period: counted afresh, noticed again after as many refusals.
    advance(1);
    refusals.refused('192.0.2.1');
    refusals.refused('192.0.2.1');
    expect(noticed).toHaveLength(1);
    refusals.refused('192.0.2.1');
    expect(noticed).toEqual([
      ['192.0.2.1', 3],
      ['192.0.2.1', 3],
    ]);
  });

  it('refusals spread over periods are never noticed: one now and then is no habit', () => {
    const { refusals, noticed, advance } = notice({ afterRefusals: 3, everyMs: 1000 });
    for (let i = 0; i < 10; i += 1) {
      refusals.refused('192.0.2.1');
      refusals.refused('192.0.2.1');
      advance(1000);
    }
    expect(noticed).toEqual([]);
  });

  it('follows at most maxAddresses, forgetting the one followed longest', () => {
    const { refusals, noticed } = notice({ afterRefusals: 2, maxAddresses: 3 });
    for (const address of ['a', 'b', 'c', 'd']) refusals.refused(address);
    expect(refusals.size).toBe(3);
    refusals.refused('a'); // forgotten: starts again at one
    expect(noticed).toEqual([]);
    refusals.refused('d');
    expect(noticed).toEqual([['d', 2]]);
    for (let i = 0; i < 10_000; i += 1) refusals.refused(`198.51.100.${i}`);
    expect(refusals.size).toBe(3);
  });

  it('keeps following an address refused again and again through a burst of others (the least recently refused go first)', () => {
    const { refusals, noticed } = notice({ afterRefusals: 3, maxAddresses: 3 });
    refusals.refused('vufind');
    refusals.refused('x1');
    refusals.refused('vufind');
    refusals.refused('x2');
    refusals.refused('x3'); // forgets x1, the one refused least recently, not vufind
    refusals.refused('vufind');
    expect(noticed).toEqual([['vufind', 3]]);
  });
});
