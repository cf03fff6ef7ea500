/**
 * The known PAIA clients (shared/reference/README.md), replayed request by
 * request the way each one talks, against the real gateway and simulator:
 * no packaged copy of them can be installed here (App::PAIA is on CPAN,
 * VuFind and Lukida are PHP applications), so each test does what the
 * client's code does and fails where that client would.
 */
import { describe, expect, it } from 'vitest';
import { DIALECTS, item, today, useFixture } from './support.js';

describe.each(DIALECTS)('known PAIA clients (%s)', (dialect) => {
  const fx = useFixture(dialect);

  it('App::PAIA: JSON login, Bearer header only, every answer 200 JSON without doc[].error, expires_in, X-OAuth-Scopes', async () => {
    const { client, sim } = fx();
    await sim.reset();
    const login = await client.post('/auth/login', {
      username: 'alice',
      password: 'alice-pass',
      grant_type: 'password',
    });
    expect(login.status).toBe(200);
    expect(Number.isInteger(login.body.expires_in)).toBe(true);
    const token = String(login.body.access_token);
    const patron = String(login.body.patron);

    // App::PAIA treats any status but 200, any non-JSON body and any doc[].error as failure.
    const calls = [
      await client.get(`/core/${patron}`, { token }),
      await client.get(`/core/${patron}/items`, { token }),
      await client.get(`/core/${patron}/fees`, { token }),
      await client.post(`/core/${patron}/renew`, { doc: [{ item: item('it-0002') }] }, { token }),
      await client.post(`/core/${patron}/request`, { doc: [{ item: item('it-0030') }] }, { token }),
      await client.post(`/core/${patron}/cancel`, { doc: [{ item: item('it-0030') }] }, { token }),
    ];
    for (const reply of calls) {
      expect(reply.status, reply.request).toBe(200);
      expect(reply.json, reply.request).toBeTypeOf('object');
      for (const doc of (reply.body.doc as Array<Record<string, unknown>> | undefined) ?? []) {
        expect(doc.error, reply.request).toBeUndefined();
      }
      expect(reply.headers.get('x-oauth-scopes'), reply.request).toContain('read_patron');
    }
    const logout = await client.post('/auth/logout', { patron }, { token });
    expect(logout.status).toBe(200);
    expect((await client.get(`/core/${patron}`, { token })).status).toBe(401);
  });

  it('VuFind: asks for change_password too, reads the granted scope, requires status 0 and a future expiry, renew with item + status 3 + endtime, fees by its regex', async () => {
    const { client, sim } = fx();
    await sim.reset();
    const login = await client.post('/auth/login', {
      username: 'alice',
      password: 'alice-pass',
      grant_type: 'password',
      scope: 'read_patron read_fees read_items write_items change_password',
    });
    expect(login.status).toBe(200);
    const scopes = String(login.body.scope).split(' ');
    expect(scopes).toEqual(expect.arrayContaining(['read_patron', 'read_fees', 'read_items', 'write_items']));
    expect(scopes).not.toContain('change_password');
    const token = String(login.body.access_token);
    const patron = String(login.body.patron);

    // VuFind puts the patron id into the URL as it is, unescaped.
    const record = await client.get(`/core/${patron}`, { token });
    expect(record.body.status).toBe(0);
    expect(String(record.body.expires) > today()).toBe(true);

    const renew = await client.post(`/core/${patron}/renew`, { doc: [{ item: item('it-0002') }] }, { token });
    const renewed = (renew.body.doc as Array<Record<string, unknown>>)[0]!;
    // VuFind counts a renewal as done only with item, status 3 and endtime.
    expect(renewed.item).toBe(item('it-0002'));
    expect(renewed.status).toBe(3);
    expect(renewed.endtime).toMatch(/^\d{4}-\d{2}-\d{2}$/);

    const placed = await client.post(`/core/${patron}/request`, { doc: [{ item: item('it-0030') }] }, { token });
    expect((placed.body.doc as Array<Record<string, unknown>>)[0]!.error).toBeUndefined();

    const fees = await client.get(`/core/${patron}/fees`, { token });
    const VUFIND_MONEY = /^([0-9]+\.[0-9][0-9]) ([A-Z]{3})$/;
    expect(String(fees.body.amount)).toMatch(VUFIND_MONEY);
    const fee = fees.body.fee as Array<Record<string, unknown>>;
    expect(fee.length).toBeGreaterThan(0);
    for (const entry of fee) {
      expect(String(entry.amount)).toMatch(VUFIND_MONEY);
      expect(typeof entry.about).toBe('string');
    }
  });

  it('Lukida: builds core URLs from the login username', async () => {
    const { client } = fx();
    const login = await client.post('/auth/login', {
      username: 'emile',
      password: 'emile-pass',
      grant_type: 'password',
    });
    expect(login.status).toBe(200);
    const token = String(login.body.access_token);
    const byUsername = await client.get('/core/emile/items', { token });
    expect(byUsername.status).toBe(200);
    const docs = byUsername.body.doc as Array<Record<string, unknown>>;
    // emile's three loans and his title-level hold on "Der Vorleser"
    expect(docs.filter((doc) => doc.status === 3)).toHaveLength(3);
    expect(docs.filter((doc) => doc.status === 1 && doc.edition !== undefined && doc.item === undefined)).toHaveLength(
      1,
    );
  });
});
