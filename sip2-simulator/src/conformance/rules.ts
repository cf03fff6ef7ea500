/**
 * The conformance rules the simulator holds a client's messages to, as data:
 * each with its stable id, the section of the 3M text (Standard Interchange
 * Protocol 2.00, rev. 2.12) it comes from, and what fires it. The README's
 * table is checked against this one (test/unit/simulator/conformance.test.ts).
 */
export const CONFORMANCE_RULES = {
  terminator: {
    section: 'Message Terminator',
    fires: 'a message that ends in LF or in nothing instead of CR',
  },
  nul: {
    section: 'Nulls',
    fires: 'a NUL byte anywhere in a message',
  },
  'unknown-message': {
    section: 'Commands',
    fires:
      'a message of the ACS sent to it (a response id such as 24 or 96); an id the catalogue does not know is not one, as the 3M text asks an ACS to ignore unrecognised commands',
  },
  'login-first': {
    section: 'Login',
    fires: 'any message but 93 (and 97) before a successful login',
  },
  'one-at-a-time': {
    section: 'SC System Error Handling',
    fires:
      "a message that arrives before the answer to the previous one was sent, unless it repeats that one byte for byte (the retransmission the text asks for when the SC's timer expires)",
  },
  checksum: {
    section: 'Checksums and Sequence Numbers',
    fires:
      'an AZ that does not match the message, an AZ that is not four hex digits or not last, or a message without AZ on a connection whose earlier messages carried one',
  },
  sequence: {
    section: 'Checksums and Sequence Numbers',
    fires:
      'an AZ without AY before it, AY without AZ, an AY that is not a digit, an AY on a 97, or an AY that does not follow the previous one (a retransmission with the same AY and AZ may repeat it)',
  },
  'fixed-length': {
    section: 'Fixed-length fields',
    fires:
      'a message shorter than its fixed-length fields, a | among them, or tagged fields that do not start right after them',
  },
  'fixed-value': {
    section: 'Field Definitions',
    fires:
      'a fixed field outside its values: Y/N, 0/1, digits, language 000-999, protocol version x.xx, status code 0-2, hold mode + - *, fee type 01-99, currency of three letters, the summary with anything but Y and blanks or more than one Y; a Y/N tag (BO, BI) that is neither; BY not 1-9',
  },
  'date-format': {
    section: 'Field Definitions',
    fires:
      'an 18-char date (transaction date, nb due date, return date, BW) that is not YYYYMMDDZZZZHHMMSS with a real date and time (all zeros, the 3M "unsupported", is accepted; so is a blank nb due date with no block N: it is the off-line due date, which such a message has not, and most SCs, SIPServer\'s t/ suite among them, send blanks)',
  },
  'required-field': {
    section: 'Command Messages to the ACS',
    fires:
      "a required tagged field left out (the message's layout in the 3M text), or a 15 or 29 with neither AB nor AJ",
  },
  'field-terminator': {
    section: 'Variable-length fields',
    fires: 'a tagged field that does not end with |',
  },
  'field-id': {
    section: 'Variable-length fields',
    fires: 'a tagged field that does not start with a two-character field id',
  },
  'field-length': {
    section: 'Variable-length fields',
    fires: 'a variable-length field of more than 255 characters',
  },
  'duplicate-field': {
    section: 'Packet Format',
    fires: 'a field the message may carry once sent twice',
  },
} as const satisfies Record<string, { section: string; fires: string }>;

export type RuleId = keyof typeof CONFORMANCE_RULES;

/** @internal Every rule id: the tests check each has a case. */
export const RULE_IDS = Object.keys(CONFORMANCE_RULES) as RuleId[];

/** One way a message breaks the rules. `detail` names fields and positions, never a value (it may be a password). */
export interface Deviation {
  readonly rule: RuleId;
  /** The 3M section: the rule's, or the message's or field's own where the rule has one per message or field. */
  readonly section: string;
  readonly detail: string;
}
