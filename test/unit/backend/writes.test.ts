/**
 * The write engine (writes.ts) and the steps of renew, request and cancel (write-plans.ts) on their own:
 * what each document is planned as, which writes go out (one per distinct target), and how each document
 * is answered from its write's outcome. The backend's use of them is tested in sip2-backend.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { ItemInfoCache } from '../../../src/backend/item-cache.js';
import { SharedReads } from '../../../src/backend/shared-reads.js';
import { compileUriTemplates } from '../../../src/backend/uris.js';
import { cancelSteps, type PlanContext, renewSteps, requestSteps } from '../../../src/backend/write-plans.js';
import { isOutcomeUnknown, runWrites, type WriteRun } from '../../../src/backend/writes.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { loadDialect } from '../../../src/sip2/dialect.js';
import { IlsTimeout, IlsUnavailable, Sip2EncodeError } from '../../../src/sip2/errors.js';
import type { HoldResponse, RenewResponse } from '../../../src/sip2/spec.js';

const DATE = sip2DateFrom(new Date(2026, 2, 15, 12, 0, 0));
const CTX: PlanContext = {
  uris: compileUriTemplates({
    item: 'https://x.org/i/{barcode}',
    edition: 'https://x.org/t/{title}',
    storage: 'https://x.org/loc/{location}',
    patronType: null,
  }),
  dialect: loadDialect('generic'),
};
const I = (barcode: string) => `https://x.org/i/${barcode}`;
const T = (title: string) => `https://x.org/t/${title}`;

const never = (): Promise<never> => Promise.reject(new Error('not to be sent'));
const renewed = (item: string): RenewResponse => ({
  code: '30',
  ok: true,
  renewalOk: true,
  magneticMedia: 'N',
  desensitize: 'N',
  transactionDate: DATE,
  institutionId: 'X',
  patronIdentifier: 'p1',
  itemIdentifier: item,
  titleIdentifier: `Title ${item}`,
  dueDate: '20260412    235900',
});
const held = (ok: boolean): HoldResponse => ({
  code: '16',
  ok,
  available: false,
  transactionDate: DATE,
  institutionId: 'X',
  patronIdentifier: 'p1',
});

function run(overrides: Partial<WriteRun> = {}): WriteRun {
  return { patron: 'p1', maxParallel: 32, sharedReads: new SharedReads(), itemCache: null, ...overrides };
}

describe('write plans: what each document is sent as', () => {
  it('renew: an item URI of this library is its barcode; an edition or a foreign URI is answered unsent', () => {
    const { plan } = renewSteps(CTX, never);
    expect(plan({ item: I('a') })).toEqual({ key: 'a', target: 'a' });
    expect(plan({ edition: T('t1') })).toEqual({
      done: { status: 0, edition: T('t1'), requested: T('t1'), error: 'renewal needs an item URI' },
    });
    expect(plan({ item: 'https://elsewhere.org/i/a' })).toMatchObject({ done: { status: 0, error: 'unknown item' } });
    expect(plan({})).toMatchObject({ done: { status: 0, error: 'unknown item' } });
  });

  it('request: the item, else the title, with the pickup location from storageid, else from storage', () => {
    const { plan } = requestSteps(CTX, never);
    expect(plan({ item: I('a'), storageid: 'https://x.org/loc/MAIN', storage: 'Main hall' })).toEqual({
      key: 'item:a',
      target: { item: 'a', pickupLocation: 'MAIN' },
    });
    expect(plan({ edition: T('t1'), storage: ' Branch ' })).toEqual({
      key: 'title:t1',
      target: { title: 't1', pickupLocation: 'Branch' },
    });
    expect(plan({ item: I('a'), storageid: 'https://elsewhere.org/MAIN', storage: 'Main' })).toMatchObject({
      target: { item: 'a', pickupLocation: 'Main' },
    });
    expect(plan({ item: I('a'), storageid: 'https://elsewhere.org/MAIN' })).toMatchObject({
      done: { status: 5, error: 'unknown pickup location' },
    });
    expect(plan({ edition: 'https://elsewhere.org/t/1' })).toMatchObject({
      done: { status: 5, error: 'unknown edition' },
    });
  });

  it('cancel: the item, else the title, never a pickup location; neither is answered unsent', () => {
    const { plan } = cancelSteps(CTX, never);
    expect(plan({ item: I('a'), storage: 'Main' })).toEqual({ key: 'item:a', target: { item: 'a' } });
    expect(plan({ edition: T('t1') })).toEqual({ key: 'title:t1', target: { title: 't1' } });
    expect(plan({ storage: 'Main' })).toMatchObject({
      done: { status: 0, error: 'the document has neither an item nor an edition URI' },
    });
  });

  it('answers: a renewal its due date; a request its status 1, or 5 with the ILS screen message; a refused cancel 1', () => {
    expect(renewSteps(CTX, never).answer({ item: I('a') }, 'a', renewed('a'))).toEqual({
      status: 3,
      item: I('a'),
      requested: I('a'),
      about: 'Title a',
      duedate: '2026-04-12',
      endtime: '2026-04-12',
    });
    const request = requestSteps(CTX, never);
    expect(request.answer({ item: I('a') }, { item: 'a' }, held(true))).toEqual({
      status: 1,
      item: I('a'),
      requested: I('a'),
    });
    expect(
      request.answer({ edition: T('t') }, { title: 't' }, { ...held(false), screenMessage: [' no ', 'holds '] }),
    ).toEqual({ status: 5, edition: T('t'), requested: T('t'), error: 'no holds' });
    expect(cancelSteps(CTX, never).answer({ item: I('a') }, { item: 'a' }, held(false))).toMatchObject({
      status: 1,
      error: 'the library system refused the cancellation',
    });
  });
});

describe('runWrites: one write per distinct target, each document answered in order', () => {
  it('sends a target named twice once and answers both documents from it, planned answers in place', async () => {
    const sent: string[] = [];
    const steps = renewSteps(CTX, async (item) => {
      sent.push(item);
      return renewed(item);
    });
    const docs = await runWrites(
      [{ item: I('a') }, { edition: T('t') }, { item: I('a') }, { item: I('b') }],
      steps,
      run(),
    );
    expect(sent).toEqual(['a', 'b']);
    expect(docs.map((doc) => [doc.item ?? doc.edition, doc.status, doc.error])).toEqual([
      [I('a'), 3, undefined],
      [T('t'), 0, 'renewal needs an item URI'],
      [I('a'), 3, undefined],
      [I('b'), 3, undefined],
    ]);
  });

  it('at most maxParallel writes at once', async () => {
    let inFlight = 0;
    let most = 0;
    const steps = renewSteps(CTX, async (item) => {
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return renewed(item);
    });
    await runWrites(
      ['a', 'b', 'c', 'd'].map((item) => ({ item: I(item) })),
      steps,
      run({ maxParallel: 2 }),
    );
    expect(most).toBe(2);
  });

  it('a write sent but not answered: "outcome unknown" on its document, never a request error', async () => {
    const steps = renewSteps(CTX, async (item) => {
      if (item === 'a') throw new IlsTimeout('response-timeout', 'no answer', { requestSent: true });
      return renewed(item);
    });
    const docs = await runWrites([{ item: I('a') }, { item: I('b') }], steps, run());
    expect(docs[0]).toMatchObject({ status: 3, item: I('a'), requested: I('a') });
    expect(isOutcomeUnknown(docs[0]!)).toBe(true);
    expect(isOutcomeUnknown(docs[1]!)).toBe(false);
  });

  it('nothing sent and nothing else answered: the first failure is thrown; with one other answer it is a document', async () => {
    const refused = new IlsUnavailable('refused', 'connect ECONNREFUSED');
    const steps = requestSteps(CTX, () => Promise.reject(refused));
    await expect(runWrites([{ item: I('a') }, { item: I('b') }], steps, run())).rejects.toBe(refused);

    const docs = await runWrites([{ item: I('a') }, { item: 'https://elsewhere.org/b' }], steps, run());
    expect(docs.map((doc) => [doc.status, doc.error])).toEqual([
      [5, 'request not sent: the library system is not available; try again later'],
      [5, 'unknown item'],
    ]);
  });

  it('a value SIP2 cannot carry is an unknown document; anything else is a bug, thrown as it is', async () => {
    const unencodable = renewSteps(CTX, () => Promise.reject(new Sip2EncodeError('itemIdentifier', 'contains |')));
    expect(await runWrites([{ item: I('a') }], unencodable, run())).toEqual([
      { status: 0, item: I('a'), requested: I('a'), error: 'unknown item' },
    ]);
    const bug = new TypeError('a bug');
    await expect(
      runWrites(
        [{ item: I('a') }],
        renewSteps(CTX, () => Promise.reject(bug)),
        run(),
      ),
    ).rejects.toBe(bug);
  });

  it("drops the written item's cached answer, and marks it when the outcome is unknown", async () => {
    const invalidated: Array<[string, boolean]> = [];
    const itemCache = new ItemInfoCache({
      ttlMs: 60_000,
      maxEntries: 10,
      onInvalidate: (item, outcomeUnknown) => invalidated.push([item, outcomeUnknown]),
    });
    const steps = renewSteps(CTX, async (item) => {
      if (item === 'b') throw new IlsTimeout('response-timeout', 'no answer', { requestSent: true });
      return renewed(item);
    });
    await runWrites([{ item: I('a') }, { item: I('b') }], steps, run({ itemCache }));
    expect(invalidated.sort()).toEqual([
      ['a', false],
      ['b', true],
    ]);
  });
});
