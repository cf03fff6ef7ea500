/**
 * The items alive right now (responses in flight, connections open), each in
 * until it leaves: a doubly linked list whose entry is the item's way out.
 *
 * Why not a Set: one item entering and leaving a long-lived Set on every
 * request made V8 promote nearly every request's objects to the old
 * generation and collect them there (bench/README.md, "CPU per request,
 * fifth round"): the gateway's Set of responses in flight alone took B1's
 * HTTP layer, with a wait in each call, from 4 KB to 700 KB promoted per
 * scavenge and from 2 to 31 mark-compacts in a run. A removed entry lets go
 * of its item and its neighbours, so it keeps nothing alive however long it
 * lingers.
 */
export class LiveList<T> {
  #first: Entry<T> | null = null;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Puts `item` in; the function returned takes it out (once; later calls do nothing). */
  add(item: T): () => void {
    const entry: Entry<T> = { item, previous: null, next: this.#first, live: true };
    if (this.#first !== null) this.#first.previous = entry;
    this.#first = entry;
    this.#size += 1;
    return () => this.#remove(entry);
  }

  /** The items in now, newest first: a copy, so that taking items out while going through it is safe. */
  values(): T[] {
    const items: T[] = [];
    for (let entry = this.#first; entry !== null; entry = entry.next) items.push(entry.item as T);
    return items;
  }

  #remove(entry: Entry<T>): void {
    if (!entry.live) return;
    entry.live = false;
    if (entry.previous !== null) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next !== null) entry.next.previous = entry.previous;
    entry.previous = null;
    entry.next = null;
    entry.item = undefined;
    this.#size -= 1;
  }
}

interface Entry<T> {
  item: T | undefined;
  previous: Entry<T> | null;
  next: Entry<T> | null;
  live: boolean;
}
