import { z } from 'zod';
import { must } from './validators.js';

/**
 * Several libraries behind one gateway (issue 29): `libraries`, keyed by
 * library id in file order, each entry giving its own sip2, paia and daia
 * settings over the top level's. Here is what an id and an entry may be; the
 * loader (../libraries.ts, ../load.ts) merges each entry over the top level's
 * values as written and validates the result with the whole schema, so a
 * library is held to every rule a single-library gateway is.
 */

/** The top-level key of the section. */
export const LIBRARIES_KEY = 'libraries';

/** The sections a library may give; every other section applies to all libraries and is set at the top level. */
export const LIBRARY_SECTIONS: readonly string[] = ['sip2', 'paia', 'daia'];

/**
 * One path segment that needs no escaping (RFC 3986 unreserved), as an ISIL such as "DE-830" is. Not ":",
 * though ISO 15511 allows it: Hono reads ":name" in a route's path as a parameter, and a library's routes
 * start with its id.
 */
const LIBRARY_ID = /^[A-Za-z0-9._~-]{1,64}$/;

/**
 * Names the gateway answers at its base path itself: a library of that name
 * would collide with them once each library is served at {basePath}/{id}
 * (src/http/app.ts: core, auth, daia; src/http/routes/docs.ts: openapi.json,
 * docs; routes/health.ts and routes/metrics.ts: healthz, readyz, metrics).
 * Compared without case, as ids are among each other.
 */
const RESERVED_IDS: readonly string[] = [
  'auth',
  'core',
  'daia',
  'openapi.json',
  'docs',
  'healthz',
  'readyz',
  'metrics',
];

/** What is wrong with a library id, or null; `others` are the ids before it (in any order). */
export function libraryIdProblem(id: string, others: readonly string[]): string | null {
  if (!LIBRARY_ID.test(id))
    return 'is not a usable library id: it is one segment of the library\'s URLs, so use 1 to 64 letters, digits and "-", ".", "_", "~" (an ISIL such as "DE-830" works; write one with ":" or "/" another way)';
  if (id === '.' || id === '..') return 'is not a usable library id: URLs drop "." and ".." as path segments';
  // A JavaScript object cannot hold this key as its own: the library would silently not exist.
  if (id === '__proto__') return 'is not a usable library id: choose another';
  if (RESERVED_IDS.includes(id.toLowerCase()))
    return `is not a usable library id: the gateway's own paths use it (${RESERVED_IDS.join(', ')}); choose another`;
  const twin = others.find((other) => other !== id && other.toLowerCase() === id.toLowerCase());
  if (twin !== undefined)
    return `differs from the library id "${twin}" only in case: some proxies lowercase URLs, so ids must differ in more than case`;
  return null;
}

/** What is wrong with a library's entry, each with the path below the library's id ([] is the entry itself). */
export function libraryEntryProblems(value: unknown): { path: string[]; message: string }[] {
  if (value === null || value === undefined) return [];
  if (typeof value !== 'object' || Array.isArray(value))
    return [{ path: [], message: `must be a section with the library's ${LIBRARY_SECTIONS.join(', ')} settings` }];
  return Object.keys(value)
    .filter((key) => !LIBRARY_SECTIONS.includes(key))
    .map((key) => ({
      path: [key],
      message: `is not a section a library may set: a library gives ${LIBRARY_SECTIONS.join(', ')} (each setting optional, the rest from the top level); the other sections apply to every library and are set at the top level`,
    }));
}

/** The library ids with their sections; absent or empty: a single-library gateway, exactly as without it. */
export const librariesSection = z
  .record(
    z.string(),
    z.unknown(),
    must('must be a section of library ids, each with its settings ("DE-830:" with "sip2:" indented below it)'),
  )
  .superRefine((libraries, ctx) => {
    const ids = Object.keys(libraries);
    ids.forEach((id, index) => {
      const idProblem = libraryIdProblem(id, ids.slice(0, index));
      const problems = idProblem === null ? [] : [{ path: [], message: idProblem }];
      for (const { path, message } of [...problems, ...libraryEntryProblems(libraries[id])])
        ctx.addIssue({ code: 'custom', path: [id, ...path], message, params: { showValue: false } });
    });
  })
  .nullable()
  .default(null);

/** Rules only a library is held to, on its effective raw configuration (top level and its own sections merged). */
export function libraryRules(effective: Record<string, unknown>): { path: string[]; message: string }[] {
  const sip2 = effective.sip2;
  const host = typeof sip2 === 'object' && sip2 !== null ? (sip2 as { host?: unknown }).host : undefined;
  if (host !== undefined && host !== null) return [];
  return [
    {
      path: ['sip2', 'host'],
      message:
        "is required for every library, in the library's sip2 section or at the top level: the embedded demo simulator serves only a gateway without libraries",
    },
  ];
}

/** True when the raw configuration names at least one library. */
export function hasLibraries(config: Record<string, unknown>): boolean {
  const section = config[LIBRARIES_KEY];
  return typeof section === 'object' && section !== null && Object.keys(section).length > 0;
}
