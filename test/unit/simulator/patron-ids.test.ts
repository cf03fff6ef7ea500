import { describe, expect, it } from 'vitest';
import { loadLibraryData } from '../../../sip2-simulator/src/data.js';
import { Library } from '../../../sip2-simulator/src/library.js';
import { foldIdentifier } from '../../../sip2-simulator/src/patron-ids.js';
import { parseProfile } from '../../../sip2-simulator/src/profiles.js';
import { type HandledRequest, respond } from '../../../sip2-simulator/src/responses.js';
import { sip2DateFrom } from '../../../src/sip2/date.js';
import { loadDialect } from '../../../src/sip2/dialect.js';
import type { Sip2Message } from '../../../src/sip2/spec.js';

const NOW = new Date(2026, 2, 15, 12, 0, 0);
const tx = sip2DateFrom(NOW);

describe('foldIdentifier (ids=folded: what utf8mb4_unicode_ci with PAD SPACE compares equal)', () => {
  it('ignores case, accents, compatibility variants and trailing spaces', () => {
    const alike: Array<[string, string]> = [
      ['ÄLICE', 'alice'],
      ['A\u0308lice', 'alice'], // decomposed: A + COMBINING DIAERESIS
      ['ÉMILE', 'emile'],
      ['Ångström', 'angstrom'],
      ['Ａｌｉｃｅ', 'alice'], // fullwidth
      ['ﬁle', 'file'], // ligature
      ['x²', 'x2'],
      ['alice   ', 'alice'],
      ['alice\u00a0', 'alice'], // NO-BREAK SPACE is a space after NFKC
      ['STRAẞE', 'strasse'],
      ['Straße', 'STRASSE'],
      ['ΟΔΟΣ', 'οδοσ'],
      ['İSTANBUL', 'istanbul'],
    ];
    for (const [a, b] of alike) expect(foldIdentifier(a), `${a} = ${b}`).toBe(foldIdentifier(b));
  });

  it('expands what UCA 4.0.0 weighs as several letters, spells letters written as marks, and reads digits of other scripts', () => {
    const alike: Array<[string, string]> = [
      ['zŒ', 'zoe'], // U+0152: the weights of O and E (MySQL strings/uca_data.h)
      ['zœ', 'ZOE'],
      ['ƍa', 'zwa'],
      ['ʦar', 'tsar'],
      ['ƾar', 'tsar'],
      ['ʣa', 'dza'],
      ['ʪ', 'ls'],
      ['ʫ', 'lz'],
      ['zo\u0364', 'zoe'], // COMBINING LATIN SMALL LETTER E has the primary weight of e
      ['\u0363lice', 'alice'],
      ['٢٣٤٥', '2345'], // Arabic-Indic
      ['२३४५', '2345'], // Devanagari
      ['๒๓', '23'], // Thai
      ['⓫', '11'],
      ['❶2', '12'],
      ['〡〢', '12'],
      ['፩', '1'],
    ];
    for (const [a, b] of alike) expect(foldIdentifier(a), `${a} = ${b}`).toBe(foldIdentifier(b));
  });

  it('keeps apart what the collation keeps apart: leading and inner spaces, controls, other letters, marks with a primary weight', () => {
    const apart: Array<[string, string]> = [
      [' alice', 'alice'],
      ['al ice', 'alice'],
      ['alice\t', 'alice'], // only spaces are padded
      ['alice-', 'alice'],
      ['ılice', 'ilice'], // dotless i is its own letter in the UCA tables
      ['कु', 'क'], // a Devanagari vowel sign is a letter, not an accent
      ['alice1', 'alice'],
      // Letters of their own in UCA 4.0.0 (unicode_ci), though later versions weigh them as their base letters:
      ['Æsa', 'aesa'],
      ['æ', 'a'],
      ['øle', 'ole'],
      ['łukasz', 'lukasz'],
      ['đorđe', 'dorde'],
      ['ðóra', 'dora'],
      ['ħanna', 'hanna'],
      ['zo\u0364', 'zo'], // a combining letter is not an accent
      ['strase', 'strasse'], // ß is ss here; s only to utf8mb4_general_ci
      ['\u0be6', '0'], // TAMIL DIGIT ZERO came with Unicode 4.1: not in the 4.0.0 table
    ];
    for (const [a, b] of apart) expect(foldIdentifier(a), `${a} != ${b}`).not.toBe(foldIdentifier(b));
  });
});

describe('Library.findPatron', () => {
  it('exact: only the stored barcode; folded: any identifier with the same key, the stored patron returned', () => {
    const library = new Library(loadLibraryData(), { now: () => NOW });
    expect(library.findPatron('alice', 'exact')?.barcode).toBe('alice');
    expect(library.findPatron('ÄLICE', 'exact')).toBeUndefined();
    expect(library.findPatron('alice ', 'exact')).toBeUndefined();
    expect(library.findPatron('ÄLICE', 'folded')?.barcode).toBe('alice');
    expect(library.findPatron('Emile  ', 'folded')?.barcode).toBe('emile');
    expect(library.findPatron('nobody', 'folded')).toBeUndefined();
    expect(library.findPatron(' alice', 'folded')).toBeUndefined();
  });

  it('folded: an expansion names the patron whose barcode spells it out (zŒ is zoe)', () => {
    const data = loadLibraryData();
    const alice = data.patrons.find((p) => p.barcode === 'alice')!;
    data.patrons.push({ ...alice, barcode: 'zoe', name: 'Zoe Example', fines: [] });
    const library = new Library(data, { now: () => NOW });
    expect(library.findPatron('zŒ', 'folded')?.barcode).toBe('zoe');
    expect(library.findPatron('ZO\u0364', 'folded')?.barcode).toBe('zoe');
    expect(library.findPatron('zŒ', 'exact')).toBeUndefined();
  });

  it('with two barcodes of one key (data a unique index would refuse): the exact one, else the first in the file', () => {
    const data = loadLibraryData();
    const alice = data.patrons.find((p) => p.barcode === 'alice')!;
    data.patrons.push({ ...alice, barcode: 'ALICE', name: 'Second Alice', fines: [] });
    const library = new Library(data, { now: () => NOW });
    expect(library.findPatron('ALICE', 'folded')?.name).toBe('Second Alice');
    expect(library.findPatron('alice', 'folded')?.name).toBe('Alice Example');
    expect(library.findPatron('Älice', 'folded')?.name).toBe('Alice Example');
  });
});

describe('responses under ids=folded', () => {
  function setup(ids: 'exact' | 'folded') {
    const library = new Library(loadLibraryData(), { now: () => NOW });
    const ctx = { library, dialect: loadDialect('koha'), profile: parseProfile([`ids=${ids}`]) };
    const ask = <M extends Sip2Message>(request: HandledRequest) => respond(request, ctx) as M;
    return { library, ask };
  }
  const base = { transactionDate: tx, institutionId: 'DEMO' };
  const info = (patron: string, patronPassword?: string): HandledRequest => ({
    code: '63',
    language: '001',
    summary: 'charged',
    ...base,
    patronIdentifier: patron,
    ...(patronPassword !== undefined ? { patronPassword } : {}),
  });

  it('63 for ÄLICE finds alice: BL Y, her account, AA her stored barcode; CQ checks her password exactly', () => {
    const { ask } = setup('folded');
    const reply = ask<Extract<Sip2Message, { code: '64' }>>(info('ÄLICE', 'alice-pass'));
    expect(reply).toMatchObject({
      code: '64',
      validPatron: true,
      validPatronPassword: true,
      patronIdentifier: 'alice',
      personalName: 'Alice Example',
      chargedItemsCount: 3,
      chargedItems: ['it-0001', 'it-0002', 'it-0003'],
    });
    expect(ask(info('ÄLICE', 'ALICE-PASS'))).toMatchObject({ validPatron: true, validPatronPassword: false });
    expect(ask(info('ÄLICE', 'alice-pass '))).toMatchObject({ validPatronPassword: false });
  });

  it('ids=exact: ÄLICE is an unknown patron, answered with the AA sent', () => {
    const { ask } = setup('exact');
    expect(ask(info('ÄLICE', 'alice-pass'))).toMatchObject({
      code: '64',
      validPatron: false,
      validPatronPassword: false,
      patronIdentifier: 'ÄLICE',
      chargedItemsCount: 0,
    });
  });

  it('an identifier no patron folds to stays unknown, answered with the AA sent', () => {
    const { ask } = setup('folded');
    expect(ask(info('ALICE2', 'alice-pass'))).toMatchObject({
      validPatron: false,
      validPatronPassword: false,
      patronIdentifier: 'ALICE2',
    });
  });

  it('23, 01 and 25 act on the stored patron and answer with its barcode in AA', () => {
    const { ask, library } = setup('folded');
    expect(
      ask({
        code: '23',
        language: '001',
        ...base,
        patronIdentifier: 'Alice ',
        terminalPassword: '',
        patronPassword: 'alice-pass',
      }),
    ).toMatchObject({ code: '24', validPatron: true, validPatronPassword: true, patronIdentifier: 'alice' });
    expect(
      ask({
        code: '01',
        cardRetained: false,
        ...base,
        blockedCardMessage: 'Stop',
        patronIdentifier: 'HANNA',
        terminalPassword: '',
      }),
    ).toMatchObject({
      code: '24',
      validPatron: true,
      patronIdentifier: 'hanna',
      screenMessage: ['Stop', 'Welcome back, Hanna'],
    });
    expect(library.patron('hanna')!.blocked).toEqual({ reason: 'Stop' });
    expect(ask({ code: '25', ...base, patronIdentifier: 'Hänna', patronPassword: 'hanna-pass' })).toMatchObject({
      code: '26',
      validPatron: true,
      validPatronPassword: true,
      patronIdentifier: 'hanna',
    });
    expect(library.patron('hanna')!.blocked).toBeNull();
  });

  it('11, 29, 65, 15 and 37 change the stored patron’s account; 12 and 38 echo the AA sent as Koha does, 30 and 16 send the stored one', () => {
    const { ask, library } = setup('folded');
    const checkout = ask({
      code: '11',
      scRenewalPolicy: false,
      noBlock: false,
      nbDueDate: null,
      ...base,
      patronIdentifier: 'HANNA',
      itemIdentifier: 'sc-0001',
      terminalPassword: '',
      patronPassword: 'hanna-pass',
    });
    expect(checkout).toMatchObject({ code: '12', ok: true, patronIdentifier: 'HANNA' });
    expect(library.item('sc-0001')!.loan!.patron).toBe('hanna');

    const renew = ask({
      code: '29',
      thirdPartyAllowed: false,
      noBlock: false,
      nbDueDate: null,
      ...base,
      patronIdentifier: 'HANNA',
      itemIdentifier: 'sc-0001',
    });
    expect(renew).toMatchObject({ code: '30', ok: true, patronIdentifier: 'hanna' });
    expect(library.item('sc-0001')!.loan!.renewals).toBe(1);

    expect(ask({ code: '65', ...base, patronIdentifier: 'ALICE' })).toMatchObject({
      code: '66',
      ok: true,
      renewedItems: ['it-0001', 'it-0002'],
    });

    const hold = ask({
      code: '15',
      holdMode: '+',
      ...base,
      patronIdentifier: 'DAVE',
      itemIdentifier: 'it-0020',
      holdType: '3',
    });
    expect(hold).toMatchObject({ code: '16', ok: true, patronIdentifier: 'dave' });
    expect(library.holdsOf('dave')).toHaveLength(1);
    const refused = ask({ code: '15', holdMode: '-', ...base, patronIdentifier: 'DAVE', itemIdentifier: 'it-0030' });
    expect(refused).toMatchObject({ ok: false, patronIdentifier: 'DAVE' });

    const paid = ask({
      code: '37',
      feeType: 1,
      paymentType: 0,
      currencyType: 'EUR',
      feeAmount: '1.00',
      ...base,
      patronIdentifier: 'ÁLICE',
      feeIdentifier: 'f-0001',
    });
    expect(paid).toMatchObject({ code: '38', paymentAccepted: true, patronIdentifier: 'ÁLICE' });
    expect(library.totalFinesCents('alice')).toBe(250);
  });

  it('a wrong password refuses 11 for the folded patron, as for the exact one', () => {
    const { ask, library } = setup('folded');
    const refused = ask({
      code: '11',
      scRenewalPolicy: false,
      noBlock: false,
      nbDueDate: null,
      ...base,
      patronIdentifier: 'HANNA',
      itemIdentifier: 'sc-0001',
      terminalPassword: '',
      patronPassword: 'HANNA-PASS',
    });
    expect(refused).toMatchObject({ code: '12', ok: false, screenMessage: ['Invalid patron password'] });
    expect(library.item('sc-0001')!.loan).toBeNull();
  });
});
