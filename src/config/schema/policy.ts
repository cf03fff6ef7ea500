import type { z } from 'zod';
import { hasLibraries } from './libraries.js';

/**
 * The demo-versus-real policy and the rules that span sections: in demo mode
 * (no sip2.host) the demo library's terminal account and institution apply;
 * against a real ILS each must be set, and never silently defaulted.
 */

/**
 * The demo library's terminal account and institution (sip2-simulator/data/demo.json):
 * used only in demo mode (no sip2.host). Against a real ILS each must be set.
 */
export const DEMO_SIP2 = {
  terminal: { user: 'paia', password: 'paia-secret', location: 'MAIN' },
  institution: 'DEMO',
} as const;

/**
 * Settings with a value only in demo mode, and what to put there for a real
 * ILS. With sip2.host set, leaving one out is an error naming it: a real ILS
 * must never get the demo's terminal account or the demo's loopback URIs.
 */
const REAL_ILS_SETTINGS: readonly { path: readonly [string, string, ...string[]]; fix: string }[] = [
  {
    path: ['sip2', 'terminal', 'user'],
    fix: 'the login name of the SIP2 terminal account the ILS has for the gateway (93 CN; in Koha a <login> of SIPconfig.xml), e.g. "paia-gateway" (PAIA_SIP2_TERMINAL_USER)',
  },
  {
    path: ['sip2', 'terminal', 'password'],
    fix: 'the password of that terminal account (93 CO), best given in the environment (PAIA_SIP2_TERMINAL_PASSWORD)',
  },
  {
    path: ['sip2', 'terminal', 'location'],
    fix: 'the location code of the terminal (93 CP), e.g. the branch code the ILS has for the account, or "" to send none (PAIA_SIP2_TERMINAL_LOCATION)',
  },
  {
    path: ['sip2', 'institution'],
    fix: 'the institution id the ILS expects in every message (AO): in Koha the branch code, in Evergreen the institution of SIPconfig.xml (PAIA_SIP2_INSTITUTION)',
  },
  {
    path: ['paia', 'itemUri'],
    fix: 'the URI template of your items, e.g. "https://lib.example.org/item/{barcode}" (PAIA_PAIA_ITEM_URI)',
  },
  {
    path: ['paia', 'editionUri'],
    fix: 'the URI template of your titles, e.g. "https://lib.example.org/title/{title}" (PAIA_PAIA_EDITION_URI)',
  },
];

function valueAt(config: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (current, key) =>
      typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined,
    config,
  );
}

/** Rules between sections, run even when sections failed (to report every problem): only clear cases are reported. */
export function crossSectionRules(config: Record<string, unknown>, ctx: z.RefinementCtx): void {
  // Sections that did not validate arrive as they were written; only a clear case is reported.
  const workers = (config.http as { workers?: unknown } | undefined)?.workers;
  const store = (config.state as { store?: unknown } | undefined)?.store;
  if (typeof workers === 'number' && workers > 1 && store === 'memory') {
    ctx.addIssue({
      code: 'custom',
      path: ['http', 'workers'],
      message:
        'must be 1 while state.store is "memory": each worker would keep its own sessions and counters, so a token issued by one worker would be unknown to the next; set state.store to "redis" (and state.redis.url or state.redis.sentinels) to run several workers',
    });
  }
  // With libraries the top level's sip2, paia and daia are only what each library inherits: each library is held to the rules below (load.ts).
  if (hasLibraries(config)) return;
  // Only a lookup in use is held to the call's bound: a gateway without one must not trip over its default.
  const lookup = (config.daia as { records?: { http?: { url?: unknown; timeoutMs?: unknown } } } | undefined)?.records
    ?.http;
  const lookupMs = typeof lookup?.url === 'string' ? lookup.timeoutMs : undefined;
  const callMs = (config.http as { requestTimeoutMs?: unknown } | undefined)?.requestTimeoutMs;
  if (typeof lookupMs === 'number' && typeof callMs === 'number' && lookupMs >= callMs) {
    ctx.addIssue({
      code: 'custom',
      path: ['daia', 'records', 'http', 'timeoutMs'],
      message: `must be below http.requestTimeoutMs (${callMs}): a lookup that hangs must end in time for its record to be answered without items, not the whole call with 504`,
    });
  }
  const host = (config.sip2 as { host?: unknown } | undefined)?.host;
  if (typeof host === 'string') {
    for (const { path, fix } of REAL_ILS_SETTINGS) {
      const value = valueAt(config, path);
      if (value !== undefined && value !== null) continue;
      ctx.addIssue({
        code: 'custom',
        path: [...path],
        message: `is required because sip2.host is set (a real ILS; the built-in demo values apply only to the embedded simulator): set it to ${fix}`,
      });
    }
  }
}
