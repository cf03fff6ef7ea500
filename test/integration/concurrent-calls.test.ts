/**
 * Large calls at the same time share the pool instead of crowding each other
 * out: each call keeps at most sip2.pool.max of its SIP2 requests in the pool
 * at once, so a few patrons with long lists cannot fill the waiting queue
 * (sip2.pool.maxWaiting) and turn everyone else away with 503.
 */
import { describe, expect, it } from 'vitest';
import { item, useFixture } from '../conformance/support.js';

const POOL = 2;
const MAX_WAITING = 10;
const CALLS = 5; // CALLS × POOL requests at most: POOL running, the rest within MAX_WAITING

describe('concurrent large calls', () => {
  const fx = useFixture('generic', {
    PAIA_SIP2_POOL_MIN: String(POOL),
    PAIA_SIP2_POOL_MAX: String(POOL),
    PAIA_SIP2_POOL_MAX_WAITING: String(MAX_WAITING),
    PAIA_AUTH_MAX_SESSIONS_PER_PATRON: '100',
  });

  it(`${CALLS} items calls for 120 loans each at once all answer in full`, async () => {
    const { client } = fx();
    const sessions = await Promise.all(Array.from({ length: CALLS }, () => client.login('dave')));
    const replies = await Promise.all(
      sessions.map((session) => client.get('/core/dave/items', { token: session.token })),
    );
    for (const reply of replies) {
      expect(reply.status, reply.text.slice(0, 300)).toBe(200);
      expect((reply.body.doc as unknown[]).length).toBe(120);
    }
  });

  it(`${CALLS} DAIA requests for 40 items each at once all answer in full`, async () => {
    const ids = Array.from({ length: 40 }, (_, i) => item(`dv-${String(i + 1).padStart(4, '0')}`)).join('|');
    const replies = await Promise.all(
      Array.from({ length: CALLS }, () => fx().client.get('/daia', { query: { id: ids, format: 'json' } })),
    );
    for (const reply of replies) {
      expect(reply.status, reply.text.slice(0, 300)).toBe(200);
      expect((reply.body.document as Array<{ item?: unknown[] }>).filter((doc) => doc.item?.length === 1)).toHaveLength(
        40,
      );
    }
  });
});
