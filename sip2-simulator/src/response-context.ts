import type { Dialect } from '../../src/sip2/index.js';
import type { Library, Patron } from './library.js';
import type { Profile } from './profiles.js';

/** What answering one request needs besides the request: the library, how this server speaks, the faults in force. */
export interface ResponseContext {
  readonly library: Library;
  readonly dialect: Dialect;
  /** Location of the logged-in terminal account, for 98 AN. */
  readonly terminalLocation?: string | undefined;
  /** The server profile (fine formats, BV/BH, padding); default none. */
  readonly profile?: Profile | undefined;
  /** The listCount fault: every 64 list announces and serves this many entries; 0 = off. */
  readonly listCount?: number | undefined;
}

/** The patron a request's AA names, matched as the profile's ids= says (exact without a profile). */
export function requestPatron(ctx: ResponseContext, identifier: string): Patron | undefined {
  return ctx.library.findPatron(identifier, ctx.profile?.ids ?? 'exact');
}
