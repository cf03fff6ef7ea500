/**
 * Conformance: request errors for bad input (invalid_request 400 and 422 and
 * the auth errors of writes), with the simulator's counters proving that a
 * rejected write never reached the library system: no renew (29) and no hold
 * (15) executed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS, expectOk, expectRequestError, item, type Reply, type Session, useFixture } from './support.js';

const WRITES = ['renew', 'request', 'cancel'] as const;
/** A document every write method would act on if the request got through. */
const LIVE_DOC = { doc: [{ item: item('it-0002') }] };

describe.each(DIALECTS)('bad input (%s)', (dialect) => {
  const fx = useFixture(dialect);
  let alice: Session;

  beforeAll(async () => {
    alice = await fx().client.login('alice');
  });

  afterAll(async () => {
    await fx().sim.reset();
  });

  /** Runs the requests and checks that neither a renew (29) nor a hold (15) was executed meanwhile. */
  async function nothingExecuted(run: () => Promise<void>): Promise<void> {
    const before = { renew: await fx().executed('29'), hold: await fx().executed('15') };
    await run();
    expect({ renew: await fx().executed('29'), hold: await fx().executed('15') }, 'SIP2 writes executed').toEqual(
      before,
    );
  }

  function raw(
    method: string,
    body: string | Buffer,
    contentType: string | undefined,
    token = alice.token,
  ): Promise<Reply> {
    return fx().client.call('POST', `/core/alice/${method}`, {
      token,
      raw: body,
      headers: contentType === undefined ? {} : { 'Content-Type': contentType },
    });
  }

  it('invalid_request 400: "Malformed request (JSON parse error ...)" for renew, request and cancel; nothing executed', async () => {
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        for (const body of ['{"doc": [', '{doc: []}', "{'doc': []}", '', '   ', '{"doc": [{"item": "x"}]} trailing']) {
          expectRequestError(await raw(method, body, 'application/json'), { status: 400, error: 'invalid_request' });
        }
      }
    });
  });

  it('POST request body: "Content-Type request header MUST be application/json or application/json; charset=utf-8" (others: 400, nothing executed)', async () => {
    const json = JSON.stringify(LIVE_DOC);
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        for (const type of [
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/xml',
          'json',
          undefined,
        ]) {
          const reply = await raw(method, json, type);
          expectRequestError(reply, { status: 400, error: 'invalid_request' });
        }
      }
    });
  });

  it('POST request body: both application/json and application/json; charset=utf-8 are accepted', async () => {
    // unknown URIs: a document error each, so nothing changes in the library
    const body = JSON.stringify({ doc: [{ item: 'https://elsewhere.example/item/1' }] });
    for (const type of ['application/json', 'application/json; charset=utf-8', 'application/json;charset=UTF-8']) {
      const reply = await raw('renew', body, type);
      expectOk(reply);
    }
  });

  it('POST request body: "MUST be JSON in UTF-8" (a declared other charset or bytes that are not UTF-8: 400, nothing executed)', async () => {
    await nothingExecuted(async () => {
      const latin1Body = Buffer.from(
        '{"doc":[{"item":"https://lib.example.org/item/it-0002","storage":"Zweigstelle Süd"}]}',
        'latin1',
      );
      for (const method of WRITES) {
        expectRequestError(await raw(method, JSON.stringify(LIVE_DOC), 'application/json; charset=iso-8859-1'), {
          status: 400,
          error: 'invalid_request',
        });
        expectRequestError(await raw(method, latin1Body, 'application/json'), {
          status: 400,
          error: 'invalid_request',
        });
      }
    });
  });

  it('invalid_request 422: "Parameters parsed but do not fit the method": an empty doc list (doc is 1..n); nothing executed', async () => {
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        expectRequestError(await fx().client.post(`/core/alice/${method}`, { doc: [] }, { token: alice.token }), {
          status: 422,
          error: 'invalid_request',
        });
      }
    });
  });

  it('invalid_request 422: missing doc, doc not a list, a body that is not an object, documents without item or edition, non-string URIs; nothing executed', async () => {
    const bodies: unknown[] = [
      {},
      { doc: 'https://lib.example.org/item/it-0002' },
      { doc: { item: item('it-0002') } },
      [LIVE_DOC],
      null,
      42,
      'renew',
      { doc: [{}] },
      { doc: [{ item: item('it-0002') }, { label: 'no identifier' }] },
      { doc: [{ item: 42 }] },
      { doc: [{ item: [item('it-0002')] }] },
      { doc: [null] },
    ];
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        for (const body of bodies) {
          const reply = await raw(method, JSON.stringify(body), 'application/json');
          expectRequestError(reply, { status: 422, error: 'invalid_request' });
        }
      }
    });
  });

  it('invalid_request 422: more documents than the server takes at once (over maxDocs) are refused before any is executed', async () => {
    // the default limit is 50 documents per call; these are all live loans and holds of alice
    const many = Array.from({ length: 51 }, (_, i) => ({ item: item(['it-0001', 'it-0002', 'it-0020'][i % 3]!) }));
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        expectRequestError(await fx().client.post(`/core/alice/${method}`, { doc: many }, { token: alice.token }), {
          status: 422,
          error: 'invalid_request',
        });
      }
    });
  });

  it('invalid_request 400: a request body larger than the server accepts is refused, nothing executed', async () => {
    const huge = JSON.stringify({ doc: [{ item: item('it-0002'), about: 'x'.repeat(70_000) }] });
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        const reply = await raw(method, huge, 'application/json');
        expect([400, 413]).toContain(reply.status);
        expectRequestError(reply, { status: reply.status, error: 'invalid_request' });
      }
    });
  });

  it("writes without a token, with an invalid token, with a token lacking write_items, or with another patron's token are refused; nothing executed", async () => {
    const { client } = fx();
    const readOnly = await client.login('alice', { scope: 'read_items' });
    const bob = await client.login('bob');
    const frank = await client.login('frank');
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        const path = `/core/alice/${method}`;
        expectRequestError(await client.post(path, LIVE_DOC), { status: 401, error: 'invalid_grant' });
        expectRequestError(await client.post(path, LIVE_DOC, { token: 'AAAAinvalidtokenAAAA' }), {
          status: 401,
          error: 'invalid_grant',
        });
        expectRequestError(await client.post(path, LIVE_DOC, { token: readOnly.token }), {
          status: 403,
          error: 'insufficient_scope',
        });
        expectRequestError(await client.post(path, LIVE_DOC, { token: bob.token }), {
          status: 403,
          error: 'access_denied',
        });
        expectRequestError(await client.post(path, LIVE_DOC, { token: frank.token }), {
          status: 403,
          error: 'access_denied',
        });
        // alice's token on frank's account (frank has a live loan, it-0020)
        expectRequestError(
          await client.post(`/core/frank/${method}`, { doc: [{ item: item('it-0020') }] }, { token: alice.token }),
          {
            status: 403,
            error: 'access_denied',
          },
        );
        expectRequestError(await client.post(`/core/no-such-patron-4711/${method}`, LIVE_DOC, { token: alice.token }), {
          status: 403,
          error: 'access_denied',
        });
      }
    });
  });

  it('the token is checked before the body: a malformed body without a valid token is 401, not 400', async () => {
    await nothingExecuted(async () => {
      for (const method of WRITES) {
        expectRequestError(await raw(method, '{"doc": [', 'application/json', 'AAAAinvalidtokenAAAA'), {
          status: 401,
          error: 'invalid_grant',
        });
      }
    });
  });

  it('logout: "patron (string, 1..1)": a logout without patron is invalid_request 422, another patron is access_denied 403; the token stays valid', async () => {
    const { client } = fx();
    const session = await client.login('alice');
    for (const body of [{}, { patron: '' }, { patron: 42 }]) {
      expectRequestError(await client.post('/auth/logout', body, { token: session.token }), {
        status: 422,
        error: 'invalid_request',
        api: 'auth',
      });
    }
    expectRequestError(await client.post('/auth/logout', { patron: 'bob' }, { token: session.token }), {
      status: 403,
      error: 'access_denied',
      api: 'auth',
    });
    expectRequestError(
      await client.call('POST', '/auth/logout', {
        token: session.token,
        raw: '{"patron":',
        headers: { 'Content-Type': 'application/json' },
      }),
      {
        status: 400,
        error: 'invalid_request',
        api: 'auth',
      },
    );
    expectOk(await client.get('/core/alice', { token: session.token }));
  });

  it('login: a malformed body (not JSON, unsupported content type) is invalid_request 400 and issues no token', async () => {
    const { client } = fx();
    const cases: Array<[string, string | undefined]> = [
      ['{"username": "alice", "password": ', 'application/json'],
      ['username=alice&password=alice-pass&grant_type=password', 'text/plain'],
      ['<login/>', 'application/xml'],
      ['{"username":"alice","password":"alice-pass","grant_type":"password"}', undefined],
    ];
    for (const [body, type] of cases) {
      const reply = await client.call('POST', '/auth/login', {
        raw: body,
        headers: type === undefined ? {} : { 'Content-Type': type },
      });
      expectRequestError(reply, { status: 400, error: 'invalid_request', api: 'auth' });
      expect(reply.body).not.toHaveProperty('access_token');
    }
  });

  it('login: credentials in the URL query are refused (400), never accepted', async () => {
    const reply = await fx().client.call('POST', '/auth/login', {
      query: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
      form: { username: 'alice', password: 'alice-pass', grant_type: 'password' },
    });
    expectRequestError(reply, { status: 400, error: 'invalid_request', api: 'auth' });
  });

  it('a document list with unknown URIs among good ones: the good ones are executed, the unknown ones are document errors', async () => {
    const before = await fx().executed('29');
    const reply = await fx().client.post(
      '/core/alice/renew',
      { doc: [{ item: 'https://elsewhere.example/item/1' }, { item: item('it-0002') }] },
      { token: alice.token },
    );
    const docs = expectOk(reply).doc as Array<Record<string, unknown>>;
    expect(docs.length).toBe(2);
    const good = docs.find((doc) => doc.item === item('it-0002'));
    const bad = docs.find(
      (doc) => doc.requested === 'https://elsewhere.example/item/1' || doc.item === 'https://elsewhere.example/item/1',
    );
    expect(good).toBeDefined();
    expect(good).not.toHaveProperty('error');
    expect(typeof bad?.error).toBe('string');
    expect(await fx().executed('29')).toBe(before + 1);
    await fx().sim.reset();
  });
});
