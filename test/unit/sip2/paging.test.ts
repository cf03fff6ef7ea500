/**
 * fetchPatronList against a scripted ILS (no sockets): how many 63s it sends
 * for what the 64s announce, honest or not.
 */
import { describe, expect, it } from 'vitest';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import { fetchPatronList } from '../../../src/sip2/paging.js';
import type { PatronInformation, PatronInformationResponse } from '../../../src/sip2/spec.js';

const requests = new Sip2Messages({ institutionId: 'DEMO' });
const build = (start: number, end: number) => requests.patronInformation('dave', { list: 'charged', start, end });

/** An ILS with `entries` loans that returns at most `perPage` per 64 and announces `announced` (default: the truth). */
function ils(options: {
  entries: number;
  perPage: number;
  announced?: number;
  ignoresPaging?: boolean;
  shortPageAt?: number;
  /** Fills every page to perPage, whatever BQ asks for. */
  overfills?: boolean;
}) {
  const sent: Array<[number, number]> = [];
  const send = async (request: PatronInformation): Promise<PatronInformationResponse> => {
    const start = Number(request.startItem);
    const end = Number(request.endItem);
    sent.push([start, end]);
    const from = options.ignoresPaging ? 1 : start;
    let take = options.overfills ? options.perPage : Math.min(end - from + 1, options.perPage);
    if (options.shortPageAt === start) take = Math.max(1, take - 3);
    const chargedItems: string[] = [];
    for (let n = from; n < from + take && n <= options.entries; n++) chargedItems.push(`it-${n}`);
    return {
      code: '64',
      patronStatus: {} as PatronInformationResponse['patronStatus'],
      language: '000',
      transactionDate: null,
      holdItemsCount: 0,
      overdueItemsCount: 0,
      chargedItemsCount: options.announced ?? options.entries,
      fineItemsCount: 0,
      recallItemsCount: 0,
      unavailableHoldsCount: 0,
      institutionId: 'DEMO',
      patronIdentifier: 'dave',
      personalName: 'Dave',
      chargedItems,
    };
  };
  return { send, sent };
}

describe('fetchPatronList', () => {
  it('reports to onEntries only the entries within the announced count, even from a page filled past it', async () => {
    const { send } = ils({ entries: 9, perPage: 4, announced: 6, overfills: true });
    const reported: string[] = [];
    const list = await fetchPatronList(send, build, 'charged', {
      pageSize: 4,
      onEntries: (entries) => reported.push(...entries),
    });
    expect(list.entries).toEqual(['it-1', 'it-2', 'it-3', 'it-4', 'it-5', 'it-6']);
    expect(reported).toEqual(list.entries);
  });

  it('reads a list in the pages the count calls for, at the page size the ILS really returns', async () => {
    const { send, sent } = ils({ entries: 120, perPage: 20 });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 50 });
    expect(list.entries).toEqual(Array.from({ length: 120 }, (_, i) => `it-${i + 1}`));
    expect(list.requests).toBe(6);
    expect(sent).toHaveLength(6);
    expect(list.truncated).toBe(false);
  });

  it('caps a list at maxEntries whatever the ILS announces: 9,999 claimed, 10 per page, 100 read in 10 requests', async () => {
    const { send, sent } = ils({ entries: 9999, perPage: 10 });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 10, maxEntries: 100 });
    expect(list.entries).toHaveLength(100);
    expect(sent).toHaveLength(10);
    expect(Math.max(...sent.map(([, end]) => end))).toBe(100);
    expect(list.truncated).toBe(true);
  });

  it('never sends more than the pages the count calls for, even when the ILS announces more than it has', async () => {
    const { send, sent } = ils({ entries: 25, perPage: 10, announced: 9999 });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 10, maxEntries: 500 });
    expect(sent).toHaveLength(50);
    expect(list.entries).toHaveLength(25);
    expect(list.truncated).toBe(true);
  });

  it('leaves a short page’s gap empty rather than asking again', async () => {
    const { send, sent } = ils({ entries: 30, perPage: 10, shortPageAt: 11 });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 10 });
    expect(sent).toHaveLength(3);
    expect(list.entries).toHaveLength(27);
    expect(list.truncated).toBe(true);
  });

  it('keeps the first page only when the ILS ignores BP/BQ', async () => {
    const { send, sent } = ils({ entries: 30, perPage: 10, ignoresPaging: true });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 10 });
    expect(list.entries).toEqual(Array.from({ length: 10 }, (_, i) => `it-${i + 1}`));
    expect(sent).toHaveLength(3);
    expect(list.truncated).toBe(true);
  });

  it('asks for no more than maxEntries on the first page either', async () => {
    const { send, sent } = ils({ entries: 500, perPage: 100 });
    const list = await fetchPatronList(send, build, 'charged', { pageSize: 100, maxEntries: 30 });
    expect(sent).toEqual([[1, 30]]);
    expect(list.entries).toHaveLength(30);
  });
});
