import { randomBytes, randomInt } from 'node:crypto';
import { z } from 'zod';

/**
 * Fault state: what goes wrong with the next responses. Shared by every
 * connection; changed by CLI flags at start and by the control endpoint
 * while the simulator runs.
 */

/** Message types the rejectMessage fault can refuse. */
const REJECTABLE = ['99', '23', '63', '17', '29', '65', '15', '35', '37', '11', '09', '01', '25', '19'] as const;
type Rejectable = (typeof REJECTABLE)[number];

/** The reply faults, in the order they are tried: one response suffers at most one. */
const REPLY_FAULTS = ['hang', 'dropMidReply', 'garbage', 'corruptChecksums'] as const;
export type ReplyFault = (typeof REPLY_FAULTS)[number];

/** true = every response until cleared; a number = the next N responses; false or 0 = off. */
type FaultCount = boolean | number;

export interface FaultState {
  latencyMs: number;
  jitterMs: number;
  refuseConnections: boolean;
  dropMidReply: FaultCount;
  hang: FaultCount;
  corruptChecksums: FaultCount;
  garbage: FaultCount;
  rejectMessage: Rejectable | null;
  /** Every 64 announces this many entries in each list and serves synthesised ones past the real; false = off. */
  listCount: number | false;
}

const millis = z.number().int('must be a whole number of milliseconds').min(0).max(600_000);
const count = z.union([z.boolean(), z.number().int().min(0).max(1_000_000)], {
  error: 'must be true (every response), false, or a number N of responses (0-1000000)',
});

const faultPatchSchema = z
  .object({
    latencyMs: millis,
    jitterMs: millis,
    refuseConnections: z.boolean(),
    dropMidReply: count,
    hang: count,
    corruptChecksums: count,
    garbage: count,
    rejectMessage: z.enum(REJECTABLE).nullable(),
    listCount: z.union(
      [z.literal(false), z.number().int().min(0).max(9999, 'must be at most 9999 (the 64 counts have four digits)')],
      {
        error: 'must be false or a number N of list entries (0-9999; 0 = off)',
      },
    ),
  })
  .partial()
  .strict();
export type FaultPatch = z.infer<typeof faultPatchSchema>;

function noFaults(): FaultState {
  return {
    latencyMs: 0,
    jitterMs: 0,
    refuseConnections: false,
    dropMidReply: false,
    hang: false,
    corruptChecksums: false,
    garbage: false,
    rejectMessage: null,
    listCount: false,
  };
}

/** Validates a partial fault update; throws an Error whose message says what is wrong. */
export function parseFaultPatch(value: unknown): FaultPatch {
  const result = faultPatchSchema.safeParse(value);
  if (!result.success) {
    const reasons = result.error.issues.map((issue) => {
      const path = issue.path.join('.');
      if (issue.code === 'unrecognized_keys')
        return `unknown fault ${issue.keys.map((k) => `"${k}"`).join(', ')} (known: ${Object.keys(noFaults()).join(', ')})`;
      return path ? `${path}: ${issue.message}` : issue.message;
    });
    throw new Error(reasons.join('; '));
  }
  return result.data;
}

export class Faults {
  private current: FaultState;

  constructor(initial: Partial<FaultState> = {}) {
    this.current = { ...noFaults(), ...normalize(initial) };
  }

  get state(): Readonly<FaultState> {
    return { ...this.current };
  }

  /** Merges a validated patch; returns the new state. */
  apply(patch: FaultPatch): Readonly<FaultState> {
    this.current = { ...this.current, ...normalize(patch) };
    return this.state;
  }

  clear(): Readonly<FaultState> {
    this.current = noFaults();
    return this.state;
  }

  /** Milliseconds to wait before the next response. */
  delayMs(): number {
    const { latencyMs, jitterMs } = this.current;
    return latencyMs + (jitterMs > 0 ? randomInt(jitterMs + 1) : 0);
  }

  /** The fault the next response suffers, if any; a counted fault is used up by one. */
  takeReplyFault(): ReplyFault | null {
    for (const fault of REPLY_FAULTS) {
      const value = this.current[fault];
      if (value === true) return fault;
      if (typeof value === 'number' && value > 0) {
        this.current[fault] = value - 1 > 0 ? value - 1 : false;
        return fault;
      }
    }
    return null;
  }

  rejects(code: string): boolean {
    return this.current.rejectMessage === code;
  }

  /** The listCount fault's N; 0 when off. */
  listCount(): number {
    return this.current.listCount === false ? 0 : this.current.listCount;
  }
}

function normalize<T extends Partial<FaultState>>(patch: T): T {
  const out = { ...patch };
  for (const fault of REPLY_FAULTS) {
    if (out[fault] === 0) (out as Partial<FaultState>)[fault] = false;
  }
  if (out.listCount === 0) (out as Partial<FaultState>).listCount = false;
  return out;
}

// ------------------------------------------------------------ what a fault does to bytes

/** The response with a wrong AZ value (unchanged when it carries no AZ). */
export function corruptChecksum(bytes: Buffer): Buffer {
  const text = bytes.toString('latin1');
  const m = /AZ([0-9A-Fa-f]{4})(\r\n|\r)$/.exec(text);
  if (!m) return bytes;
  const wrong = ((parseInt(m[1]!, 16) + 1) & 0xffff).toString(16).toUpperCase().padStart(4, '0');
  const at = m.index + 2;
  const out = Buffer.from(bytes);
  out.write(wrong, at, 'latin1');
  return out;
}

/** Random bytes that are not SIP2 (no two-digit command id, no checksum), ended by CR. */
export function garbageBytes(): Buffer {
  const length = 16 + randomInt(33);
  const body = Buffer.from(
    randomBytes(length)
      .map((b) => 0x21 + (b % 0x5e))
      .filter((b) => b !== 0x7c),
  );
  return Buffer.concat([Buffer.from('#!'), body, Buffer.from('\r')]);
}
