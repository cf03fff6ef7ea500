import { describe, expect, it } from 'vitest';
import { ClientAllowlist, clientRuleProblem } from '../../../src/auth/client-allowlist.js';
import { CLIENT_NOT_ALLOWED } from '../../../src/http/routes/auth.js';
import { bearer, json, jsonPost, login, makeApp } from '../http/helpers.js';

const LOGIN = jsonPost({ username: 'alice', password: 'alice-pass', grant_type: 'password' });

describe('clientRuleProblem', () => {
  it('accepts IPv4 and IPv6 addresses and CIDR blocks', () => {
    for (const entry of [
      '127.0.0.1',
      '10.0.0.0/8',
      '0.0.0.0/0',
      '192.0.2.10/32',
      '::1',
      '2001:db8::/32',
      '::/0',
      'fe80::/10',
      '2001:db8::1/128',
    ]) {
      expect(clientRuleProblem(entry), entry).toBeNull();
    }
  });

  it('names what is wrong with anything else', () => {
    for (const entry of [
      '',
      'localhost',
      '10.0.0',
      '10.0.0.0/',
      '10.0.0.0/33',
      '10.0.0.0/-1',
      '10.0.0.0/8/8',
      '2001:db8::/129',
      '10.0.0.0/ 8',
      '*',
    ]) {
      expect(clientRuleProblem(entry), entry).not.toBeNull();
    }
    expect(clientRuleProblem('intranet')).toMatch(/not an IP address or CIDR block/);
    expect(clientRuleProblem('10.0.0.0/40')).toMatch(/between 0 and 32/);
    expect(clientRuleProblem('::/200')).toMatch(/between 0 and 128/);
  });
});

describe('ClientAllowlist', () => {
  it('an empty list allows any client, even an unknown address', () => {
    const open = new ClientAllowlist([]);
    expect(open.open).toBe(true);
    for (const address of ['127.0.0.1', '::1', 'junk', undefined]) expect(open.allows(address)).toBe(true);
  });

  it('allows addresses inside its blocks, IPv4 and IPv6, and IPv4-mapped IPv6 as IPv4', () => {
    const list = new ClientAllowlist(['10.0.0.0/8', '192.0.2.10', '2001:db8::/32']);
    expect(list.open).toBe(false);
    for (const address of [
      '10.0.0.1',
      '10.255.255.255',
      '192.0.2.10',
      '2001:db8::1',
      '2001:db8:ffff::42',
      '::ffff:10.1.2.3',
      '::FFFF:192.0.2.10',
    ]) {
      expect(list.allows(address), address).toBe(true);
    }
    for (const address of [
      '11.0.0.1',
      '192.0.2.11',
      '127.0.0.1',
      '::1',
      '2001:db9::1',
      '::ffff:127.0.0.1',
      'junk',
      '',
      undefined,
    ]) {
      expect(list.allows(address), String(address)).toBe(false);
    }
  });

  it('throws on a bad entry (configuration is validated before)', () => {
    expect(() => new ClientAllowlist(['10.0.0.0/8', 'intranet'])).toThrow(/"intranet"/);
  });
});

describe('login restricted to allowed clients', () => {
  it('a refused client gets 403 access_denied saying the client is not allowed, before the body is read or the ILS asked', async () => {
    const t = makeApp({ allowedClients: new ClientAllowlist(['10.0.0.0/8']), clientAddress: () => '127.0.0.1' });
    const response = await t.app.request('/auth/login', LOGIN);
    expect(response.status).toBe(403);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = await json(response);
    expect(body).toEqual({ error: 'access_denied', error_description: CLIENT_NOT_ALLOWED });
    expect(body.error_description).toMatch(/this client is not allowed to log in/);
    expect(body.error_description).not.toMatch(/username or password/);
    // even a body that would be malformed gets the same answer
    const malformedBody = await t.app.request('/auth/login', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{',
    });
    expect(malformedBody.status).toBe(403);
    expect(t.backend.callsOf('login')).toHaveLength(0);
  });

  it('an unknown client address is refused when the list is not empty', async () => {
    const t = makeApp({ allowedClients: new ClientAllowlist(['127.0.0.1']), clientAddress: () => undefined });
    expect((await t.app.request('/auth/login', LOGIN)).status).toBe(403);
  });

  it('an allowed client logs in; core stays open to tokens whatever the address', async () => {
    let address = '10.1.2.3';
    const t = makeApp({
      allowedClients: new ClientAllowlist(['10.0.0.0/8', '2001:db8::/32']),
      clientAddress: () => address,
    });
    const { token, patron } = await login(t);
    address = '203.0.113.9';
    expect((await t.app.request(`/core/${patron}`, { headers: bearer(token) })).status).toBe(200);
    expect((await t.app.request('/auth/login', LOGIN)).status).toBe(403);
    address = '2001:db8::7';
    await login(t);
  });

  it('an empty list leaves login open', async () => {
    const t = makeApp({ allowedClients: new ClientAllowlist([]), clientAddress: () => undefined });
    await login(t);
  });
});
