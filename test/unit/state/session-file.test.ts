import { describe, expect, it } from 'vitest';
import { decodeSessionFile, encodeSessionFile, SESSION_FILE_VERSION } from '../../../src/state/memory/session-file.js';
import type { StoredSession } from '../../../src/state/memory/sessions.js';
import { sealSession } from '../../../src/state/session-seal.js';
import { hashToken, newToken } from '../../../src/state/tokens.js';

/**
 * The memory store's state file (src/state/memory/session-file.ts): what it
 * holds, and that anything but a whole file of this version and key is
 * refused as a whole (the gateway then starts with no sessions). VuFind
 * (PAIA.php paiaLogin: `$session->expires = time() + expires_in`) keeps a
 * token for its lifetime, so these sessions are what a restart must keep.
 */

const NOW = 1_800_000_000_000;
const KEY_CHECK = 'k'.repeat(43);
const PATRON_KEY = 'p'.repeat(43);

function entry(expiresAt: number, lastUsed: number): { token: string; hash: string; stored: StoredSession } {
  const token = newToken();
  const session = { patron: 'alice', barcode: 'alice', scopes: ['read_patron'], expiresAt };
  const stored: StoredSession = {
    session,
    sealed: sealSession(session, token),
    patronKey: PATRON_KEY,
    expiresAt,
    lastUsed,
  };
  return { token, hash: hashToken(token), stored };
}

describe('the session state file', () => {
  it('round-trips sessions as token hash, patron hash, expiry, last use and the sealed session; sealed only', () => {
    const a = entry(NOW + 60_000, NOW - 5000);
    const b = entry(NOW + 120_000, NOW - 1000);
    const text = encodeSessionFile(
      [
        [a.hash, a.stored],
        [b.hash, b.stored],
      ],
      { keyCheck: KEY_CHECK, now: NOW },
    );
    const lines = text.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[0]!)).toEqual({
      format: 'paia-sip2 sessions',
      version: SESSION_FILE_VERSION,
      key: KEY_CHECK,
      count: 2,
      savedAt: NOW,
    });
    // Neither token, barcode nor patron id in clear.
    for (const secret of [a.token, b.token, 'alice']) expect(text).not.toContain(secret);

    const decoded = decodeSessionFile(text, { keyCheck: KEY_CHECK, now: NOW });
    expect(decoded).toEqual({
      ok: true,
      expired: 0,
      sessions: [
        [a.hash, { ...a.stored, session: null }],
        [b.hash, { ...b.stored, session: null }],
      ],
    });
  });

  it('leaves out sessions that have no sealed form, and reads an empty file of sessions', () => {
    const unsealed = { ...entry(NOW + 1000, NOW).stored, sealed: null };
    const text = encodeSessionFile([['x'.repeat(43), unsealed]], { keyCheck: KEY_CHECK, now: NOW });
    expect(text.split('\n').filter(Boolean)).toHaveLength(1);
    expect(decodeSessionFile(text, { keyCheck: KEY_CHECK, now: NOW })).toEqual({ ok: true, sessions: [], expired: 0 });
  });

  it('drops sessions that expired while the gateway was away, and counts them', () => {
    const live = entry(NOW + 1000, NOW - 10);
    const gone = entry(NOW, NOW - 20);
    const text = encodeSessionFile(
      [
        [live.hash, live.stored],
        [gone.hash, gone.stored],
      ],
      { keyCheck: KEY_CHECK, now: NOW - 100 },
    );
    const decoded = decodeSessionFile(text, { keyCheck: KEY_CHECK, now: NOW });
    expect(decoded.ok && decoded.sessions.map(([hash]) => hash)).toEqual([live.hash]);
    expect(decoded.ok && decoded.expired).toBe(1);
  });

  it('refuses, as a whole and saying why, a file of another version, another key, cut short or damaged', () => {
    const a = entry(NOW + 60_000, NOW);
    const b = entry(NOW + 60_000, NOW);
    const good = encodeSessionFile(
      [
        [a.hash, a.stored],
        [b.hash, b.stored],
      ],
      { keyCheck: KEY_CHECK, now: NOW },
    );
    const [header, first, second] = good.trimEnd().split('\n') as [string, string, string];
    const withHeader = (changes: Record<string, unknown>) =>
      [JSON.stringify({ ...JSON.parse(header), ...changes }), first, second].join('\n');
    const problem = (text: string) => {
      const decoded = decodeSessionFile(text, { keyCheck: KEY_CHECK, now: NOW });
      return decoded.ok ? 'read' : decoded.problem;
    };

    expect(problem(withHeader({ version: SESSION_FILE_VERSION + 1 }))).toMatch(
      /format version 2, another version of paia-sip2 wrote it/,
    );
    expect(problem(withHeader({ key: 'another'.padEnd(43, 'x') }))).toMatch(/another key/);
    expect(problem([header, first].join('\n'))).toMatch(/incomplete \(1 of 2 sessions\)/);
    expect(problem([header, first, second.slice(0, 30)].join('\n'))).toMatch(/line 3 is damaged/);
    expect(problem([header, first, second.replace(/"v1\./, '"{"patron":"x"}.')].join('\n'))).toMatch(/line 3/);
    expect(problem([header, first.replace(a.hash, `${a.hash}"]\n["x`), second].join('\n'))).not.toBe('read');
    expect(problem('garbage\x00\x01')).toBe('it is not a session state file');
    expect(problem('')).toBe('it is not a session state file');
    expect(problem('{"format":"something else","version":1}')).toBe('it is not a session state file');
    expect(problem(good)).toBe('read');
  });
});
