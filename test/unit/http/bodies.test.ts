import { describe, expect, it } from 'vitest';
import { bearer, ITEM, json, login, makeApp, type TestApp } from './helpers.js';

async function authed(): Promise<TestApp & { token: string; patron: string }> {
  const t = makeApp();
  const { token, patron } = await login(t);
  return { ...t, token, patron };
}

function post(
  t: TestApp & { token: string; patron: string },
  method: string,
  body: RequestInit['body'],
  contentType?: string,
  extra: Record<string, string> = {},
) {
  const headers: Record<string, string> = { ...bearer(t.token), ...extra };
  if (contentType !== undefined) headers['Content-Type'] = contentType;
  return t.app.request(`/core/${t.patron}/${method}`, { method: 'POST', headers, body });
}

function writeCalls(t: TestApp): number {
  return t.backend.calls.filter((c) => ['renew', 'request', 'cancel'].includes(c.method)).length;
}

describe('core POST bodies', () => {
  it('renew, request and cancel answer {doc} with document errors kept inside a 200', async () => {
    const t = await authed();
    const renew = await post(
      t,
      'renew',
      JSON.stringify({ doc: [{ item: ITEM('it-1') }, { item: ITEM('gone'), about: 'ignored' }] }),
      'application/json',
    );
    expect(renew.status).toBe(200);
    expect(await json(renew)).toEqual({
      doc: [
        { status: 3, item: ITEM('it-1'), duedate: '2027-01-01', endtime: '2027-01-01' },
        { status: 0, item: ITEM('gone'), error: 'unknown document' },
      ],
    });
    expect(t.backend.callsOf('renew')[0]!.args).toEqual(['1001', [{ item: ITEM('it-1') }, { item: ITEM('gone') }]]);

    const request = await post(
      t,
      'request',
      JSON.stringify({ doc: [{ edition: 'urn:x', storageid: 'urn:desk', storage: 'Desk', queue: 'x' }] }),
      'application/json; charset=UTF-8',
    );
    expect(request.status).toBe(200);
    expect(t.backend.callsOf('request')[0]!.args).toEqual([
      '1001',
      [{ edition: 'urn:x', storage: 'Desk', storageid: 'urn:desk' }],
    ]);

    const cancel = await post(
      t,
      'cancel',
      JSON.stringify({ doc: [{ item: ITEM('it-2'), storage: 'dropped for cancel' }] }),
      'application/json;charset="utf-8"',
    );
    expect(cancel.status).toBe(200);
    expect(t.backend.callsOf('cancel')[0]!.args).toEqual(['1001', [{ item: ITEM('it-2') }]]);
  });

  it('accepts a byte order mark', async () => {
    const t = await authed();
    const response = await post(t, 'renew', `\uFEFF${JSON.stringify({ doc: [{ item: 'x' }] })}`, 'application/json');
    expect(response.status).toBe(200);
  });

  it('reads a valid body right after an invalid one (no decoder state carries over), with and without a BOM', async () => {
    const t = await authed();
    // A truncated multi-byte sequence at the end: a streaming decoder would keep it pending.
    expect((await post(t, 'renew', new Uint8Array([0x7b, 0x7d, 0xe2, 0x82]), 'application/json')).status).toBe(400);
    expect((await post(t, 'renew', JSON.stringify({ doc: [{ item: 'x' }] }), 'application/json')).status).toBe(200);
    expect(
      (await post(t, 'renew', `\uFEFF${JSON.stringify({ doc: [{ item: 'y' }] })}`, 'application/json')).status,
    ).toBe(200);
    expect((await post(t, 'renew', JSON.stringify({ doc: [{ item: 'z' }] }), 'application/json')).status).toBe(200);
  });

  const malformed: Array<[string, RequestInit['body'], string | undefined, RegExp]> = [
    [
      'no Content-Type',
      new TextEncoder().encode('{"doc":[{"item":"x"}]}'),
      undefined,
      /Content-Type application\/json/,
    ],
    ['text/plain', '{"doc":[{"item":"x"}]}', 'text/plain', /unsupported Content-Type/],
    ['form on core', 'doc=x', 'application/x-www-form-urlencoded', /unsupported Content-Type/],
    ['another charset', '{"doc":[{"item":"x"}]}', 'application/json; charset=iso-8859-1', /charset/],
    ['malformed JSON', '{"doc": [', 'application/json', /not valid JSON/],
    ['empty body', '', 'application/json', /empty/],
    ['no body', null, 'application/json', /empty/],
    ['invalid UTF-8', new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x7d]), 'application/json', /UTF-8/],
  ];
  for (const [name, body, contentType, description] of malformed) {
    it(`400 invalid_request for ${name}, backend untouched`, async () => {
      const t = await authed();
      const response = await post(t, 'renew', body, contentType);
      expect(response.status).toBe(400);
      const answer = await json(response);
      expect(answer).toMatchObject({ error: 'invalid_request', code: 400 });
      expect(answer.error_description).toMatch(description);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="PAIA"/);
      expect(writeCalls(t)).toBe(0);
    });
  }

  const unfit: Array<[string, string, unknown, RegExp]> = [
    ['body an array', 'renew', [{ item: 'x' }], /body must be a JSON object/],
    ['body null', 'renew', null, /body must be a JSON object/],
    ['body a string', 'cancel', 'doc', /body must be a JSON object/],
    ['doc missing', 'renew', { docs: [] }, /^doc is missing$/],
    ['doc not an array', 'renew', { doc: { item: 'x' } }, /^doc must be an array/],
    ['doc empty', 'request', { doc: [] }, /^doc must list at least one document$/],
    ['element not an object', 'renew', { doc: ['x'] }, /^doc\[0\] must be an object/],
    ['item not a string', 'renew', { doc: [{ item: 'a' }, { item: 5 }] }, /^doc\[1\]\.item must be a string/],
    ['edition not a string', 'cancel', { doc: [{ edition: ['x'] }] }, /^doc\[0\]\.edition must be a string/],
    ['item null', 'cancel', { doc: [{ item: null }] }, /^doc\[0\]\.item must be a string/],
    ['neither item nor edition', 'renew', { doc: [{ about: 'x' }] }, /^doc\[0\] needs an item or an edition URI$/],
    [
      'empty item and edition',
      'renew',
      { doc: [{ item: '', edition: '' }] },
      /^doc\[0\] needs an item or an edition URI$/,
    ],
    ['storage not a string', 'request', { doc: [{ item: 'x', storage: 1 }] }, /^doc\[0\]\.storage must be a string/],
    [
      'too many documents',
      'renew',
      { doc: Array.from({ length: 6 }, (_, i) => ({ item: `x${i}` })) },
      /^doc must list at most 5 documents/,
    ],
  ];
  for (const [name, method, body, description] of unfit) {
    it(`422 invalid_request naming the problem for ${name}, backend untouched`, async () => {
      const t = await authed();
      const response = await post(t, method, JSON.stringify(body), 'application/json');
      expect(response.status).toBe(422);
      const answer = await json(response);
      expect(answer).toMatchObject({ error: 'invalid_request', code: 422 });
      expect(answer.error_description).toMatch(description);
      expect(writeCalls(t)).toBe(0);
    });
  }

  it('refuses a body over maxBodyBytes with a clear 400, declared or streamed', async () => {
    const t = await authed();
    const big = JSON.stringify({ doc: [{ item: 'x'.repeat(3000) }] });
    const declared = await post(t, 'renew', big, 'application/json');
    expect(declared.status).toBe(400);
    expect((await json(declared)).error_description).toMatch(/too large: at most 2048 bytes/);

    const bytes = new TextEncoder().encode(big);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 500) controller.enqueue(bytes.slice(i, i + 500));
        controller.close();
      },
    });
    const streamed = await t.app.request(`/core/${t.patron}/renew`, {
      method: 'POST',
      headers: { ...bearer(t.token), 'Content-Type': 'application/json' },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(400);
    expect((await json(streamed)).error_description).toMatch(/too large/);
    expect(writeCalls(t)).toBe(0);
  });
});
