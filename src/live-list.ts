/**
 * The items alive right now, oldest first, each in until it leaves: a doubly
 * linked list whose entry is the item's way out. The server's responses in
 * flight and open connections, and TimeoutLine's waits, are kept in one.
 *
 * Why not a Set or a Map: one item entering and leaving a long-lived Set on
 * every request made V8 promote nearly every request's objects to the old
 * generation and collect them there (a replaced hash table keeps its
 * successor alive: dictionary.ts; bench/README.md, "CPU per request, fifth
 * round"): the gateway's Set of responses in flight alone took B1's HTTP
 * layer, with a wait in each call, from 4 KB to 700 KB promoted per scavenge
 * and from 2 to 31 mark-compacts in a run. A removed entry lets go of its
 * item, its neighbours and the list, so it keeps nothing alive however long
 * it lingers.
 */
export class LiveList<T> {
  #first: Entry<T> | null = null;
  #last: Entry<T> | null = null;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Puts `item` in, last; `leave()` on what is returned takes it out. */
  add(item: T): Place {
    const entry = new Entry(item, this, this.#last);
    if (this.#last !== null) this.#last.next = entry;
    else this.#first = entry;
    this.#last = entry;
    this.#size += 1;
    return entry;
  }

  /** The oldest item, still in; undefined when the list is empty. */
  first(): T | undefined {
    return this.#first?.item;
  }

  /** Takes the oldest item out and returns it; undefined when the list is empty. */
  shift(): T | undefined {
    const entry = this.#first;
    if (entry === null) return undefined;
    const item = entry.item;
    entry.leave();
    return item;
  }

  /** The items in now, oldest first: a copy, so that taking items out while going through it is safe. */
  values(): T[] {
    const items: T[] = [];
    for (let entry = this.#first; entry !== null; entry = entry.next) items.push(entry.item as T);
    return items;
  }

  /** Takes every item out. */
  clear(): void {
    while (this.#first !== null) this.#first.leave();
  }

  /** Unlinks `entry`: for Entry.leave only, which calls it once. */
  unlink(entry: Entry<T>): void {
    if (entry.previous !== null) entry.previous.next = entry.next;
    else this.#first = entry.next;
    if (entry.next !== null) entry.next.previous = entry.previous;
    else this.#last = entry.previous;
    this.#size -= 1;
  }
}

/** An item's place in a LiveList. */
export interface Place {
  /** Takes the item out; false when it was out already. */
  leave(): boolean;
}

class Entry<T> implements Place {
  item: T | undefined;
  previous: Entry<T> | null;
  next: Entry<T> | null = null;
  #list: LiveList<T> | null;

  constructor(item: T, list: LiveList<T>, previous: Entry<T> | null) {
    this.item = item;
    this.#list = list;
    this.previous = previous;
  }

  leave(): boolean {
    if (this.#list === null) return false;
    this.#list.unlink(this);
    this.#list = null;
    this.item = undefined;
    this.previous = null;
    this.next = null;
    return true;
  }
}
