import { describe, expect, it } from 'vitest';
import { WaitingLine } from '../../../src/sip2/waiting-line.js';

const task = (name: string, ran: string[]) => async () => {
  ran.push(name);
};

describe('the line of requests waiting for a SIP2 connection', () => {
  it('hands tasks out in arrival order and counts those still waiting', async () => {
    const line = new WaitingLine();
    const ran: string[] = [];
    for (const name of ['a', 'b', 'c']) line.enqueue(task(name, ran), { id: name });
    expect(line.size).toBe(3);
    await line.dequeue()?.();
    await line.dequeue()?.();
    expect(ran).toEqual(['a', 'b']);
    expect(line.size).toBe(1);
  });

  it('takes a cancelled task out so that it never runs, and says whether it was still waiting', async () => {
    const line = new WaitingLine();
    const ran: string[] = [];
    for (const name of ['a', 'b', 'c']) line.enqueue(task(name, ran), { id: name });
    expect(line.cancel('b')).toBe(true);
    expect(line.cancel('b')).toBe(false);
    expect(line.size).toBe(2);
    let next = line.dequeue();
    while (next) {
      await next();
      next = line.dequeue();
    }
    expect(ran).toEqual(['a', 'c']);
    expect(line.cancel('a')).toBe(false);
  });

  it('lists the waiting tasks for p-queue (priority 0 only) and refuses priorities', () => {
    const line = new WaitingLine();
    const ran: string[] = [];
    line.enqueue(task('a', ran), { id: 'a' });
    expect(line.filter({ priority: 0 })).toHaveLength(1);
    expect(line.filter({})).toHaveLength(1);
    expect(line.filter({ priority: 1 })).toHaveLength(0);
    expect(() => line.setPriority()).toThrow(/arrival order/);
    expect(line.dequeue()).toBeDefined();
    expect(line.dequeue()).toBeUndefined();
  });
});
