import type { Socket } from 'node:net';
import { FrameSocket, openSocket } from './frame-socket.js';

/**
 * A SIP2 client written from the 3M SIP2 2.00 text (rev. 2.12) alone, for
 * tests that must not lean on the project's codec or the gateway's pool: an
 * encoder or decoder bug in src/sip2 must still fail them, so nothing here
 * imports from there. Requests are literal wire strings after the 3M layouts
 * (fixed fields, then "XXvalue|" variable fields), signed with AY<seq>AZ<checksum>
 * as the 3M text defines it; answers are read by position and field id, their
 * checksum checked. Latin-1 by default (the tests send ASCII); UTF-8 for a
 * server set to speak it (3M: code page 850 unless "the SC and the ACS
 * mutually define the character set").
 */

export const INSTITUTION = 'DEMO';

/** How text goes on the wire. */
type WireCharset = 'latin1' | 'utf8';

/** 3M SIP2 "Checksum": add the bytes up to and including "AZ", keep 16 bits, two's complement, 4 hex digits. */
function sip2Checksum(text: string, charset: WireCharset = 'latin1'): string {
  let sum = 0;
  for (const byte of Buffer.from(text, charset)) sum = (sum + byte) & 0xffff;
  return (-sum & 0xffff).toString(16).toUpperCase().padStart(4, '0');
}

/** An 18-character SIP2 date: YYYYMMDD, 4 blanks for the local zone, HHMMSS. */
export function sip2Date(date = new Date()): string {
  const p = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${date.getFullYear()}${p(date.getMonth() + 1)}${p(date.getDate())}    ${p(date.getHours())}${p(date.getMinutes())}${p(date.getSeconds())}`;
}

/** The message with its error-detection trailer: AY<sequence>AZ<checksum>, or AZ alone when sequence is null. */
export function sign(message: string, sequence: number | null, charset: WireCharset = 'latin1'): string {
  const head = `${message}${sequence === null ? '' : `AY${sequence}`}AZ`;
  return head + sip2Checksum(head, charset);
}

/** An 18-character date field left blank: "nb due date" of an on-line checkout or renewal. */
const NO_DATE = ' '.repeat(18);

/** Summary positions of the 63 (3M: hold, overdue, charged, fine, recall, unavailable holds). */
const SUMMARY = ['hold', 'overdue', 'charged', 'fine', 'recall', 'unavailable'] as const;
export type SummaryList = (typeof SUMMARY)[number];

/** Requests, field by field in the order of the 3M layouts, without the AY/AZ trailer. */
export const text = {
  login: (user = 'paia', password = 'paia-secret', location = 'MAIN') => `9300CN${user}|CO${password}|CP${location}|`,
  /** Status 0, print width 80, protocol 2.00. */
  scStatus: () => '9900802.00',
  patronStatus: (patron: string, pin = '') => `23001${sip2Date()}AO${INSTITUTION}|AA${patron}|AC|AD${pin}|`,
  /** list: the one summary list wanted (a Y at its position), or none; BP/BQ when a range is given. */
  patronInformation: (patron: string, list: SummaryList | null = null, startItem?: number, endItem?: number) => {
    const summary = SUMMARY.map((name) => (name === list ? 'Y' : ' '))
      .join('')
      .padEnd(10, ' ');
    const range = `${startItem !== undefined ? `BP${startItem}|` : ''}${endItem !== undefined ? `BQ${endItem}|` : ''}`;
    return `63001${sip2Date()}${summary}AO${INSTITUTION}|AA${patron}|AC|${range}`;
  },
  checkout: (patron: string, item: string) => `11YN${sip2Date()}${NO_DATE}AO${INSTITUTION}|AA${patron}|AB${item}|AC|`,
  checkin: (item: string, location = 'MAIN') =>
    `09N${sip2Date()}${sip2Date()}AP${location}|AO${INSTITUTION}|AB${item}|AC|`,
  itemInformation: (item: string) => `17${sip2Date()}AO${INSTITUTION}|AB${item}|AC|`,
  itemStatusUpdate: (item: string, properties: string) =>
    `19${sip2Date()}AO${INSTITUTION}|AB${item}|AC|CH${properties}|`,
  renew: (patron: string, item: string) => `29NN${sip2Date()}${NO_DATE}AO${INSTITUTION}|AA${patron}|AB${item}|AC|`,
  renewAll: (patron: string) => `65${sip2Date()}AO${INSTITUTION}|AA${patron}|AC|`,
  blockPatron: (patron: string, why: string) => `01N${sip2Date()}AO${INSTITUTION}|AL${why}|AA${patron}|AC|`,
  patronEnable: (patron: string) => `25${sip2Date()}AO${INSTITUTION}|AA${patron}|AC|`,
  hold: (patron: string, item: string, pickup: string) =>
    `15+${sip2Date()}BS${pickup}|AO${INSTITUTION}|AA${patron}|AB${item}|AC|`,
  endPatronSession: (patron: string) => `35${sip2Date()}AO${INSTITUTION}|AA${patron}|AC|`,
};

/** Length of the fixed fields after the command id of each answer, from the 3M layouts. */
const FIXED_LENGTH: Record<string, number> = {
  '94': 1,
  '98': 34,
  '24': 35,
  '26': 35,
  '64': 59,
  '18': 24,
  '12': 22,
  '10': 22,
  '30': 22,
  '66': 27,
  '16': 20,
  '20': 19,
  '36': 19,
  '38': 19,
  '96': 0,
};

export interface Answer {
  /** The answer as received, without its terminator. */
  text: string;
  code: string;
  /** The fixed-length fields, as sent. */
  fixed: string;
  /** Tagged fields by id, in order; a repeated field has several values. */
  fields: Map<string, string[]>;
  /** AY, when the answer carries one. */
  sequence: string | null;
  checksummed: boolean;
}

/** Reads an answer by the 3M layout; throws on an unknown command id or a wrong checksum. */
function readAnswer(text: string, charset: WireCharset): Answer {
  let body = text;
  let sequence: string | null = null;
  let checksummed = false;
  const trailer = /(?:AY(\d))?AZ([0-9A-Fa-f]{4})$/.exec(text);
  if (trailer) {
    if (sip2Checksum(text.slice(0, -4), charset) !== trailer[2]!.toUpperCase())
      throw new Error(`bad checksum on ${JSON.stringify(text)}`);
    checksummed = true;
    sequence = trailer[1] ?? null;
    body = text.slice(0, trailer.index);
  }
  const code = body.slice(0, 2);
  const length = FIXED_LENGTH[code];
  if (length === undefined) throw new Error(`unexpected answer ${JSON.stringify(text)}`);
  const fields = new Map<string, string[]>();
  for (const part of body.slice(2 + length).split('|')) {
    if (part === '') continue;
    const id = part.slice(0, 2);
    fields.set(id, [...(fields.get(id) ?? []), part.slice(2)]);
  }
  return { text, code, fixed: body.slice(2, 2 + length), fields, sequence, checksummed };
}

/** The six counts of a 64 (after patron status 14, language 3, transaction date 18), by summary list. */
export function summaryCounts(answer: Answer): Record<SummaryList, number> {
  if (answer.code !== '64') throw new Error(`not a 64: ${answer.text}`);
  const counts = answer.fixed.slice(35, 59);
  return Object.fromEntries(SUMMARY.map((name, i) => [name, Number(counts.slice(i * 4, i * 4 + 4))])) as Record<
    SummaryList,
    number
  >;
}

/**
 * One connection of a self-check terminal. send() signs each request with
 * the next AY (0-9, wrapping) unless the client was made with sign: false;
 * exchange() writes text exactly as given, for hand-made trailers.
 */
export class TextSip2Client extends FrameSocket {
  private sequence = 0;

  private constructor(
    socket: Socket,
    readonly signing: boolean,
    readonly charset: WireCharset,
  ) {
    super(socket);
  }

  static async connect(port: number, options: { sign?: boolean; charset?: WireCharset } = {}): Promise<TextSip2Client> {
    return new TextSip2Client(await openSocket(port), options.sign ?? true, options.charset ?? 'latin1');
  }

  /** Writes the message, ended by CR; returns the AY it was signed with, or null when unsigned. */
  write(message: string): number | null {
    if (!this.signing) {
      this.writeText(`${message}\r`);
      return null;
    }
    const sequence = this.sequence;
    this.sequence = (sequence + 1) % 10;
    this.writeText(`${sign(message, sequence, this.charset)}\r`);
    return sequence;
  }

  private writeText(wire: string): void {
    this.writeRaw(Buffer.from(wire, this.charset));
  }

  /** The next answer, read by the 3M layout; rejects on timeout or close. */
  async next(timeoutMs = 5000): Promise<Answer> {
    return readAnswer((await this.nextFrame(timeoutMs)).frame.toString(this.charset), this.charset);
  }

  /** Writes a message and reads its answer: one round trip. */
  async send(message: string, timeoutMs = 5000): Promise<Answer> {
    this.write(message);
    return this.next(timeoutMs);
  }

  /** Writes the text as given (only the CR is added) and reads the answer. */
  async exchange(wire: string, timeoutMs = 5000): Promise<Answer> {
    this.writeText(`${wire}\r`);
    return this.next(timeoutMs);
  }

  /** True when nothing arrived and the connection stayed open for ms. */
  async silentFor(ms: number): Promise<boolean> {
    return !(await this.somethingWithin(ms));
  }

  /** Login (941 expected) and SC Status, as a self-check terminal starts a session. */
  async start(): Promise<void> {
    const login = await this.send(text.login());
    if (!login.text.startsWith('941')) throw new Error(`login refused: ${login.text}`);
    const status = await this.send(text.scStatus());
    if (status.code !== '98') throw new Error(`expected 98, got ${status.text}`);
  }
}
