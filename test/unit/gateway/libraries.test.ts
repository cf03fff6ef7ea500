import { describe, expect, it } from 'vitest';
import { delay } from '../../../src/cancel-signal.js';
import { loadConfig } from '../../../src/config/index.js';
import { allOrNone, libraryPlace } from '../../../src/gateway/libraries.js';
import { librarySegment } from '../../../src/http/libraries.js';

/** Where a library of several lives: its URLs, its state directory, its Redis keys (issue 29). */
describe('a library of several', () => {
  const config = loadConfig({
    env: {
      PAIA_HTTP_BASE_PATH: '/paia',
      PAIA_HTTP_PUBLIC_URL: 'https://paia.example.org/paia',
      PAIA_STATE_DIR: '/var/lib/paia',
    },
  });

  it("has its base path, public URL, state directory and Redis key prefix below the gateway's", () => {
    const placed = libraryPlace(config, 'DE-830');
    expect(placed.http.basePath).toBe('/paia/DE-830');
    expect(placed.http.publicUrl).toBe('https://paia.example.org/paia/DE-830');
    expect(placed.state.dir).toBe('/var/lib/paia/DE-830');
    expect(placed.state.redis.keyPrefix).toBe('paia-sip2:DE-830/');
    expect(placed.sip2).toBe(config.sip2);
  });

  it('keeps a state directory that is off off, and ids that begin like another never share a key prefix', () => {
    const off = loadConfig({ env: { PAIA_STATE_DIR: 'off' } });
    expect(libraryPlace(off, 'A').state.dir).toBeNull();
    const a = libraryPlace(off, 'a').state.redis.keyPrefix;
    const ab = libraryPlace(off, 'a:fact').state.redis.keyPrefix;
    expect(ab.startsWith(a)).toBe(false);
  });

  it('is found by the first path segment below the base path, percent-decoded', () => {
    expect(librarySegment('http://h:1/paia/DE-830/core/x?y=1', '/paia/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/DE-830', '/paia/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/DE%3A830/core', '/paia/')).toBe('DE:830');
    expect(librarySegment('http://h:1/other/DE-830/core', '/paia/')).toBe('');
    expect(librarySegment('http://h:1/DE-830?x', '/')).toBe('DE-830');
    expect(librarySegment('http://h:1/paia/%E0%A4%A/core', '/paia/')).toBe('');
  });
});

describe('building the libraries (allOrNone)', () => {
  it('fails at the first failure, without waiting for the slowest, and drops every part built before or after', async () => {
    const dropped: string[] = [];
    let finishSlow: (value: string) => void = () => {};
    const slow = new Promise<string>((resolve) => (finishSlow = resolve));
    const outcome = allOrNone([Promise.resolve('fast'), Promise.reject(new Error('broken')), slow], (value) =>
      dropped.push(value),
    );
    await expect(outcome).rejects.toThrow('broken');
    expect(dropped).toEqual(['fast']);
    finishSlow('slow');
    await slow;
    await Promise.resolve();
    expect(dropped).toEqual(['fast', 'slow']);
  });

  it('gives every value in order when none fails', async () => {
    await expect(allOrNone([delay(5).then(() => 1), Promise.resolve(2)], () => {})).resolves.toEqual([1, 2]);
  });
});
