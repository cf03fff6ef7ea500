import type { StateStore } from '../state/index.js';
import type { Components } from './components.js';

/**
 * The memory store of each library (`state.store: memory`), held by the
 * library's id rather than by its parts (issue 29). The store takes
 * `{state.dir}/{id}` for the process (its lock names our pid, so a second
 * store on it in this process would be refused and run without its state
 * file), and holds the library's sessions: parts built again on SIGHUP for
 * the same id (a replacement, or a library removed and added back while it
 * still drains) use the store the running parts hold, so their tokens stay
 * valid; the store closes (its state file written a last time) when the last
 * parts using it have closed, and a store opened after that waits for that
 * close, so that its lock and file are free. `state` is the process's and a
 * reload never changes it, so the store's settings stay right. With Redis
 * each parts' own client reaches the same keys, and none of this is needed.
 */
export class LibraryStores {
  readonly #held = new Map<string, { store: Promise<StateStore>; users: number }>();
  /** A store's close under way, per id: a store opened again for that id waits for it. */
  readonly #closing = new Map<string, Promise<void>>();

  /**
   * Builds a library's parts on its store (`open`ed when the library has
   * none): the parts' close and destroy give the store back; a build that
   * fails gives it back at once.
   */
  async build(
    id: string,
    open: () => Promise<StateStore>,
    build: (store: StateStore) => Promise<Components>,
  ): Promise<Components> {
    const release = once(() => this.#release(id));
    let parts: Components;
    try {
      parts = await build(await this.#take(id, open));
    } catch (error) {
      await release();
      throw error;
    }
    return {
      ...parts,
      async close(deadline, log) {
        try {
          await parts.close(deadline, log);
        } finally {
          await release();
        }
      },
      destroy() {
        parts.destroy();
        release().catch(() => {});
      },
    };
  }

  #take(id: string, open: () => Promise<StateStore>): Promise<StateStore> {
    let entry = this.#held.get(id);
    if (entry === undefined) {
      const closed = this.#closing.get(id) ?? Promise.resolve();
      entry = { store: closed.then(open), users: 0 };
      this.#held.set(id, entry);
    }
    entry.users += 1;
    return entry.store;
  }

  async #release(id: string): Promise<void> {
    const entry = this.#held.get(id);
    if (entry === undefined) return;
    entry.users -= 1;
    if (entry.users > 0) return;
    this.#held.delete(id);
    const closing = entry.store.then(
      (store) => store.close(),
      () => {}, // never opened: nothing to close
    );
    const settled = closing.catch(() => {});
    this.#closing.set(id, settled);
    void settled.then(() => {
      if (this.#closing.get(id) === settled) this.#closing.delete(id);
    });
    await closing;
  }
}

/** `fn` run at most once; every later call gets the first call's promise. */
function once(fn: () => Promise<void>): () => Promise<void> {
  let result: Promise<void> | null = null;
  return () => {
    result ??= fn();
    return result;
  };
}
