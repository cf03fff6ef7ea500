import type { Queue, QueueAddOptions } from 'p-queue';

/** A queued task as p-queue hands it over (p-queue does not export the type). */
type RunFunction = () => Promise<unknown>;

/**
 * Waiting tasks (the pool's requests), in arrival order: the queue class p-queue
 * keeps its queued tasks in (its `queueClass` option), with one addition,
 * `cancel(id)`, which takes a waiting task out at once.
 *
 * p-queue's own way to take a waiting task out is an AbortSignal per task.
 * Under load most requests wait for a connection, and an AbortController,
 * its signal and the two listeners p-queue adds and removes cost more CPU
 * than everything else the queue does for the request (CPU profile of the
 * pool under B1's load: createAbortSignal 16%, plus the garbage collector
 * reclaiming the signals). A cancelled task never runs, so the promise
 * p-queue returned for it never settles: WaitingQueue answers such a
 * caller itself.
 *
 * No priorities: order is arrival order. A Map keeps insertion
 * order and deletes in constant time, which is all a FIFO with removal needs.
 */
export class WaitingLine implements Queue<RunFunction, QueueAddOptions> {
  private readonly runs = new Map<string, RunFunction>();

  get size(): number {
    return this.runs.size;
  }

  enqueue(run: RunFunction, options?: Partial<QueueAddOptions>): void {
    const id = options?.id;
    // The pool passes an id with every task (p-queue assigns one otherwise, as a string).
    if (id === undefined) throw new Error('WaitingLine needs an id for each task');
    this.runs.set(id, run);
  }

  dequeue(): RunFunction | undefined {
    for (const [id, run] of this.runs) {
      this.runs.delete(id);
      return run;
    }
    return undefined;
  }

  /** Takes the waiting task `id` out; false when it is not waiting (it started, or was never queued). */
  cancel(id: string): boolean {
    return this.runs.delete(id);
  }

  filter(options: Readonly<Partial<QueueAddOptions>>): RunFunction[] {
    // Every task has priority 0 (p-queue's default); no other priority exists in this line.
    return (options.priority ?? 0) === 0 ? [...this.runs.values()] : [];
  }

  setPriority(): void {
    throw new Error('a WaitingLine serves tasks in arrival order; it has no priorities');
  }
}
