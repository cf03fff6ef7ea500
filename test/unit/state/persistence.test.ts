import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { StoreUnavailable } from '../../../src/state/errors.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import {
  LOCK_STALE_INTERVALS,
  SessionPersistence,
  WRITE_INTERVAL_MS,
  WRITE_TIMEOUT_MS,
} from '../../../src/state/memory/persistence.js';
import type { Session } from '../../../src/state/sessions.js';
import { hashToken } from '../../../src/state/tokens.js';

/**
 * The memory store's sessions across restarts (src/state/memory/persistence.ts),
 * against a real directory: a store closed and another opened on the same
 * directory is a graceful restart; one opened without the first being
 * closed is a crash. VuFind keeps its token for expires_in and never logs in
 * again before that (PAIA.php patronLogin(): `$session->expires > time()`
 * reuses `$session->access_token`), so a restart that forgets tokens fails
 * every account page with invalid_grant until they expire.
 */

const root = mkdtempSync(join(tmpdir(), 'paia-state-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const WAIT = { timeout: 5000, interval: 10 };
const freshDir = () => join(root, `dir-${++count}`);

const open: MemoryStore[] = [];
afterEach(async () => {
  for (const store of open.splice(0)) await store.close();
});

function logged(): { lines: Array<{ level: number; msg: string }>; logger: pino.Logger } {
  const lines: Array<{ level: number; msg: string }> = [];
  return { lines, logger: pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) }) };
}

function storeOn(
  dir: string,
  options: { keySecret?: string | null; maxSessions?: number; perPatron?: number; logger?: pino.Logger } = {},
): MemoryStore {
  const persistence = SessionPersistence.open({
    dir,
    keySecret: options.keySecret ?? null,
    logger: options.logger,
    writeIntervalMs: 20,
  });
  const store = new MemoryStore({
    maxSessions: options.maxSessions ?? 100,
    maxSessionsPerPatron: options.perPatron ?? 50,
    persistence,
  });
  open.push(store);
  return store;
}

/** Closes a store as a graceful stop does. */
async function stop(store: MemoryStore): Promise<void> {
  open.splice(open.indexOf(store), 1);
  await store.close();
}

const session = (patron: string): Session => ({
  patron,
  barcode: `${patron}-barcode`,
  scopes: ['read_patron', 'write_items'],
  expiresAt: Date.now() + 3_600_000,
});

const warnings = (lines: Array<{ level: number; msg: string }>) =>
  lines.filter((line) => line.level === 40).map((line) => line.msg);

/** This boot of this host, as state-dir.ts reads it (null off Linux). */
const BOOT = (() => {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
})();
/** A pid no process has (above Linux's pid_max). */
const GONE_PID = 999_999_999;

/** Writes `dir`'s lock as another gateway would have: by default one on this host and boot whose process is gone. */
function writeLock(dir: string, holder: { pid?: number; host?: string; boot?: string | null; ageMs?: number } = {}) {
  const lock = join(dir, 'lock');
  const { ageMs = 0, ...named } = holder;
  writeFileSync(lock, `${JSON.stringify({ pid: GONE_PID, host: hostname(), boot: BOOT, id: 'another', ...named })}\n`);
  const at = new Date(Date.now() - ageMs);
  utimesSync(lock, at, at);
}

/**
 * The gateway holding `dir` crashed (SIGKILL): its lock names a process gone
 * on this host and boot. The store still open in this test process finds its
 * lock not its own and stops writing, as a dead one would.
 */
const crashed = (dir: string) => writeLock(dir);

describe('sessions kept in state.dir', () => {
  it('survive a graceful restart: the same token finds the same session', async () => {
    const dir = freshDir();
    const first = storeOn(dir);
    const token = await first.sessions.create(session('alice'));
    await stop(first);
    const second = storeOn(dir);
    expect(await second.sessions.get(token)).toMatchObject({
      patron: 'alice',
      barcode: 'alice-barcode',
      scopes: ['read_patron', 'write_items'],
    });
    expect(second.sessions.size()).toBe(1);
  });

  it('a logout is on disk before it is answered: after a crash the token stays dead, the others live', async () => {
    const dir = freshDir();
    const first = storeOn(dir);
    const out = await first.sessions.create(session('alice'));
    const kept = await first.sessions.create(session('alice'));
    const other = await first.sessions.create(session('bob'));
    await first.sessions.delete(out);
    // No close: the process died right after answering the logout.
    crashed(dir);
    const afterCrash = storeOn(dir);
    expect(await afterCrash.sessions.get(out)).toBeNull();
    expect(await afterCrash.sessions.get(kept)).not.toBeNull();
    expect(await afterCrash.sessions.deleteAllFor('bob')).toBe(1);
    crashed(dir);
    const afterSecondCrash = storeOn(dir);
    expect(await afterSecondCrash.sessions.get(other)).toBeNull();
    expect(await afterSecondCrash.sessions.get(kept)).not.toBeNull();
  });

  it('a login is on disk within the write interval, so a crash loses only the last moments', async () => {
    const dir = freshDir();
    const first = storeOn(dir);
    const token = await first.sessions.create(session('alice'));
    const file = join(dir, 'sessions.jsonl');
    const deadline = Date.now() + 5000;
    while (!(existsSync(file) && readFileSync(file, 'utf8').includes(hashToken(token)))) {
      if (Date.now() > deadline) throw new Error('the login was not written within 5 s');
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    crashed(dir);
    expect(await storeOn(dir).sessions.get(token)).not.toBeNull();
  });

  it('keep the order of use across a restart: the per-patron bound then ends the least recently used', async () => {
    const dir = freshDir();
    const first = storeOn(dir, { perPatron: 3 });
    const a = await first.sessions.create(session('alice'));
    const b = await first.sessions.create(session('alice'));
    const c = await first.sessions.create(session('alice'));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await first.sessions.get(a);
    await stop(first);
    const second = storeOn(dir, { perPatron: 3 });
    await second.sessions.create(session('alice'));
    expect(await second.sessions.get(b)).toBeNull();
    expect(await second.sessions.get(a)).not.toBeNull();
    expect(await second.sessions.get(c)).not.toBeNull();
  });

  it('hold no token, barcode or patron id in clear; the file, the key and the lock are 0600, a new directory 0700', async () => {
    const dir = freshDir();
    const store = storeOn(dir);
    const token = await store.sessions.create(session('alice'));
    // The lock names its holder (pid, host, boot, the claim's id), is 0600, and is given back at close.
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({
      pid: process.pid,
      host: hostname(),
      boot: BOOT,
    });
    expect(statSync(join(dir, 'lock')).mode & 0o777).toBe(0o600);
    await stop(store);
    const text = readFileSync(join(dir, 'sessions.jsonl'), 'utf8');
    expect(text).toContain(hashToken(token));
    for (const secret of [token, 'alice']) expect(text).not.toContain(secret);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    for (const name of ['sessions.jsonl', 'key']) expect(statSync(join(dir, name)).mode & 0o777, name).toBe(0o600);
    // Given back at a graceful stop.
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('hold at most the store bound (auth.maxSessions), however many logins there were', async () => {
    const dir = freshDir();
    const store = storeOn(dir, { maxSessions: 4 });
    for (let i = 0; i < 20; i++) await store.sessions.create(session(`p${i}`));
    await stop(store);
    expect(readFileSync(join(dir, 'sessions.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(1 + 4);
  });

  it('are keyed by paia.patronIdSecret when set; another secret makes the file unusable (start empty, say so)', async () => {
    const dir = freshDir();
    const first = storeOn(dir, { keySecret: 'a'.repeat(40) });
    const token = await first.sessions.create(session('alice'));
    await stop(first);
    expect(existsSync(join(dir, 'key'))).toBe(false);
    const log = logged();
    const second = storeOn(dir, { keySecret: 'b'.repeat(40), logger: log.logger });
    expect(await second.sessions.get(token)).toBeNull();
    expect(warnings(log.lines)).toEqual([expect.stringMatching(/another key \(paia.patronIdSecret changed/)]);
  });

  it('a second gateway on the same directory keeps its sessions in memory only, and says so in the log and in /readyz', async () => {
    const dir = freshDir();
    const first = storeOn(dir);
    await first.sessions.create(session('alice'));
    const log = logged();
    // The first refreshes its lock every write interval: fresh, and its pid runs (it is this process).
    const refused = SessionPersistence.open({ dir, keySecret: null, logger: log.logger, writeIntervalMs: 1000 });
    expect(refused).toEqual({
      refused: expect.stringMatching(/is in use by another gateway \(pid \d+ on host .*own state.dir/),
    });
    expect(warnings(log.lines)).toEqual([(refused as { refused: string }).refused]);
    const second = new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10, persistence: refused });
    expect(second.health()).toMatchObject({
      problem: null,
      warning: expect.stringMatching(/in use by another gateway/),
    });
  });

  // Two containers on one volume: each gateway runs under tini with the same pid. The pid alone would call the
  // other's lock this process's own (the review of issue 25 found both taking it: two writers).
  it('a fresh lock with this very pid from another host or boot belongs to another gateway: refused', () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    for (const other of [{ host: 'another-container' }, { boot: 'another-boot' }]) {
      writeLock(dir, { pid: process.pid, ...other });
      const opened = SessionPersistence.open({ dir, keySecret: null, writeIntervalMs: 1000 });
      expect(opened, JSON.stringify(other)).toEqual({
        refused: expect.stringContaining(`in use by another gateway (pid ${process.pid} on host`),
      });
    }
  });

  // After a crash and a reboot the lock's pid may run some unrelated process: its age decides, not the pid.
  it('a lock not refreshed for three write intervals is taken over, whatever process its pid names now', async () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    writeLock(dir, { pid: process.ppid, boot: 'a boot before this one', ageMs: 3 * 1000 + 500 });
    const opened = SessionPersistence.open({ dir, keySecret: null, writeIntervalMs: 1000 });
    expect(opened).toBeInstanceOf(SessionPersistence);
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    (opened as SessionPersistence).close();
  });

  it('a lock whose pid is gone on this host and boot is taken over at once, however fresh (a crash)', async () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    writeLock(dir);
    const store = storeOn(dir);
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.pid });
    expect(store.health().warning).toBeNull();
  });

  it('a gateway whose lock another took over stops writing the directory, and says so in the log and in /readyz', async () => {
    const dir = freshDir();
    const log = logged();
    const store = storeOn(dir, { logger: log.logger });
    const before = await store.sessions.create(session('alice'));
    const file = join(dir, 'sessions.jsonl');
    await vi.waitFor(() => expect(existsSync(file) && readFileSync(file, 'utf8')).toContain(hashToken(before)), WAIT);
    // Another gateway judged the lock stale (this one stalled) and renamed its own into place.
    writeLock(dir, { pid: process.ppid });
    const after = await store.sessions.create(session('bob'));
    await vi.waitFor(() => expect(store.health().warning).toMatch(/taken over by another gateway.*memory only/), WAIT);
    await new Promise((resolve) => setTimeout(resolve, 3 * 20));
    expect(readFileSync(file, 'utf8')).not.toContain(hashToken(after));
    expect(warnings(log.lines)).toEqual([expect.stringMatching(/taken over by another gateway/)]);
    // Its lock is not this gateway's to give back.
    await stop(store);
    expect(JSON.parse(readFileSync(join(dir, 'lock'), 'utf8'))).toMatchObject({ pid: process.ppid });
  });

  it('a directory others may write (a planted state file or key would forge sessions): memory only, one warning', () => {
    const dir = freshDir();
    mkdirSync(dir);
    chmodSync(dir, 0o777);
    const log = logged();
    expect(SessionPersistence.open({ dir, keySecret: null, logger: log.logger })).toEqual({
      refused: expect.stringMatching(/is writable by other users \(mode 0777\).*chmod 700/),
    });
    expect(warnings(log.lines)).toEqual([expect.stringMatching(/is writable by other users \(mode 0777\).*chmod 700/)]);
    expect(existsSync(join(dir, 'lock'))).toBe(false);
  });

  it('a directory that cannot be made: memory only, one warning, the store still serves', async () => {
    const blocker = join(root, `file-${++count}`);
    writeFileSync(blocker, 'not a directory');
    const log = logged();
    const store = storeOn(join(blocker, 'state'), { logger: log.logger });
    expect(warnings(log.lines)).toEqual([expect.stringMatching(/cannot be made .*kept in memory only/)]);
    const token = await store.sessions.create(session('alice'));
    expect(await store.sessions.get(token)).not.toBeNull();
    await store.sessions.delete(token);
  });
});

describe('a state file that cannot be used', () => {
  /** A directory with the state file `setUp` makes; the gateway must start empty, say so once, and set it aside. */
  async function startsEmpty(setUp: (file: string) => void, why: RegExp): Promise<void> {
    const dir = freshDir();
    const first = storeOn(dir);
    const token = await first.sessions.create(session('alice'));
    await stop(first);
    const file = join(dir, 'sessions.jsonl');
    rmSync(file);
    setUp(file);
    const log = logged();
    const store = storeOn(dir, { logger: log.logger });
    expect(await store.sessions.get(token)).toBeNull();
    expect(store.sessions.size()).toBe(0);
    expect(warnings(log.lines)).toEqual([expect.stringMatching(why)]);
    expect(warnings(log.lines)[0]).toMatch(/starts with no sessions .*moved to .*sessions\.jsonl\.bad/);
    expect(existsSync(`${file}.bad`)).toBe(true);
    // And the store persists again from here.
    const next = await store.sessions.create(session('alice'));
    await stop(store);
    expect(await storeOn(dir).sessions.get(next)).not.toBeNull();
  }

  it('damaged: starts with no sessions and says so', async () => {
    await startsEmpty(
      (file) => writeFileSync(file, '{"format":"paia-sip2 sessions","version":1,\n\u0000garbage'),
      /damaged|not a session state file/,
    );
  });

  it('unreadable (a directory in its place, which even root cannot read as a file): starts empty and says so', async () => {
    await startsEmpty((file) => mkdirSync(file), /cannot be read \(it is a directory\)/);
  });

  it.skipIf(process.getuid?.() === 0)('unreadable (mode 000, not root): starts empty and says so', async () => {
    await startsEmpty((file) => {
      writeFileSync(file, 'x');
      chmodSync(file, 0);
    }, /cannot be read \(permission denied/);
  });

  it('from another version: starts empty and says so', async () => {
    await startsEmpty(
      (file) => writeFileSync(file, '{"format":"paia-sip2 sessions","version":99,"key":"x","count":0,"savedAt":0}\n'),
      /format version 99, another version of paia-sip2 wrote it/,
    );
  });
});

describe('a logout that cannot be written', () => {
  it('removes the state file instead (nothing comes back); if even that fails, rejects with StoreUnavailable', async () => {
    const dir = freshDir();
    const store = storeOn(dir);
    const out = await store.sessions.create(session('alice'));
    const kept = await store.sessions.create(session('alice'));
    await store.sessions.get(kept);
    // Writing needs the temporary file's name: a directory there makes every write fail.
    mkdirSync(join(dir, 'sessions.jsonl.tmp', 'blocked'), { recursive: true });
    expect(store.health().warning).toBeNull();
    await store.sessions.delete(out);
    // The store serves, and says (in /readyz) that its sessions would not survive a restart now.
    expect(store.health()).toMatchObject({ problem: null, warning: expect.stringMatching(/cannot be written/) });
    expect(existsSync(join(dir, 'sessions.jsonl'))).toBe(false);
    expect(await storeOn(dir).sessions.get(out)).toBeNull();

    // Neither written nor removable: the logout must not be answered as done.
    mkdirSync(join(dir, 'sessions.jsonl', 'blocked'), { recursive: true });
    await expect(store.sessions.delete(kept)).rejects.toBeInstanceOf(StoreUnavailable);
  });
});

describe('the figures the documentation gives', () => {
  const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
  /** A file's text with its line breaks, indents and comment stars as single spaces: prose wraps anywhere. */
  const prose = (path: string) =>
    readFileSync(join(REPO_ROOT, path), 'utf8')
      .replace(/\n\s*\*?/g, ' ')
      .replace(/\s+/g, ' ');
  const seconds = (ms: number) => `${ms / 1000} s`;

  it('are the code: the write interval, the wait of a logout and the age of a stale lock (one source: persistence.ts)', () => {
    const readme = prose('docs/operations.md');
    for (const said of [
      `Within ${seconds(WRITE_INTERVAL_MS)} of a change`,
      `the logins of the last ${seconds(WRITE_INTERVAL_MS)}`,
      `cannot be written in ${seconds(WRITE_TIMEOUT_MS)} removes the file`,
      `takes ${seconds(WRITE_TIMEOUT_MS)} more`,
      `refreshes the lock every ${seconds(WRITE_INTERVAL_MS)}; a lock not refreshed for ${seconds(LOCK_STALE_INTERVALS * WRITE_INTERVAL_MS)}`,
    ]) {
      expect(readme).toContain(said);
    }
    expect(prose('src/config/schema/state.ts')).toContain(`written within ${seconds(WRITE_INTERVAL_MS)} of a change`);
    expect(prose('CHANGELOG.md')).toContain(`written within ${seconds(WRITE_INTERVAL_MS)} of a change`);
  });
});
