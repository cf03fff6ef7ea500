/**
 * What the collations ILS databases compare usernames and barcodes with
 * equate beyond compatibility, case and accent folding, as data: letters and
 * ligatures that weigh as other letters (`œ` = `oe`, `ø` = `o`), letters
 * written as combining marks, numerals of other scripts that weigh as digits,
 * and characters weighed as nothing.
 *
 * Source: the primary weights of every code point, read with WEIGHT_STRING()
 * from MariaDB 10.11 under utf8mb4_unicode_ci (the UCA 4.0.0 weight keys,
 * allkeys-4.0.0.txt, as in MySQL's strings/uca_data.h: Koha's collation),
 * utf8mb4_unicode_520_ci (UCA 5.2.0), utf8mb4_uca1400_ai_ci (UCA 14.0.0,
 * MariaDB 11's default) and utf8mb4_general_ci (no expansions). MySQL 8's
 * utf8mb4_0900_ai_ci (UCA 9.0.0) lies between 5.2.0 and 14.0.0, which agree
 * on every code point 5.2.0 knows. A group marked 4.0.0 or 5.2.0 is folded
 * from that version on; unmarked ones by 14.0.0. Keys are in the form the
 * canonical username has reached when the table is read (compatibility
 * decomposed, marks removed, lower case), so `Ǿ` and `Ø` reach `ø` first.
 */

/** Letters (lower case) that weigh as the letters given. */
const LETTERS: ReadonlyArray<readonly [letters: string, spelled: string]> = [
  // 4.0.0: expansions without a compatibility decomposition
  ['œ', 'oe'],
  ['ƍ', 'zw'],
  ['ƾʦ', 'ts'],
  ['ʣ', 'dz'],
  ['ʪ', 'ls'],
  ['ʫ', 'lz'],
  // 5.2.0: ß of the capital ẞ (which lowers to ß, not to ss); letters with a stroke, bar or other
  // variation that weigh as their base letter (a secondary difference, ignored by _ci and _ai_ci)
  ['ß', 'ss'],
  ['æ', 'ae'],
  ['ðđꝺ', 'd'],
  ['ø', 'o'],
  ['ħ', 'h'],
  ['ł', 'l'],
  ['ȸ', 'db'],
  ['ȹ', 'qp'],
  ['ᵹ', 'g'],
  ['ᵺ', 'th'],
  ['ỻ', 'll'],
  ['ꜩ', 'tz'],
  ['ꜳ', 'aa'],
  ['ꜵ', 'ao'],
  ['ꜷ', 'au'],
  ['ꜹꜻ', 'av'],
  ['ꜽ', 'ay'],
  ['ꝏ', 'oo'],
  ['ꝡ', 'vy'],
  ['ꝼ', 'f'],
  ['ꞃ', 'r'],
  ['ꞅ', 's'],
  ['ꞇ', 't'],
  // 14.0.0
  ['ꝛꞧ', 'r'],
  ['ꞛꟁ', 'a'],
  ['ꞝ', 'o'],
  ['ꞟ', 'u'],
  ['ꞡ', 'g'],
  ['ꞣ', 'k'],
  ['ꞥ', 'n'],
  ['ꞩꟙ', 's'],
  ['ꟃ', 'w'],
  ['\u{10780}', 'aa'], // MODIFIER LETTER SMALL CAPITAL AA
  ['⅍', 'a/s'],
  ['\u1680', ' '], // OGHAM SPACE MARK
  ['🆊', 'p'],
  ['🆥', 'd'],
  ['🆋', 'ic'],
  ['🆌', 'pa'],
  ['🆍', 'sa'],
  ['🆎', 'ab'],
  ['🆏', 'wc'],
  ['🆑', 'cl'],
  ['🆒', 'cool'],
  ['🆓', 'free'],
  ['🆔', 'id'],
  ['🆕', 'new'],
  ['🆖', 'ng'],
  ['🆗', 'ok'],
  ['🆘', 'sos'],
  ['🆙', 'up!'],
  ['🆚', 'vs'],
  ['🆛', '3d'],
  ['🆜', '2nd scr'],
  ['🆝', '2k'],
  ['🆞', '4k'],
  ['🆟', '8k'],
  ['🆠', '5.1'],
  ['🆡', '7.1'],
  ['🆢', '22.2'],
  ['🆣', '60p'],
  ['🆤', '120p'],
  ['🆦', 'hc'],
  ['🆧', 'hdr'],
  ['🆨', 'hi res'],
  ['🆩', 'lossless'],
  ['🆪', 'shv'],
  ['🆫', 'uhd'],
  ['🆬', 'vod'],
];

/**
 * Runs of code points that count up from a digit or a letter: numerals of
 * other scripts and enclosed letters without a compatibility decomposition
 * (decimal digits, General_Category Nd, are read from Unicode's properties).
 */
const RUNS: ReadonlyArray<readonly [first: number, last: number, from: number | string]> = [
  [0x09f4, 0x09f7, 1], // bengali currency numerator one … four (4.0.0)
  [0x0c78, 0x0c7b, 0], // telugu fraction digit zero for odd powers of four … four (5.2.0)
  [0x0c7c, 0x0c7e, 1], // telugu fraction digit one for even powers of four … four (5.2.0)
  [0x0f2a, 0x0f32, 1], // tibetan digit half one … nine (4.0.0)
  [0x0f33, 0x0f33, 0], // tibetan digit half zero (4.0.0)
  [0x1369, 0x1371, 1], // ethiopic digit one … nine (4.0.0)
  [0x17f0, 0x17f9, 0], // khmer symbol lek attak son … pram-buon (4.0.0)
  [0x19da, 0x19da, 1], // new tai lue tham digit one (5.2.0)
  [0x2185, 0x2185, 6], // roman numeral six late form (5.2.0)
  [0x24eb, 0x24f4, 11], // negative circled number eleven … twenty (4.0.0)
  [0x24f5, 0x24fe, 1], // double circled digit one … ten (4.0.0)
  [0x24ff, 0x24ff, 0], // negative circled digit zero (4.0.0)
  [0x2776, 0x277f, 1], // dingbat negative circled digit one … ten (4.0.0)
  [0x2780, 0x2789, 1], // dingbat circled sans-serif digit one … ten (4.0.0)
  [0x278a, 0x2793, 1], // dingbat negative circled sans-serif digit one … ten (4.0.0)
  [0x3007, 0x3007, 0], // ideographic number zero (4.0.0)
  [0x3021, 0x3029, 1], // hangzhou numeral one … nine (4.0.0)
  [0x3248, 0x3248, 10], // circled number ten on black square (5.2.0)
  [0x3249, 0x3249, 20], // circled number twenty on black square (5.2.0)
  [0x324a, 0x324a, 30], // circled number thirty on black square (5.2.0)
  [0x324b, 0x324b, 40], // circled number forty on black square (5.2.0)
  [0x324c, 0x324c, 50], // circled number fifty on black square (5.2.0)
  [0x324d, 0x324d, 60], // circled number sixty on black square (5.2.0)
  [0x324e, 0x324e, 70], // circled number seventy on black square (5.2.0)
  [0x324f, 0x324f, 80], // circled number eighty on black square (5.2.0)
  [0x10107, 0x1010f, 1], // aegean number one … nine
  [0x10142, 0x10142, 1], // greek acrophonic attic one drachma
  [0x10143, 0x10143, 5], // greek acrophonic attic five
  [0x10148, 0x10148, 5], // greek acrophonic attic five talents
  [0x1014f, 0x1014f, 5], // greek acrophonic attic five staters
  [0x10158, 0x10158, 1], // greek acrophonic heraeum one plethron
  [0x10159, 0x10159, 1], // greek acrophonic thespian one
  [0x1015a, 0x1015b, 1], // greek acrophonic hermionian one … two
  [0x1015c, 0x1015c, 2], // greek acrophonic thespian two
  [0x1015d, 0x1015d, 2], // greek acrophonic cyrenaic two drachmas
  [0x1015e, 0x1015e, 2], // greek acrophonic epidaurean two drachmas
  [0x1015f, 0x1015f, 5], // greek acrophonic troezenian five
  [0x10173, 0x10173, 5], // greek acrophonic delphic five mnas
  [0x1018a, 0x1018a, 0], // greek zero sign
  [0x102e1, 0x102e9, 1], // coptic epact digit one … nine
  [0x10320, 0x10320, 1], // old italic numeral one
  [0x10321, 0x10321, 5], // old italic numeral five
  [0x103d1, 0x103d2, 1], // old persian number one … two
  [0x10858, 0x1085a, 1], // imperial aramaic number one … three
  [0x10879, 0x1087d, 1], // palmyrene number one … five
  [0x108a7, 0x108aa, 1], // nabataean number one … four
  [0x108ab, 0x108ac, 4], // nabataean cruciform number four … five
  [0x108fb, 0x108fb, 1], // hatran number one
  [0x108fc, 0x108fc, 5], // hatran number five
  [0x10916, 0x10916, 1], // phoenician number one
  [0x1091a, 0x1091b, 2], // phoenician number two … three
  [0x109c0, 0x109c8, 1], // meroitic cursive number one … nine
  [0x10a40, 0x10a43, 1], // kharoshthi digit one … four
  [0x10a7d, 0x10a7d, 1], // old south arabian number one
  [0x10a9d, 0x10a9d, 1], // old north arabian number one
  [0x10aeb, 0x10aeb, 1], // manichaean number one
  [0x10aec, 0x10aec, 5], // manichaean number five
  [0x10b58, 0x10b5b, 1], // inscriptional parthian number one … four
  [0x10b78, 0x10b7b, 1], // inscriptional pahlavi number one … four
  [0x10ba9, 0x10bac, 1], // psalter pahlavi number one … four
  [0x10cfa, 0x10cfa, 1], // old hungarian number one
  [0x10cfb, 0x10cfb, 5], // old hungarian number five
  [0x10e60, 0x10e68, 1], // rumi digit one … nine
  [0x10f1d, 0x10f21, 1], // old sogdian number one … five
  [0x10f51, 0x10f51, 1], // sogdian number one
  [0x10fc5, 0x10fc8, 1], // chorasmian number one … four
  [0x11052, 0x1105a, 1], // brahmi number one … nine
  [0x111e1, 0x111e9, 1], // sinhala archaic digit one … nine
  [0x11c5a, 0x11c62, 1], // bhaiksuki number one … nine
  [0x12400, 0x12407, 2], // cuneiform numeric sign two ash … ash
  [0x12408, 0x1240e, 3], // cuneiform numeric sign three dish … dish
  [0x1240f, 0x12414, 4], // cuneiform numeric sign four u … u
  [0x12415, 0x1241d, 1], // cuneiform numeric sign one gesh2 … gesh2
  [0x1241e, 0x12422, 1], // cuneiform numeric sign one geshu … geshu
  [0x12423, 0x12424, 2], // cuneiform numeric sign two shar2 … shar2
  [0x12425, 0x1242b, 3], // cuneiform numeric sign three shar2 variant form … shar2
  [0x1242c, 0x1242e, 1], // cuneiform numeric sign one sharu … sharu
  [0x1242f, 0x12431, 3], // cuneiform numeric sign three sharu variant form … sharu
  [0x12434, 0x12436, 1], // cuneiform numeric sign one buru … buru
  [0x12437, 0x12439, 3], // cuneiform numeric sign three buru variant form … buru
  [0x1243a, 0x1243a, 3], // cuneiform numeric sign three variant form esh16
  [0x1243b, 0x1243c, 3], // cuneiform numeric sign three variant form esh21 … limmu
  [0x1243d, 0x1243d, 4], // cuneiform numeric sign four variant form limmu4
  [0x1243e, 0x1243e, 4], // cuneiform numeric sign four variant form limmu a
  [0x1243f, 0x1243f, 4], // cuneiform numeric sign four variant form limmu b
  [0x12440, 0x12441, 6], // cuneiform numeric sign six variant form ash9 … imin3
  [0x12442, 0x12442, 7], // cuneiform numeric sign seven variant form imin a
  [0x12443, 0x12444, 7], // cuneiform numeric sign seven variant form imin b … ussu
  [0x12445, 0x12446, 8], // cuneiform numeric sign eight variant form ussu3 … ilimmu
  [0x12447, 0x12447, 9], // cuneiform numeric sign nine variant form ilimmu3
  [0x12448, 0x12448, 9], // cuneiform numeric sign nine variant form ilimmu4
  [0x12449, 0x12449, 9], // cuneiform numeric sign nine variant form ilimmu a
  [0x1244a, 0x1244e, 2], // cuneiform numeric sign two ash tenu … tenu
  [0x1244f, 0x12452, 1], // cuneiform numeric sign one ban2 … ban2
  [0x12453, 0x12454, 4], // cuneiform numeric sign four ban2 variant form … ban2
  [0x12455, 0x12455, 5], // cuneiform numeric sign five ban2 variant form
  [0x12456, 0x12457, 2], // cuneiform numeric sign nigidamin … nigidaesh
  [0x12458, 0x12459, 1], // cuneiform numeric sign one eshe3 … eshe3
  [0x12469, 0x1246e, 4], // cuneiform numeric sign four u variant form … form
  [0x16e80, 0x16e89, 0], // medefaidrin digit zero … nine
  [0x16e94, 0x16e96, 1], // medefaidrin digit one alternate form … form
  [0x1d2c0, 0x1d2c9, 0], // kaktovik numeral zero … nine (Unicode 15: ICU's root collation, not in UCA 14.0.0)
  [0x1d2e0, 0x1d2e9, 0], // mayan numeral zero … nine
  [0x1d360, 0x1d368, 1], // counting rod unit digit one … nine
  [0x1d372, 0x1d376, 1], // ideographic tally mark one … five
  [0x1d377, 0x1d377, 1], // tally mark one
  [0x1d378, 0x1d378, 5], // tally mark five
  [0x1e8c7, 0x1e8cf, 1], // mende kikakui digit one … nine
  [0x1ec71, 0x1ec79, 1], // indic siyaq number one … nine
  [0x1eca3, 0x1ecab, 1], // indic siyaq number prefixed one … nine
  [0x1ecb1, 0x1ecb2, 1], // indic siyaq number alternate one … two
  [0x1ed01, 0x1ed09, 1], // ottoman siyaq number one … nine
  [0x1ed2f, 0x1ed36, 2], // ottoman siyaq alternate number two … nine
  [0x1f10b, 0x1f10b, 0], // dingbat circled sans-serif digit zero
  [0x1f10c, 0x1f10c, 0], // dingbat negative circled sans-serif digit zero
  [0x1f150, 0x1f169, 'a'], // negative circled latin capital letter a … z
  [0x1f170, 0x1f189, 'a'], // negative squared latin capital letter a … z
];

/** Combining marks that weigh as letters (the collations give them a primary weight, not an accent's). */
const MARKS: ReadonlyArray<readonly [marks: string, spelled: string]> = [
  // 4.0.0: COMBINING LATIN SMALL LETTER A, E, I, O, U, C, D, H, M, R, T, V, X
  ['\u0363', 'a'],
  ['\u0364', 'e'],
  ['\u0365', 'i'],
  ['\u0366', 'o'],
  ['\u0367', 'u'],
  ['\u0368', 'c'],
  ['\u0369', 'd'],
  ['\u036a', 'h'],
  ['\u036b', 'm'],
  ['\u036c', 'r'],
  ['\u036d', 't'],
  ['\u036e', 'v'],
  ['\u036f', 'x'],
  // 5.2.0: from the Combining Diacritical Marks Supplement
  ['\u1dca\u1de3\u1acd', 'r'], // R BELOW, R ROTUNDA and INSULAR R (14.0.0)
  ['\u1dd3\u1df2', 'a'], // FLATTENED OPEN A ABOVE, A WITH DIAERESIS (14.0.0)
  ['\u1dd4', 'ae'],
  ['\u1dd5', 'ao'],
  ['\u1dd6', 'av'],
  ['\u1dd7', 'c'], // C CEDILLA
  ['\u1dd8\u1dd9', 'd'], // INSULAR D, ETH
  ['\u1dda\u1acc', 'g'], // G, INSULAR G (14.0.0)
  ['\u1ddc', 'k'],
  ['\u1ddd', 'l'],
  ['\u1de0', 'n'],
  ['\u1de4\u1de5', 's'], // S, LONG S
  ['\u1de6', 'z'],
  // 14.0.0
  ['\u1abf\u1df1', 'w'], // W BELOW, W
  ['\u1ace', 't'], // INSULAR T
  ['\u1de8', 'b'],
  ['\u1deb', 'f'],
  ['\u1ded\u1df3', 'o'], // O WITH LIGHT CENTRALIZATION STROKE, O WITH DIAERESIS
  ['\u1dee', 'p'],
  ['\u1df0\u1df4', 'u'], // U WITH LIGHT CENTRALIZATION STROKE, U WITH DIAERESIS
];

/**
 * Characters weighed as nothing that are not marks, format or control
 * characters (those are removed by category): the Arabic tatweel (14.0.0)
 * and the isolated and medial forms of Arabic marks, whose compatibility
 * decomposition would leave a space or a tatweel behind (4.0.0), a few
 * modifier letters and signs (4.0.0 to 14.0.0).
 */
export const IGNORED =
  /[\u0640\u06de\u07fa\u0824\u0828\u180a\u1cd3\u1cf2\u1cf3\ufc5e-\ufc63\ufcf2-\ufcf4\ufe70-\ufe7f]/gu;

const SPELLED = new Map<string, string>();
for (const [letters, spelled] of LETTERS) for (const letter of letters) SPELLED.set(letter, spelled);
for (const [first, last, from] of RUNS) {
  for (let code = first; code <= last; code++) {
    const step = code - first;
    const spelled = typeof from === 'number' ? String(from + step) : String.fromCharCode(from.charCodeAt(0) + step);
    SPELLED.set(String.fromCodePoint(code), spelled);
  }
}
const MARK_SPELLED = new Map<string, string>();
for (const [marks, spelled] of MARKS) for (const mark of marks) MARK_SPELLED.set(mark, spelled);

const DIGIT = /\p{Nd}/u;

/**
 * A decimal digit's value: Unicode encodes every set of them as a run from
 * zero to nine, runs sometimes back to back (the stability policy), so the
 * place in the run of Nd code points counts.
 */
function digitValue(digit: string): number {
  let code = digit.codePointAt(0)!;
  let place = 0;
  while (DIGIT.test(String.fromCodePoint(code - 1))) {
    code -= 1;
    place += 1;
  }
  return place % 10;
}

/** `character` as the letters or digits it weighs as; itself when it is not in the tables. */
export function spelledAs(character: string): string {
  return SPELLED.get(character) ?? (DIGIT.test(character) ? String(digitValue(character)) : character);
}

/** A combining mark as the letter it weighs as; '' (an accent) when it is none. */
export function markSpelledAs(mark: string): string {
  return MARK_SPELLED.get(mark) ?? '';
}
