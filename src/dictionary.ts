/**
 * A string-keyed table for entries that come and go all the time (one per
 * SIP2 read in flight): a Map's get, has, set and delete, kept in a
 * null-prototype object instead of a Map.
 *
 * Why not a Map (or a Set): V8 replaces a Map's hash table every few
 * insertions once entries keep being deleted, and the table it replaces
 * keeps a pointer to its successor (so that iterators still walking it can
 * follow) along with the entries it held then. Once one of those tables has
 * been promoted to the old generation, its successor, the next one and every
 * entry they held stay alive from scavenge to scavenge until the next
 * mark-compact: nearly every call's objects are then promoted and collected
 * there. With 50 libraries in one gateway (a larger old generation, in
 * which a table gets promoted at all) that cost a call about 15 % more CPU
 * (bench/README.md, "CPU per request, sixth round"). A replaced dictionary
 * table points to nothing, so at most the entries it held outlive it.
 */
export class Dictionary<V> {
  /**
   * No prototype: "constructor" or "__proto__" is a key like any other, and V8 keeps the object in dictionary
   * mode (keys that read as array indices, "17", go to its elements instead, also a table of their own).
   */
  readonly #entries: Record<string, V> = Object.create(null) as Record<string, V>;

  get(key: string): V | undefined {
    return this.#entries[key];
  }

  has(key: string): boolean {
    return key in this.#entries;
  }

  set(key: string, value: V): void {
    this.#entries[key] = value;
  }

  delete(key: string): void {
    delete this.#entries[key];
  }

  /** The keys in now: a copy, so that deleting while going through them is safe. */
  keys(): string[] {
    return Object.keys(this.#entries);
  }
}
