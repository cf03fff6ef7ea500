import { FrameSocket, openSocket } from './frame-socket.js';

/**
 * A SIP2 client written from the 3M SIP2 2.00 text alone, for tests that must
 * not lean on the project's codec or the gateway's pool: messages are built
 * as strings (fixed fields, then "XXvalue|" variable fields), every request
 * ends in AY<seq>AZ<checksum> with the checksum the 3M text defines (binary
 * sum of the characters up to and including "AZ", two's complement, 4 hex
 * digits), and responses are checked and split the same way. Latin-1 only:
 * the tests that use it send ASCII.
 */

/** 3M SIP2 "Checksum": the two's complement of the 16-bit sum of the bytes, as 4 hex digits. */
export function sip2Checksum(text: string): string {
  let sum = 0;
  for (const byte of Buffer.from(text, 'latin1')) sum = (sum + byte) & 0xffff;
  return ((-sum) & 0xffff).toString(16).toUpperCase().padStart(4, '0');
}

/** An 18-character SIP2 date: YYYYMMDD, 4 blanks for the local zone, HHMMSS. */
export function sip2Date(date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}    ${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** Summary positions of the 63 (3M: hold, overdue, charged, fine, recall, unavailable holds). */
const SUMMARY = ['hold', 'overdue', 'charged', 'fine', 'recall', 'unavailable'] as const;
export type SummaryList = (typeof SUMMARY)[number];

export const text = {
  login: (user = 'paia', password = 'paia-secret', location = 'MAIN') => `9300CN${user}|CO${password}|CP${location}|`,
  scStatus: () => '990 802.00',
  patronInformation: (patron: string, list: SummaryList | null, startItem?: number, endItem?: number) => {
    const summary = SUMMARY.map((name) => (name === list ? 'Y' : ' ')).join('').padEnd(10, ' ');
    const range = `${startItem !== undefined ? `BP${startItem}|` : ''}${endItem !== undefined ? `BQ${endItem}|` : ''}`;
    return `63001${sip2Date()}${summary}AODEMO|AA${patron}|${range}`;
  },
  itemInformation: (barcode: string) => `17${sip2Date()}AODEMO|AB${barcode}|`,
};

/** A 64 read by the 3M layout: fixed part, then variable fields (repeatable ones as lists). */
export interface PatronInformation64 {
  counts: Record<SummaryList, number>;
  fields: Map<string, string[]>;
}

export function parse64(frame: string): PatronInformation64 {
  if (!frame.startsWith('64')) throw new Error(`not a 64: ${frame}`);
  // 64, patron status 14, language 3, transaction date 18, then six 4-digit counts.
  const countText = frame.slice(37, 61);
  const counts = Object.fromEntries(SUMMARY.map((name, i) => [name, Number(countText.slice(i * 4, i * 4 + 4))])) as Record<SummaryList, number>;
  return { counts, fields: variableFields(frame.slice(61)) };
}

/** "XXvalue|" fields in order; the AY/AZ trailer is left out. */
export function variableFields(rest: string): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  const body = rest.replace(/\|?AY\dAZ[0-9A-F]{4}$/, '');
  for (const part of body.split('|')) {
    if (part.length < 2) continue;
    const id = part.slice(0, 2);
    fields.set(id, [...(fields.get(id) ?? []), part.slice(2)]);
  }
  return fields;
}

export class TextSip2Client extends FrameSocket {
  private sequence = 0;

  static async connect(port: number): Promise<TextSip2Client> {
    return new TextSip2Client(await openSocket(port));
  }

  /** Writes the message with AY (0-9, wrapping) and AZ, ended by CR. */
  send(message: string): void {
    const withTrailer = `${message}AY${this.sequence}AZ`;
    this.sequence = (this.sequence + 1) % 10;
    this.writeRaw(`${withTrailer}${sip2Checksum(withTrailer)}\r`);
  }

  /** The next response without its terminator, its checksum verified; rejects on timeout or close. */
  async next(timeoutMs = 5000): Promise<string> {
    const frame = (await this.nextFrame(timeoutMs)).frame.toString('latin1');
    const m = /AZ([0-9A-F]{4})$/.exec(frame);
    if (m && sip2Checksum(frame.slice(0, -4)) !== m[1]) throw new Error(`bad checksum on ${JSON.stringify(frame)}`);
    return frame;
  }

  async request(message: string, timeoutMs = 5000): Promise<string> {
    this.send(message);
    return this.next(timeoutMs);
  }

  /** True when nothing arrived and the connection stayed open for ms. */
  async silentFor(ms: number): Promise<boolean> {
    return !(await this.somethingWithin(ms));
  }

  /** Login (941 expected) and SC Status, as a self-check terminal starts a session. */
  async start(): Promise<void> {
    const login = await this.request(text.login());
    if (!login.startsWith('941')) throw new Error(`login refused: ${login}`);
    const status = await this.request(text.scStatus());
    if (!status.startsWith('98')) throw new Error(`expected 98, got ${status}`);
  }
}
