/**
 * readBody under @hono/node-server reads Node's request stream itself (no web
 * Request per POST): the same bounds and errors as the web path, which the
 * in-process tests (app.request) exercise.
 */
import { Readable } from 'node:stream';
import type { Context } from 'hono';
import { describe, expect, it } from 'vitest';
import { readBody } from '../../../src/http/body.js';

function contextOf(incoming: Readable, headers: Record<string, string>): Context {
  const lower = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    env: { incoming },
    req: {
      header: (name: string) => lower[name.toLowerCase()],
      get raw(): Request {
        throw new Error('the web Request must not be built');
      },
    },
  } as unknown as Context;
}

const JSON_TYPE = { 'Content-Type': 'application/json' };
const options = { maxBytes: 64, acceptForm: false };

describe('readBody from a Node request stream', () => {
  it('joins the chunks and parses them, multi-byte characters split across chunks included', async () => {
    const bytes = Buffer.from(JSON.stringify({ doc: [{ item: 'Zoë' }] }));
    const split = bytes.indexOf(0xc3) + 1; // in the middle of ë
    const incoming = Readable.from([bytes.subarray(0, split), bytes.subarray(split)]);
    expect(await readBody(contextOf(incoming, JSON_TYPE), options)).toEqual({ doc: [{ item: 'Zoë' }] });
  });

  it('refuses a declared length over the bound without reading', async () => {
    const incoming = Readable.from([Buffer.from('{}')]);
    await expect(
      readBody(contextOf(incoming, { ...JSON_TYPE, 'Content-Length': '65' }), options),
    ).rejects.toMatchObject({
      status: 400,
      description: expect.stringMatching(/too large: at most 64 bytes/),
    });
    expect(incoming.readableDidRead).toBe(false);
  });

  it('refuses a body that grows over the bound while streamed, and stops reading it', async () => {
    let produced = 0;
    const incoming = new Readable({
      read() {
        produced += 1;
        this.push(Buffer.from(`{"pad":"${'x'.repeat(40)}`));
        if (produced > 100) this.push(null);
      },
    });
    await expect(readBody(contextOf(incoming, JSON_TYPE), options)).rejects.toMatchObject({
      status: 400,
      description: expect.stringMatching(/too large/),
    });
    expect(produced).toBeLessThan(10);
    expect(incoming.destroyed).toBe(true);
  });

  it('a stream that fails half-way is a 400 saying the body could not be read', async () => {
    const incoming = new Readable({
      read() {
        this.destroy(new Error('socket hang up'));
      },
    });
    await expect(readBody(contextOf(incoming, JSON_TYPE), options)).rejects.toMatchObject({
      status: 400,
      description: 'the request body could not be read',
    });
  });

  it('a stream someone already read falls back to the web Request', async () => {
    const incoming = Readable.from([Buffer.from('{}')]);
    incoming.read();
    await expect(readBody(contextOf(incoming, JSON_TYPE), options)).rejects.toThrow(
      'the web Request must not be built',
    );
  });
});
