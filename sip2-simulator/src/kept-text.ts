import { redactSecrets } from '../../src/sip2/index.js';

/**
 * What the simulator keeps of a message's wire text for testers to read (the
 * traffic page, the conformance report, the debug log): password fields
 * masked, and at most KEPT_CHARS characters, so that a client sending 256 KiB
 * frames cannot make the bounded lists hold hundreds of megabytes.
 *
 * A client's message is masked without trusting its layout: a fixed part of
 * the wrong length or a missing | would hide a password from a mask that looks
 * for AC, AD and CO only where fields start, so every AC, AD or CO after the
 * command id is masked to the next |, a patron id holding "CO" too. AZ goes
 * with them: with the rest of the message known, the checksum tells the sum
 * of a password's characters. The simulator's own answers are laid out by
 * its codec and hold no password; they are masked where fields start, as the
 * gateway's logs are.
 */

export const KEPT_CHARS = 2048;

/** A message a client sent, as kept. */
export function keptClientText(text: string): string {
  const rest = text.slice(2);
  const masked = rest.replace(/(AC|AD|CO)[^|\r\n]*/g, '$1***');
  const kept = masked === rest ? text : text.slice(0, 2) + masked.replace(/AZ[0-9A-Fa-f]{4}([\r\n]*)$/, 'AZ****$1');
  return bounded(kept);
}

/** A message the simulator sent, as kept. */
export function keptServerText(text: string): string {
  return bounded(redactSecrets(text));
}

function bounded(text: string): string {
  return text.length <= KEPT_CHARS ? text : `${text.slice(0, KEPT_CHARS)}… (${text.length} characters)`;
}
