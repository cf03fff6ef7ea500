/**
 * What VuFind's PAIA driver (vufind-org/vufind,
 * module/VuFind/src/VuFind/ILS/Driver/PAIA.php) reads before it shows a
 * patron a button, replayed against the real gateway and simulator in every
 * shipped dialect (issue 25, deliverables 1 to 3): the renew checkboxes
 * (`canrenew`), the hold form (`checkRequestIsValid`: status, `expires`,
 * write_items) and "ready for pickup" (status 4) only for holds whose item
 * waits on the hold shelf. Each test names the driver function it encodes.
 *
 * The simulator of each all-in-AS dialect (generic, evergreen, folio) lists
 * no pending hold in CD, as FOLIO's edge-sip2 does (profile
 * unavailable-holds=closed, part of the folio preset): AS lists every hold,
 * and only the item's own 18 tells a ready hold from a pending one. koha
 * lists only ready holds in AS, as Koha does.
 */
import { describe, expect, it } from 'vitest';
import { type Client, item, SHIPPED_DIALECTS, type ShippedDialect, today, useFixture } from './support.js';

/** The scope VuFind asks for at login (PAIA.php paiaLogin: the four core scopes and change_password). */
const VUFIND_SCOPE = 'read_patron read_fees read_items write_items change_password';
const FAR_EXPIRY = '9999-12-31';

const SIMULATOR_PROFILE: Readonly<Record<ShippedDialect, string | undefined>> = {
  generic: 'unavailable-holds=closed',
  evergreen: 'unavailable-holds=closed',
  folio: 'folio',
  koha: undefined,
};

type Doc = Record<string, unknown>;

/** VuFind's login (PAIA.php paiaLogin): the granted scope split at spaces, the token kept for the session. */
async function vufindLogin(client: Client, username: string, password: string) {
  const reply = await client.post('/auth/login', { username, password, grant_type: 'password', scope: VUFIND_SCOPE });
  expect(reply.status, reply.text).toBe(200);
  return {
    token: String(reply.body.access_token),
    patron: String(reply.body.patron),
    scope: String(reply.body.scope).split(' '),
  };
}

/** PAIA.php paiaGetItems: the items answer filtered by status (getMyTransactions '3', getMyHolds '1:4'). */
async function itemsWithStatus(client: Client, session: { token: string; patron: string }, statuses: number[]) {
  const reply = await client.get(`/core/${session.patron}/items`, { token: session.token });
  expect(reply.status, reply.text).toBe(200);
  return (reply.body.doc as Doc[]).filter((doc) => statuses.includes(doc.status as number));
}

describe.each(SHIPPED_DIALECTS)('what VuFind reads from PAIA (%s)', (dialect) => {
  // The gateway as a library with VuFind sets it up (paia.expiresWhenUnknown on); for folio a second one
  // without the setting, as the gateway shipped before it.
  const fx = useFixture(dialect, { PAIA_PAIA_EXPIRES_WHEN_UNKNOWN: FAR_EXPIRY }, dialect === 'folio' ? [{}] : [], {
    profile: SIMULATOR_PROFILE[dialect],
  });

  it('renew checkboxes: canrenew true on the loans of a patron who may renew, false where renewals are denied', async () => {
    const { client, sim } = fx();
    await sim.reset();
    const alice = await vufindLogin(client, 'alice', 'alice-pass');
    const loans = await itemsWithStatus(client, alice, [3]);
    expect(loans.map((doc) => doc.item).sort()).toEqual(['it-0001', 'it-0002', 'it-0003'].map(item));
    for (const doc of loans) {
      // PAIA.php myTransactionsMapping: renewable = canrenew when it is set and the scope has write_items
      // (else false); renew_details, the checkbox's value, is the item only when canrenew is true.
      const renewable = doc.canrenew !== undefined && alice.scope.includes('write_items') ? doc.canrenew : false;
      expect(renewable, String(doc.item)).toBe(true);
    }

    // PAIA.php renewMyItems: posts the renew_details items; success needs item, no error and status 3.
    const renew = await client.post(`/core/${alice.patron}/renew`, { doc: [{ item: item('it-0002') }] }, alice);
    const [renewed] = renew.body.doc as Doc[];
    expect(renewed).toMatchObject({ item: item('it-0002'), status: 3 });
    expect(renewed?.error).toBeUndefined();

    // bob's 64 denies renewal privileges (his account expired): no checkbox, whatever scope he got.
    const bob = await vufindLogin(client, 'bob', 'bob-pass');
    const [loan] = await itemsWithStatus(client, bob, [3]);
    expect(loan).toMatchObject({ item: item('it-0060'), canrenew: false });
  });

  it('renew checkboxes: none at all when the ILS says in its 98 that it takes no renewals (BX renew N)', async () => {
    const { sim, extraGateway } = fx();
    await sim.reset();
    const profile = (await sim.state()).profile.profile;
    // BX position 15 (renew) N, as a site's %supports table says "renew" => 0; a fresh gateway reads that 98.
    await sim.setProfile([profile, 'bx=YYYYYYYYYYYYYYNY'].filter(Boolean).join(','));
    try {
      const { client } = await extraGateway({ PAIA_PAIA_EXPIRES_WHEN_UNKNOWN: FAR_EXPIRY });
      const alice = await vufindLogin(client, 'alice', 'alice-pass');
      const loans = await itemsWithStatus(client, alice, [3]);
      expect(loans).toHaveLength(3);
      for (const doc of loans) expect(doc.canrenew, String(doc.item)).toBe(false);
    } finally {
      await sim.setProfile(profile);
    }
  });

  it('hold form: checkRequestIsValid passes for an active patron (status 0, expires after today, write_items)', async () => {
    const { client, extras, sim } = fx();
    await sim.reset();
    // PAIA.php checkRequestIsValid: isset(status) && status == 0 && isset(expires) && expires > date('Y-m-d')
    // && write_items in the session's scope; paiaGetUserDetails keeps every field of GET core/{patron} as it is.
    const checkRequestIsValid = async (gateway: Client, username: string, password: string) => {
      const session = await vufindLogin(gateway, username, password);
      const patron = (await gateway.get(`/core/${session.patron}`, { token: session.token })).body;
      const valid =
        patron.status === 0 &&
        typeof patron.expires === 'string' &&
        patron.expires > today() &&
        session.scope.includes('write_items');
      return { valid, patron };
    };

    const alice = await checkRequestIsValid(client, 'alice', 'alice-pass');
    expect(alice.valid, JSON.stringify(alice.patron)).toBe(true);
    if (dialect === 'folio') {
      // edge-sip2 sends no expiry date: the setting's date.
      expect(alice.patron.expires).toBe(FAR_EXPIRY);
      // Without the setting VuFind never offers a hold form to a FOLIO patron.
      const without = await checkRequestIsValid(extras[0]!.client, 'alice', 'alice-pass');
      expect(without.patron.status).toBe(0);
      expect(without.patron.expires).toBeUndefined();
      expect(without.valid).toBe(false);
    } else {
      // The ILS's own date (PA) wins over the setting.
      expect(alice.patron.expires).not.toBe(FAR_EXPIRY);
    }

    // An account that is not active gets no made-up expiry: bob (expired) stays without a form.
    const bob = await checkRequestIsValid(client, 'bob', 'bob-pass');
    expect(bob.valid).toBe(false);
    expect(bob.patron.expires).not.toBe(FAR_EXPIRY);
  });

  it('holds: ready for pickup (4) only on the hold shelf; on loan or on the shelf 1, in transit 2; no extra 17', async () => {
    const { client, sim } = fx();
    await sim.reset();
    const alice = await vufindLogin(client, 'alice', 'alice-pass');
    // Holds on a copy on the shelf (it-0030, not yet trapped) and on one in transit (it-0040).
    const placed = await client.post(
      `/core/${alice.patron}/request`,
      { doc: [{ item: item('it-0030') }, { item: item('it-0040') }] },
      alice,
    );
    expect((placed.body.doc as Doc[]).map((doc) => [doc.item, doc.status, doc.error])).toEqual([
      [item('it-0030'), 1, undefined],
      [item('it-0040'), 1, undefined],
    ]);

    const before = (await sim.counters()).received['17'] ?? 0;
    // PAIA.php getMyHolds: the items whose status is in PAIA.ini's [Holds] status, "1:2:4" as
    // docs/discovery-systems.md sets it (VuFind's sample "1:4" would hide a hold in transit, 2, from the
    // Holds page); myHoldsMapping: available (VuFind's "ready for pickup") = status 4.
    const docs = await itemsWithStatus(client, alice, [1, 2, 4]);
    const asked = ((await sim.counters()).received['17'] ?? 0) - before;
    const holds = new Map(docs.map((doc) => [doc.item, doc]));
    const state = (barcode: string) => {
      const doc = holds.get(item(barcode));
      return { status: doc?.status, available: doc?.status === 4 };
    };
    expect(state('it-0010')).toEqual({ status: 4, available: true }); // waits on the hold shelf (08)
    expect(state('it-0020')).toEqual({ status: 1, available: false }); // still on loan to frank (04)
    expect(state('it-0030')).toEqual({ status: 1, available: false }); // on the shelf, not yet trapped (03)
    expect(state('it-0040')).toEqual({ status: 2, available: false }); // in transit (10)
    expect(docs).toHaveLength(4);
    // PAIA.php getBasicDetails: cancel_details (the cancel checkbox) is the item only with cancancel true
    // and write_items; the 98 says hold Y, so every hold on the Holds page can be cancelled.
    for (const doc of docs) {
      const cancelDetails = doc.cancancel === true && alice.scope.includes('write_items') ? doc.item : '';
      expect(cancelDetails, String(doc.item)).toBe(doc.item);
    }
    // The hold's state comes from the 17 each entry gets anyway (or the item cache): at most one per document.
    expect(asked).toBeLessThanOrEqual(docs.length + 3); // and the three loans
  });
});
