import { describe, expect, it } from 'vitest';
import { SharedCalls } from '../../../src/backend/shared-calls.js';
import { SharedReads, shareKey } from '../../../src/backend/shared-reads.js';
import type { CallOptions } from '../../../src/backend/types.js';
import type { CancelSignal } from '../../../src/cancel-signal.js';
import { CallCancelled } from '../../../src/sip2/errors.js';
import { Sip2Messages } from '../../../src/sip2/messages.js';
import type { RequestMessage } from '../../../src/sip2/spec.js';

const messages = new Sip2Messages({ institutionId: 'X', terminalPassword: 'tp' });

/** A send whose answers the test releases by hand; it records every message and the signal it got. */
function manualSend() {
  const sent: Array<{ message: RequestMessage; signal: CancelSignal | undefined }> = [];
  const waiting: Array<(answer: unknown) => void> = [];
  const send = (message: RequestMessage, options?: CallOptions): Promise<never> => {
    sent.push({ message, signal: options?.signal });
    return new Promise((resolve) => waiting.push(resolve as (answer: unknown) => void));
  };
  const answerAll = (answer: unknown) => {
    for (const resolve of waiting.splice(0)) resolve(answer);
  };
  return { send, sent, answerAll };
}

describe('SharedReads', () => {
  it('sends two identical 63s in flight at once as one, and both callers get its answer', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const a = reads.send(messages.patronInformation('alice', { list: 'charged', start: 1, end: 50 }), {}, ils.send);
    const b = reads.send(messages.patronInformation('alice', { list: 'charged', start: 1, end: 50 }), {}, ils.send);
    expect(ils.sent).toHaveLength(1);
    ils.answerAll('64 for alice');
    expect(await a).toBe('64 for alice');
    expect(await b).toBe('64 for alice');
  });

  it('sends two 17s of one item as one; once answered, the next one goes to the ILS again', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const first = [
      reads.send(messages.itemInformation('it-1'), {}, ils.send),
      reads.send(messages.itemInformation('it-1'), {}, ils.send),
    ];
    expect(ils.sent).toHaveLength(1);
    ils.answerAll('18');
    await Promise.all(first);
    const later = reads.send(messages.itemInformation('it-1'), {}, ils.send);
    expect(ils.sent).toHaveLength(2);
    ils.answerAll('18 again');
    expect(await later).toBe('18 again');
  });

  it('never shares reads that differ: another patron, list, page or item', () => {
    const reads = new SharedReads();
    const ils = manualSend();
    for (const message of [
      messages.patronInformation('alice', { list: 'charged', start: 1, end: 50 }),
      messages.patronInformation('bob', { list: 'charged', start: 1, end: 50 }),
      messages.patronInformation('alice', { list: 'hold', start: 1, end: 50 }),
      messages.patronInformation('alice', { list: 'charged', start: 51, end: 100 }),
      messages.patronInformation('alice'),
      messages.itemInformation('it-1'),
      messages.itemInformation('it-2'),
    ]) {
      void reads.send(message, {}, ils.send);
    }
    expect(ils.sent).toHaveLength(7);
  });

  it('writes each value as JSON: ids with quotes, backslashes, line breaks or lone surrogates never meet', () => {
    const ids = ['it-1', 'it"1', 'it\\1', 'it\n1', 'it-1\n17:"it-2"\n', '\ud800', '\ud83e\udd8a', 'it-1\u001f', 'ü'];
    const keys = ids.map((id) => shareKey(messages.itemInformation(id)));
    expect(new Set(keys).size).toBe(ids.length);
    ids.forEach((id, i) => {
      expect(keys[i]).toContain(`\n17:${JSON.stringify(id)}\n`);
      expect(keys[i]).toContain(`itemIdentifier=${JSON.stringify(id)}\n`);
    });
  });

  it('never shares a 63 carrying a patron password (a credential check), even an identical one', () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const login = () => messages.patronInformation('alice', { password: 'secret' });
    void reads.send(login(), {}, ils.send);
    void reads.send(login(), {}, ils.send);
    expect(ils.sent).toHaveLength(2);
    expect(shareKey(login())).toBeNull();
    expect(shareKey(messages.patronInformation('alice', { password: '' }))).toBeNull();
  });

  it('never shares a write: renew (29), hold (15), end session (35), or a patron status (23)', () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const writes = [
      () => messages.renew('alice', 'it-1'),
      () => messages.hold('+', 'alice', { item: 'it-1' }),
      () => messages.hold('-', 'alice', { item: 'it-1' }),
      () => messages.endSession('alice'),
      () => messages.patronStatus('alice'),
    ];
    for (const write of writes) {
      void reads.send(write(), {}, ils.send);
      void reads.send(write(), {}, ils.send);
      expect(shareKey(write())).toBeNull();
    }
    expect(ils.sent).toHaveLength(writes.length * 2);
  });

  it('a caller whose signal aborts stops waiting at once; the shared read goes on for the other', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const gone = new AbortController();
    const stays = new AbortController();
    const a = reads.send(messages.itemInformation('it-1'), { signal: gone.signal }, ils.send);
    const b = reads.send(messages.itemInformation('it-1'), { signal: stays.signal }, ils.send);
    gone.abort(new Error('client went away'));
    await expect(a).rejects.toBeInstanceOf(CallCancelled);
    expect(ils.sent[0]!.signal!.aborted).toBe(false);
    ils.answerAll('18');
    expect(await b).toBe('18');
  });

  it('cancels the shared read once nobody waits for it any more', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const one = new AbortController();
    const two = new AbortController();
    const a = reads.send(messages.itemInformation('it-1'), { signal: one.signal }, ils.send);
    const b = reads.send(messages.itemInformation('it-1'), { signal: two.signal }, ils.send);
    one.abort(new Error('deadline'));
    await expect(a).rejects.toBeInstanceOf(CallCancelled);
    expect(ils.sent[0]!.signal!.aborted).toBe(false);
    two.abort(new Error('deadline'));
    await expect(b).rejects.toBeInstanceOf(CallCancelled);
    expect(ils.sent[0]!.signal!.aborted).toBe(true);
    // A read asked for after that starts anew.
    void reads.send(messages.itemInformation('it-1'), {}, ils.send);
    expect(ils.sent).toHaveLength(2);
  });

  it('a caller without a signal keeps the shared read alive; an already aborted one is refused without a send', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const patient = reads.send(messages.itemInformation('it-1'), {}, ils.send);
    const hasty = new AbortController();
    const b = reads.send(messages.itemInformation('it-1'), { signal: hasty.signal }, ils.send);
    hasty.abort(new Error('gone'));
    await expect(b).rejects.toBeInstanceOf(CallCancelled);
    expect(ils.sent[0]!.signal!.aborted).toBe(false);
    ils.answerAll('18');
    expect(await patient).toBe('18');

    const aborted = AbortSignal.abort(new Error('gone before'));
    await expect(reads.send(messages.itemInformation('it-2'), { signal: aborted }, ils.send)).rejects.toBeInstanceOf(
      CallCancelled,
    );
    expect(ils.sent).toHaveLength(1);
  });

  it('passes a failure on to every caller, and the next read goes to the ILS again', async () => {
    const reads = new SharedReads();
    let calls = 0;
    const failing = () => {
      calls += 1;
      return Promise.reject(new Error('ILS down'));
    };
    const both = [
      reads.send(messages.itemInformation('it-1'), {}, failing),
      reads.send(messages.itemInformation('it-1'), {}, failing),
    ];
    for (const call of both) await expect(call).rejects.toThrow('ILS down');
    expect(calls).toBe(1);
    await expect(reads.send(messages.itemInformation('it-1'), {}, failing)).rejects.toThrow('ILS down');
    expect(calls).toBe(2);
  });
});

describe('SharedReads after a write', () => {
  it('lets no later read join a read of the written item or patron begun before the write', async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const before17 = reads.send(messages.itemInformation('it-1'), {}, ils.send);
    const before63 = reads.send(
      messages.patronInformation('alice', { list: 'charged', start: 1, end: 50 }),
      {},
      ils.send,
    );
    const bob63 = reads.send(messages.patronInformation('bob', { list: 'charged', start: 1, end: 50 }), {}, ils.send);
    const other17 = reads.send(messages.itemInformation('it-2'), {}, ils.send);
    expect(ils.sent).toHaveLength(4);
    // A renewal of it-1 by alice went out (or settled): what is in flight about either may predate it.
    reads.forget({ item: 'it-1', patron: 'alice' });
    const after17 = reads.send(messages.itemInformation('it-1'), {}, ils.send);
    const after63 = reads.send(
      messages.patronInformation('alice', { list: 'charged', start: 1, end: 50 }),
      {},
      ils.send,
    );
    // Reads of others still share.
    const bobAgain = reads.send(
      messages.patronInformation('bob', { list: 'charged', start: 1, end: 50 }),
      {},
      ils.send,
    );
    const otherAgain = reads.send(messages.itemInformation('it-2'), {}, ils.send);
    expect(ils.sent.map(({ message }) => message.code)).toEqual(['17', '63', '63', '17', '17', '63']);
    ils.answerAll('answer');
    await Promise.all([before17, before63, bob63, other17, after17, after63, bobAgain, otherAgain]);
  });

  it("anyPatron (another instance's write, named by digest): no later read joins any patron's 63 begun before, 17s still share", async () => {
    const reads = new SharedReads();
    const ils = manualSend();
    const charged = (patron: string) => messages.patronInformation(patron, { list: 'charged', start: 1, end: 50 });
    const inFlight = [
      reads.send(charged('alice'), {}, ils.send),
      reads.send(charged('bob'), {}, ils.send),
      reads.send(messages.itemInformation('it-1'), {}, ils.send),
    ];
    reads.forget({ anyPatron: true });
    const after = [
      reads.send(charged('alice'), {}, ils.send),
      reads.send(charged('bob'), {}, ils.send),
      reads.send(messages.itemInformation('it-1'), {}, ils.send),
    ];
    expect(ils.sent.map(({ message }) => message.code)).toEqual(['63', '63', '17', '63', '63']);
    ils.answerAll('answer');
    await Promise.all([...inFlight, ...after]);
  });

  it('keeps the lanes apart: a PAIA read never joins a DAIA read waiting for its share of the pool', () => {
    const reads = new SharedReads();
    const ils = manualSend();
    void reads.send(messages.itemInformation('it-1'), {}, ils.send, 'daia');
    void reads.send(messages.itemInformation('it-1'), {}, ils.send, 'paia');
    void reads.send(messages.itemInformation('it-1'), {}, ils.send, 'daia');
    expect(ils.sent).toHaveLength(2);
    // forget() reaches every lane.
    reads.forget({ item: 'it-1' });
    void reads.send(messages.itemInformation('it-1'), {}, ils.send, 'daia');
    expect(ils.sent).toHaveLength(3);
  });
});

describe('SharedCalls', () => {
  it('after forget starts new work, while the forgotten work still answers its callers and leaves the new work in place', async () => {
    const calls = new SharedCalls<string>();
    const releases: Array<(value: string) => void> = [];
    const work = () => new Promise<string>((resolve) => releases.push(resolve));
    const first = calls.run('k', work);
    const joined = calls.run('k', work);
    expect(releases).toHaveLength(1);
    calls.forget('k');
    const fresh = calls.run('k', work);
    expect(releases).toHaveLength(2);
    releases[0]!('old');
    expect(await first).toBe('old');
    expect(await joined).toBe('old');
    expect(calls.has('k')).toBe(true);
    const joinsFresh = calls.run('k', work);
    expect(releases).toHaveLength(2);
    releases[1]!('new');
    expect(await fresh).toBe('new');
    expect(await joinsFresh).toBe('new');
    expect(calls.has('k')).toBe(false);
  });

  it('turns a start that throws into a rejection', async () => {
    const calls = new SharedCalls<string>();
    await expect(
      calls.run('k', () => {
        throw new Error('cannot build');
      }),
    ).rejects.toThrow('cannot build');
    expect(calls.has('k')).toBe(false);
  });
});
