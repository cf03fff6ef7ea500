import { describe, expect, it } from 'vitest';
import { TrafficRecorder } from '../../../sip2-simulator/src/traffic.js';
import { wireFields } from '../../../sip2-simulator/src/wire-fields.js';

const LOGIN = '9300CNpaia|COpaia-secret|CPMAIN|AY0AZF1D3';
const PATRON_INFO = '6300120240102    120000Y         AODEMO|AAalice|ACterm-secret|ADalice-pass|AY1AZEC3A';

describe('the traffic recorder', () => {
  it('keeps each message with every password field masked, and the terminal user of the login', () => {
    const traffic = new TrafficRecorder();
    traffic.opened(1, '127.0.0.1:5000');
    traffic.record(1, 'in', `${LOGIN}\r`);
    traffic.loggedIn(1, 'paia');
    traffic.record(1, 'in', PATRON_INFO);
    const [connection] = traffic.snapshot().connections;
    expect(connection).toMatchObject({ id: 1, remote: '127.0.0.1:5000', user: 'paia', closedAt: null, dropped: 0 });
    const texts = connection!.messages.map((m) => m.text);
    expect(texts[0]).toBe('9300CNpaia|CO***|CPMAIN|AY0AZ****');
    expect(texts[1]).toContain('|AC***|AD***|');
    expect(JSON.stringify(traffic.snapshot())).not.toMatch(/paia-secret|term-secret|alice-pass/);
  });

  it('keeps the last N messages of a connection and the last closed connections, newest first', () => {
    const traffic = new TrafficRecorder({ messagesPerConnection: 3, closedKept: 2 });
    for (const id of [1, 2, 3]) {
      traffic.opened(id, `127.0.0.1:${id}`);
      for (let n = 0; n < 5; n++) traffic.record(id, 'out', `94${n % 2}`);
      traffic.closedConnection(id);
    }
    traffic.opened(4, '127.0.0.1:4');
    const { connections } = traffic.snapshot();
    expect(connections.map((c) => c.id)).toEqual([4, 3, 2]);
    expect(connections[1]!.messages).toHaveLength(3);
    expect(connections[1]!.dropped).toBe(2);
    expect(connections[1]!.closedAt).not.toBeNull();
  });

  it("keeps each message's deviations with it, and records nothing for an unknown connection", () => {
    const traffic = new TrafficRecorder();
    const deviation = { rule: 'login-first', section: 'Login', detail: 'why' } as const;
    traffic.record(9, 'in', LOGIN, [deviation]);
    expect(traffic.snapshot().connections).toEqual([]);
    traffic.opened(1, 'x');
    traffic.record(1, 'in', LOGIN, [deviation]);
    traffic.record(1, 'out', '941AY0AZFDFC');
    expect(traffic.snapshot().connections[0]!.messages.map((m) => m.deviations)).toEqual([[deviation], []]);
  });
});

describe('wireFields', () => {
  it("names a 64's fixed fields by the catalogue and its variable fields by id and name, AY and AZ last", () => {
    const text = `64              00120240102    120000000000000002000000000000AODEMO|AAalice|AEAlice Example|AUit-0001|AY1AZABCD`;
    const decoded = wireFields(text)!;
    expect(decoded.name).toBe('Patron Information Response');
    expect(decoded.fields.slice(0, 4).map((f) => [f.tag, f.name])).toEqual([
      [null, 'patronStatus'],
      [null, 'language'],
      [null, 'transactionDate'],
      [null, 'holdItemsCount'],
    ]);
    expect(decoded.fields.find((f) => f.name === 'chargedItemsCount')!.value).toBe('0002');
    expect(decoded.fields.slice(9)).toEqual([
      { tag: 'AO', name: 'institutionId', value: 'DEMO' },
      { tag: 'AA', name: 'patronIdentifier', value: 'alice' },
      { tag: 'AE', name: 'personalName', value: 'Alice Example' },
      { tag: 'AU', name: 'chargedItems', value: 'it-0001' },
      { tag: 'AY', name: 'sequenceNumber', value: '1' },
      { tag: 'AZ', name: 'checksum', value: 'ABCD' },
    ]);
    expect(decoded.rest).toBe('');
  });

  it('shows what does not fit: a short fixed part, an id the message has not, an id no message has', () => {
    expect(wireFields('6400')).toMatchObject({ fields: [], rest: '00' });
    const login = wireFields('9300CNpaia|CO***|AByes|ZZodd|')!;
    expect(login.fields.map((f) => [f.tag, f.name])).toEqual([
      [null, 'uidAlgorithm'],
      [null, 'pwdAlgorithm'],
      ['CN', 'loginUserId'],
      ['CO', 'loginPassword'],
      ['AB', 'itemIdentifier'],
      ['ZZ', null],
    ]);
    expect(wireFields('XXnonsense')).toBeNull();
  });
});
