import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { StoreUnavailable } from '../../../src/state/errors.js';
import { SessionPersistence, USE_WRITE_LAG_MS } from '../../../src/state/memory/persistence.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';
import type { Session } from '../../../src/state/sessions.js';
import { hashToken } from '../../../src/state/tokens.js';

/**
 * The memory store's state file (src/state/memory/persistence.ts and
 * state-dir.ts) on a disk the test holds up: node:fs/promises and node:fs
 * are wrapped so that a test can hold a file's fsync or a rename until it
 * lets go, count renames and see the order of what was done to the key
 * file. The files are real, in a temporary directory.
 *
 * What VuFind relies on here: PAIA.php patronLogin() keeps the token of
 * paiaLogin() for expires_in (`$session->expires > time()` reuses
 * `$session->access_token`), so the file must carry it across restarts. The
 * driver never posts auth/logout itself; clients that do (Lukida, the GBV
 * apps, a script) get the promise: a logout answered 200 is dead for
 * good, across any restart or crash.
 */

/** What the tests do to the file system under the persistence. */
const disk = vi.hoisted(() => ({
  /** Before a file's fsync (its path); a promise holds the fsync until it settles. */
  beforeSync: null as ((path: string) => Promise<unknown> | undefined) | null,
  /** Before a rename (fs/promises); a promise holds it until it settles. */
  beforeRename: null as ((from: string) => Promise<unknown> | undefined) | null,
  renames: 0,
  /** What was done (node:fs, synchronous: open, fsync, rename) to files whose path matches `watch`, by name. */
  watch: null as RegExp | null,
  steps: [] as string[],
}));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof real.open = async (path, flags, mode) => {
    const handle = await real.open(path, flags, mode);
    const sync = handle.sync.bind(handle);
    handle.sync = async () => {
      await disk.beforeSync?.(String(path));
      return sync();
    };
    return handle;
  };
  const rename: typeof real.rename = async (from, to) => {
    disk.renames += 1;
    await disk.beforeRename?.(String(from));
    return real.rename(from, to);
  };
  return { ...real, default: { ...real, open, rename }, open, rename };
});

vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  const paths = new Map<number, string>();
  const watched = (path: unknown) => disk.watch?.test(String(path)) === true;
  const openSync = ((path: string, ...rest: unknown[]) => {
    const fd = (real.openSync as (...args: unknown[]) => number)(path, ...rest);
    paths.set(fd, String(path));
    if (watched(path)) disk.steps.push(`open ${String(path).split('/').pop()}`);
    return fd;
  }) as typeof real.openSync;
  const fsyncSync = ((fd: number) => {
    if (watched(paths.get(fd))) disk.steps.push(`fsync ${paths.get(fd)?.split('/').pop()}`);
    return real.fsyncSync(fd);
  }) as typeof real.fsyncSync;
  const renameSync = ((from: string, to: string) => {
    if (watched(from)) disk.steps.push(`rename ${String(from).split('/').pop()} ${String(to).split('/').pop()}`);
    return real.renameSync(from, to);
  }) as typeof real.renameSync;
  const wrapped = { openSync, fsyncSync, renameSync };
  return { ...real, default: { ...real, ...wrapped }, ...wrapped };
});

const root = mkdtempSync(join(tmpdir(), 'paia-state-disk-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const freshDir = () => join(root, `dir-${++count}`);
const WAIT = { timeout: 5000, interval: 2 };

/** Fsyncs and renames held by a test, let go at the end of each. */
const held: Array<() => void> = [];
const hold = () => new Promise<void>((resolve) => held.push(resolve));
const opened: SessionPersistence[] = [];
afterEach(async () => {
  disk.beforeSync = null;
  disk.beforeRename = null;
  disk.watch = null;
  for (const release of held.splice(0)) release();
  for (const persistence of opened.splice(0)) await persistence.close();
});

const session = (patron: string, now = Date.now()): Session => ({
  patron,
  barcode: `${patron}-barcode`,
  scopes: ['read_patron'],
  expiresAt: now + 3_600_000,
});

/** A session store persisted in `dir`, as the memory store makes it. */
function persisted(
  dir: string,
  options: { writeIntervalMs?: number; writeTimeoutMs?: number; now?: () => number } = {},
): { persistence: SessionPersistence; sessions: LruSessionStore; file: string } {
  const persistence = SessionPersistence.open({
    dir,
    keySecret: null,
    writeIntervalMs: options.writeIntervalMs ?? 10,
    writeTimeoutMs: options.writeTimeoutMs,
    now: options.now,
  });
  if (!(persistence instanceof SessionPersistence)) throw new Error(persistence.refused);
  opened.push(persistence);
  const sessions = new LruSessionStore({ maxSessions: 1000, sink: persistence, now: options.now });
  persistence.attach(sessions);
  return { persistence, sessions, file: join(dir, 'sessions.jsonl') };
}

const fileText = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '');

describe('a logout while a write hangs on the disk', () => {
  // The review of issue 25: a write W took its snapshot with the session S, then hung in fsync longer than the
  // logout's wait; the logout removed the file instead and synced the directory; W came back in that moment, found
  // no removal recorded yet and renamed its file, S in it, into place; the logout was answered 200.
  it('a write held up in fsync since before the logout never puts its snapshot (the logged-out session in it) back', async () => {
    const dir = freshDir();
    const { sessions, file } = persisted(dir, { writeTimeoutMs: 300 });
    const out = await sessions.create(session('alice'));
    const kept = await sessions.create(session('alice'));
    await vi.waitFor(() => expect(fileText(file)).toContain(hashToken(kept)), WAIT);

    // From here every fsync of the temporary file hangs (a stalled disk); a login makes the next write, W, take a
    // snapshot with `out` in it and hang.
    disk.beforeSync = (path) => (path.endsWith('.tmp') ? hold() : undefined);
    const later = await sessions.create(session('bob'));
    await vi.waitFor(() => expect(held).toHaveLength(1), WAIT);

    // The logout's wait for a write runs out; it removes the file instead. While it syncs the directory, W's fsync
    // comes back, and W runs to its end; the write queued after it (its snapshot taken after the logout) hangs.
    let windowOpened = false;
    disk.beforeSync = (path) => {
      if (path.endsWith('.tmp')) return hold();
      if (path !== dir || windowOpened) return undefined;
      windowOpened = true;
      held.shift()?.();
      return vi.waitFor(() => expect(held).toHaveLength(1), WAIT);
    };
    await sessions.delete(out);
    expect(windowOpened).toBe(true);
    // Answered: a crash now must not find `out` in the file.
    expect(fileText(file)).not.toContain(hashToken(out));

    // The disk recovers: the sessions left are written again, `out` never.
    disk.beforeSync = null;
    for (const release of held.splice(0)) release();
    await vi.waitFor(() => expect(fileText(file)).toContain(hashToken(later)), WAIT);
    expect(fileText(file)).toContain(hashToken(kept));
    expect(fileText(file)).not.toContain(hashToken(out));
  });

  it('a logout waits for a rename already called before it removes the file; one that does not end in time is a 503, never a 200', async () => {
    const dir = freshDir();
    const { sessions, file } = persisted(dir, { writeTimeoutMs: 100 });
    const out = await sessions.create(session('alice'));
    await vi.waitFor(() => expect(fileText(file)).toContain(hashToken(out)), WAIT);
    // The next write's rename hangs: it was called with `out` in its file, and would land after any unlink.
    disk.beforeRename = (from) => (from.endsWith('sessions.jsonl.tmp') ? hold() : undefined);
    await sessions.create(session('bob'));
    await vi.waitFor(() => expect(held).toHaveLength(1), WAIT);
    await expect(sessions.delete(out)).rejects.toBeInstanceOf(StoreUnavailable);
  });
});

describe('uses are written at most once a minute', () => {
  // VuFind uses its token on every account page: PAIA.php patronLogin() reads core/{patron} (paiaGetUserDetails()),
  // getMyTransactions() and getMyHolds() read core/{patron}/items (paiaGetItems()): every page is a use. The review
  // counted 162 rewrites of the whole file in 10 minutes for 100 sessions used every 30 s or so, as each session's
  // own lag ran out.
  it('100 sessions, each used every 30 s or so, for 4 minutes: at most one write a minute', async () => {
    let clock = Date.now();
    const now = () => clock;
    const { sessions, file } = persisted(freshDir(), { writeIntervalMs: 5, now });
    const tokens: string[] = [];
    for (let i = 0; i < 100; i++) tokens.push(await sessions.create(session(`p${i}`, clock)));
    await vi.waitFor(() => expect(fileText(file)).toContain(hashToken(tokens[99]!)), WAIT);
    const renamesBefore = disk.renames;

    // Each session used again 6 to 54 s after its last use (30 s on average), at times of its own, as a discovery
    // system's patrons use theirs; a fixed seed, so that every run is the same.
    let seed = 25;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    const nextUse = tokens.map(() => clock + random() * 30_000);
    const stepMs = 6000;
    const minutes = 4;
    for (let step = 1; step <= (minutes * 60_000) / stepMs; step++) {
      clock += stepMs;
      for (const [i, token] of tokens.entries()) {
        if (nextUse[i]! > clock) continue;
        expect(await sessions.get(token)).not.toBeNull();
        nextUse[i] = clock + 6000 + random() * 48_000;
      }
      // A couple of write-interval ticks, in real time: a write due is begun.
      await new Promise((resolve) => setTimeout(resolve, 12));
    }
    const writes = disk.renames - renamesBefore;
    expect(writes).toBeLessThanOrEqual((minutes * 60_000) / USE_WRITE_LAG_MS);
    // Uses are still written: the order of use survives a restart.
    expect(writes).toBeGreaterThan(0);
  });
});

describe('the key of the patron index', () => {
  it('is on disk (fsync) before it is renamed into place: a crash leaves it whole or absent, never empty', () => {
    disk.watch = /\/key(\.tmp)?$/;
    disk.steps = [];
    persisted(freshDir());
    expect(disk.steps).toEqual(['open key.tmp', 'fsync key.tmp', 'rename key.tmp key']);
  });
});
