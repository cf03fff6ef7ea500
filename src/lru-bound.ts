/**
 * lru-cache options that bound a cache by its number of entries without
 * allocating for all of them up front. With `max`, lru-cache allocates its
 * key, value, link and TTL arrays for `max` entries when the cache is made:
 * about 40 bytes per possible entry, 4 MB at start for the default
 * `auth.maxSessions` of 100,000 however few patrons ever log in. A `maxSize`
 * in which every entry counts 1 is the same bound, and the arrays grow with
 * the entries actually stored.
 */
export function entryBound(maxEntries: number): { maxSize: number; sizeCalculation: () => number } {
  return { maxSize: maxEntries, sizeCalculation: () => 1 };
}
