/**
 * One scrape for every worker (src/gateway/cluster/group-metrics.ts): the
 * primary's gathering and a worker's side of it, with the IPC channel
 * replaced by direct calls and time by vitest's fake timers.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GroupScrapes, type Member, MetricsGathering } from '../../../src/gateway/cluster/group-metrics.js';
import type { FromWorker, ToWorker } from '../../../src/gateway/cluster/messages.js';
import { mergeShares, type Share } from '../../../src/metrics/group.js';
import { parseExposition, single } from '../metrics/exposition.js';

/** One metric of a share, with one series. */
const metric =
  (name: string, type: string) =>
  (value: number): Share[number] => ({ name, help: name, type, aggregator: 'sum', values: [{ value, labels: {} }] });
const counter = metric('paia_http_requests_total', 'counter');
const gauge = metric('paia_sip2_connections', 'gauge');

type GroupAnswer = Extract<ToWorker, { type: 'paia-sip2:group-metrics' }>;

/** Three workers; `askable` says which may be asked; what each is sent is kept. */
function group(askable = [true, true, true]) {
  const sent = new Map<number, ToWorker[]>([1, 2, 3].map((number) => [number, []]));
  const members: Member[] = [1, 2, 3].map((number) => ({
    number,
    askable: () => askable[number - 1] as boolean,
    send: (message) => sent.get(number)?.push(message),
  }));
  const gathering = new MetricsGathering({ members: () => members, timeoutMs: 1000 });
  const asked = (number: number) =>
    (sent.get(number) ?? []).flatMap((message) => (message.type === 'paia-sip2:share-metrics' ? [message.gather] : []));
  const answers = (number: number) =>
    (sent.get(number) ?? []).filter((message): message is GroupAnswer => message.type === 'paia-sip2:group-metrics');
  return { gathering, asked, answers };
}

describe('MetricsGathering (the primary)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('asks every worker, the scraping one too, and answers that one once all have shared', () => {
    const { gathering, asked, answers } = group();
    gathering.begin(2, 7);
    const [gather] = asked(1);
    expect([asked(1), asked(2), asked(3)]).toEqual([[gather], [gather], [gather]]);
    gathering.shared(1, gather!, [counter(1)]);
    gathering.shared(3, gather!, [counter(3)]);
    expect(answers(2)).toEqual([]);
    gathering.shared(2, gather!, [counter(2)]);
    expect(answers(2)).toEqual([
      {
        type: 'paia-sip2:group-metrics',
        scrape: 7,
        shares: [[counter(1)], [counter(2)], [counter(3)]],
        expected: 3,
        scraped: 3,
      },
    ]);
    expect(answers(1)).toEqual([]);
  });

  it('leaves out a worker that has not answered within the timeout; its last counters stand in, its gauges do not', () => {
    const { gathering, asked, answers } = group();
    gathering.begin(1, 1);
    for (const number of [1, 2, 3]) gathering.shared(number, asked(1)[0]!, [counter(number * 10), gauge(number)]);

    gathering.begin(1, 2);
    const second = asked(1)[1]!;
    gathering.shared(1, second, [counter(11), gauge(1)]);
    gathering.shared(2, second, [counter(21), gauge(2)]);
    vi.advanceTimersByTime(999);
    expect(answers(1)).toHaveLength(1);
    vi.advanceTimersByTime(1);
    const answer = answers(1)[1]!;
    expect(answer.scraped).toBe(2);
    expect(answer.shares).toEqual([[counter(11), gauge(1)], [counter(21), gauge(2)], [counter(30)]]);
    // Too late: nothing more is sent.
    gathering.shared(3, second, [counter(31), gauge(3)]);
    expect(answers(1)).toHaveLength(2);
  });

  it('does not wait for a worker whose heartbeat is late, nor for one that exits; an exited one leaves its counts behind', () => {
    const { gathering, asked, answers } = group([true, false, true]);
    gathering.begin(1, 1);
    expect(asked(2)).toEqual([]);
    gathering.shared(1, asked(1)[0]!, [counter(1)]);
    gathering.shared(3, asked(1)[0]!, [counter(3)]);
    expect(answers(1)[0]).toMatchObject({ scraped: 2, expected: 3, shares: [[counter(1)], [counter(3)]] });

    gathering.begin(1, 2);
    gathering.shared(1, asked(1)[1]!, [counter(1)]);
    gathering.gone(3);
    expect(answers(1)[1]).toMatchObject({ scraped: 1, shares: [[counter(1)], [counter(3)]] });
  });

  it("keeps an exited worker's counts, so that the group's counters do not fall when its replacement starts from zero", async () => {
    const { gathering, asked, answers } = group();
    const merged = async (answer: GroupAnswer) =>
      single(parseExposition(await mergeShares(answer.shares, answer)), 'paia_http_requests_total');
    gathering.begin(1, 1);
    for (const number of [1, 2, 3]) gathering.shared(number, asked(1)[0]!, [counter(number * 10), gauge(number)]);
    const before = await merged(answers(1)[0]!);
    expect(before).toBe(60);

    // Worker 3 dies, and dies again: each time its replacement counts from zero.
    for (const [scrape, count] of [
      [2, 1],
      [3, 2],
    ] as const) {
      gathering.gone(3);
      gathering.begin(1, scrape);
      const gather = asked(1).at(-1)!;
      gathering.shared(1, gather, [counter(10), gauge(1)]);
      gathering.shared(2, gather, [counter(20), gauge(2)]);
      gathering.shared(3, gather, [counter(count), gauge(3)]);
    }
    const [, second, third] = answers(1);
    expect(await merged(second!)).toBe(61);
    expect(await merged(third!)).toBe(63);
    expect(third!.scraped).toBe(3);
  });

  it('counts a worker that exits during a scrape it has answered once, in the retired share only', async () => {
    const { gathering, asked, answers } = group();
    gathering.begin(1, 1);
    gathering.shared(3, asked(1)[0]!, [counter(30)]);
    gathering.gone(3);
    gathering.shared(1, asked(1)[0]!, [counter(10)]);
    gathering.shared(2, asked(1)[0]!, [counter(20)]);
    const [answer] = answers(1);
    expect(answer!.scraped).toBe(2);
    expect(single(parseExposition(await mergeShares(answer!.shares, answer!)), 'paia_http_requests_total')).toBe(60);
  });

  it('drops the scrapes of a worker that exits: the answer would reach its replacement', () => {
    const { gathering, asked, answers } = group();
    gathering.begin(2, 1);
    gathering.shared(1, asked(1)[0]!, [counter(1)]);
    gathering.gone(2);
    gathering.shared(3, asked(3)[0]!, [counter(3)]);
    vi.advanceTimersByTime(5000);
    expect(answers(2)).toEqual([]);
  });

  it('answers at once when no worker can be asked, and sends nothing after close()', () => {
    const idle = group([false, false, false]);
    idle.gathering.begin(1, 1);
    expect(idle.answers(1)[0]).toMatchObject({ scraped: 0, shares: [] });

    const closing = group();
    closing.gathering.begin(1, 1);
    closing.gathering.close();
    vi.advanceTimersByTime(5000);
    expect(closing.answers(1)).toEqual([]);
  });
});

describe('GroupScrapes (a worker)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("takes the primary's answer to each scrape by its number", async () => {
    const sent: FromWorker[] = [];
    const scrapes = new GroupScrapes({ send: (message) => sent.push(message), timeoutMs: 500 });
    const first = scrapes.gather();
    const second = scrapes.gather();
    expect(sent).toEqual([
      { type: 'paia-sip2:scrape', scrape: 1 },
      { type: 'paia-sip2:scrape', scrape: 2 },
    ]);
    scrapes.answered({ type: 'paia-sip2:group-metrics', scrape: 2, shares: [[gauge(2)]], expected: 2, scraped: 1 });
    scrapes.answered({ type: 'paia-sip2:group-metrics', scrape: 1, shares: [], expected: 2, scraped: 0 });
    expect(await second).toEqual({ shares: [[gauge(2)]], reach: { expected: 2, scraped: 1 } });
    expect(await first).toEqual({ shares: [], reach: { expected: 2, scraped: 0 } });
  });

  it('fails the scrape when the primary does not answer within the timeout and its margin', async () => {
    const scrapes = new GroupScrapes({ send: () => {}, timeoutMs: 500 });
    const pending = scrapes.gather();
    const failed = expect(pending).rejects.toThrow('the primary process did not answer within 1500 ms');
    vi.advanceTimersByTime(1500);
    await failed;
  });
});
