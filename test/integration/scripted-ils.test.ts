/**
 * The real gateway process against a scripted SIP2 peer (test/helpers/scripted-peer.ts): ILS answers the
 * simulator never gives. Here, an account expiry in year 0000, which ILSs write for "no date": it must not
 * make the account expired (issue 24).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type ScriptedPeer, sequenceOf, signed, startScriptedPeer } from '../helpers/scripted-peer.js';

const DATE = '20261121    120000';
/** The expiry field (PA, the generic dialect's, read as YYYYMMDD) each patron's 64 carries. */
const EXPIRY: Record<string, string> = {
  zero: '00000101',
  zerosip2: '00000101   Z000000',
  allzero: '00000000    000000',
  valid: '20991231',
};

/** A 64 for the patron the 63 names, valid with a right password (BL Y, CQ Y), carrying its PA. */
function patronReply(frame: string): string {
  const patron = /\|AA([^|]*)\|/.exec(frame)?.[1] ?? '';
  return `64              001${DATE}000000000000000000000000AODEMO|AA${patron}|AEPatron ${patron}|BLY|CQY|PA${EXPIRY[patron]}|`;
}

describe('an account expiry in year 0000', () => {
  let peer: ScriptedPeer;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    peer = await startScriptedPeer((frame, reply) => {
      if (frame.startsWith('63')) reply(signed(patronReply(frame), sequenceOf(frame)));
      // Status checks after the first (the peer answers that one): the pool's keepalive.
      else if (frame.startsWith('99'))
        reply(signed(`98YYYYNN030003${DATE}2.00AODEMO|AMScripted Library|BXYNNNYYYYYYYNNYYY|`, sequenceOf(frame)));
    });
    // The peer takes any terminal login, so the simulator's settings do.
    gateway = await startGatewayProcess({ sip2Port: peer.port, dialect: 'generic' });
  });

  afterAll(async () => {
    await gateway?.stop();
    await peer?.close();
  });

  async function patronAfterLogin(username: string): Promise<{ scope: string; patron: Record<string, unknown> }> {
    const login = await fetch(`${gateway.url}/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ username, password: 'any-pass-word', grant_type: 'password' }),
      signal: AbortSignal.timeout(5000),
    });
    expect(login.status).toBe(200);
    const { patron, access_token, scope } = (await login.json()) as Record<string, string>;
    const response = await fetch(`${gateway.url}/core/${encodeURIComponent(patron!)}`, {
      headers: { Authorization: `Bearer ${access_token}` },
      signal: AbortSignal.timeout(5000),
    });
    expect(response.status).toBe(200);
    return { scope: scope!, patron: (await response.json()) as Record<string, unknown> };
  }

  it.each(['zero', 'zerosip2', 'allzero'])(
    '%s: the account is active (status 0) with no expires, and the login grants write_items',
    async (username) => {
      const { scope, patron } = await patronAfterLogin(username);
      expect(patron.status).toBe(0);
      expect(patron).not.toHaveProperty('expires');
      expect(scope.split(' ')).toContain('write_items');
    },
  );

  it('a real expiry date is read (so the cases above are about year 0000)', async () => {
    const { patron } = await patronAfterLogin('valid');
    expect(patron).toMatchObject({ status: 0, expires: '2099-12-31' });
  });
});
