import { describe, expect, it } from 'vitest';
import { abortable } from '../../../src/backend/abortable.js';

describe('abortable', () => {
  it('settles as the promise does while the signal stays quiet', async () => {
    const controller = new AbortController();
    await expect(abortable(Promise.resolve(7), controller.signal, () => new Error('gone'))).resolves.toBe(7);
    await expect(
      abortable(Promise.reject(new Error('no')), controller.signal, () => new Error('gone')),
    ).rejects.toThrow('no');
  });

  it('rejects with what onAbort returns when the signal aborts first, and at once for an aborted signal', async () => {
    const controller = new AbortController();
    let released = 0;
    const waiting = abortable(new Promise<number>(() => {}), controller.signal, () => {
      released += 1;
      return new Error('caller gone');
    });
    controller.abort();
    await expect(waiting).rejects.toThrow('caller gone');
    await expect(abortable(Promise.resolve(1), controller.signal, () => new Error('already'))).rejects.toThrow(
      'already',
    );
    expect(released).toBe(1);
  });

  it('does not call onAbort once the promise has settled', async () => {
    const controller = new AbortController();
    let called = false;
    await abortable(Promise.resolve('done'), controller.signal, () => {
      called = true;
      return new Error('late');
    });
    controller.abort();
    expect(called).toBe(false);
  });
});
