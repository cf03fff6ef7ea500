import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Generated library data for B4 (10,000 patrons with one loan each), in the
 * simulator's data format (see sip2-simulator/README.md, "Data format"):
 * `patrons` patrons `bp-001` ...
 * (password `<barcode>-pass`), each with `loansPerPatron` loans of distinct
 * items due in the future, so `patrons x loansPerPatron` distinct items.
 */

export interface GeneratedLibrary {
  file: string;
  patrons: Array<{ barcode: string; password: string; items: string[] }>;
  itemCount: number;
  /** Removes the file and its directory. */
  remove(): void;
}

export function generateLibrary(patronCount: number, loansPerPatron: number): GeneratedLibrary {
  const width = String(patronCount).length;
  const itemWidth = String(loansPerPatron).length;
  const patrons: GeneratedLibrary['patrons'] = [];
  const items: unknown[] = [];
  for (let p = 1; p <= patronCount; p++) {
    const barcode = `bp-${String(p).padStart(width, '0')}`;
    const own: string[] = [];
    for (let i = 1; i <= loansPerPatron; i++) {
      const item = `bi-${String(p).padStart(width, '0')}-${String(i).padStart(itemWidth, '0')}`;
      own.push(item);
      items.push({
        barcode: item,
        title: `Bench Volume ${p}.${i}`,
        titleId: `t-${item}`,
        callNumber: `BX ${p} ${i}`,
        mediaType: '001',
        loan: { patron: barcode, dueInDays: 1 + ((p + i) % 28), renewals: 0 },
      });
    }
    patrons.push({ barcode, password: `${barcode}-pass`, items: own });
  }
  const library = {
    institution: 'DEMO',
    libraryName: 'Bench Library',
    currency: 'EUR',
    defaultLocation: 'MAIN',
    rules: { loanPeriodDays: 28, renewalLimit: 3, holdExpiryDays: 365 },
    terminals: [{ login: 'paia', password: 'paia-secret', location: 'MAIN' }],
    patrons: patrons.map(({ barcode, password }) => benchPatron(barcode, password)),
    items,
    holds: [],
  };
  const dir = mkdtempSync(join(tmpdir(), 'paia-bench-data-'));
  const file = join(dir, 'library.json');
  writeFileSync(file, JSON.stringify(library));
  return { file, patrons, itemCount: items.length, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The demo patrons, plus one only the bench uses. */
export interface DemoPlusLibrary {
  file: string;
  /** The added patron: `loans` loans of its own items, due in the future, nothing else. */
  patron: { barcode: string; password: string; items: string[] };
  remove(): void;
}

/**
 * The simulator's demo data (sip2-simulator/data/demo.json) with one more
 * patron, `barcode`, who has `loans` loans and nothing else (no holds, no
 * fines), for B7 and B8. The demo patrons stay exactly as they are (tests
 * rely on them); the file is a temporary copy.
 */
export function demoPlusLoansPatron(barcode: string, loans: number): DemoPlusLibrary {
  const demo = JSON.parse(readFileSync(new URL('../sip2-simulator/data/demo.json', import.meta.url), 'utf8')) as {
    patrons: unknown[];
    items: unknown[];
  };
  const width = String(loans).length;
  const own: string[] = [];
  for (let i = 1; i <= loans; i++) {
    const item = `${barcode}-${String(i).padStart(width, '0')}`;
    own.push(item);
    demo.items.push({
      barcode: item,
      title: `Bench Volume ${i}`,
      titleId: `t-${item}`,
      callNumber: `BX ${i}`,
      mediaType: '001',
      loan: { patron: barcode, dueInDays: 7 + i, renewals: 0 },
    });
  }
  const password = `${barcode}-pass`;
  demo.patrons.push(benchPatron(barcode, password));
  const dir = mkdtempSync(join(tmpdir(), 'paia-bench-data-'));
  const file = join(dir, 'library.json');
  writeFileSync(file, JSON.stringify(demo));
  return {
    file,
    patron: { barcode, password, items: own },
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A patron record of the generated data: an adult whose card is valid for a year. */
function benchPatron(barcode: string, password: string) {
  return {
    barcode,
    password,
    name: `Bench Patron ${barcode}`,
    email: `${barcode}@example.org`,
    patronClass: 'adult',
    expiresInDays: 365,
  };
}
