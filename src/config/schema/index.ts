import { z } from 'zod';
import { authSection } from './auth.js';
import { cacheSection } from './cache.js';
import { daiaSection } from './daia.js';
import { demoSection } from './demo.js';
import { httpSection } from './http.js';
import { librariesSection } from './libraries.js';
import { logSection } from './log.js';
import { metricsSection } from './metrics.js';
import { paiaSection } from './paia.js';
import { crossSectionRules, DEMO_SIP2 } from './policy.js';
import { sip2Section } from './sip2.js';
import { stateSection } from './state.js';
import type { DeepReadonly } from './types.js';
import { must } from './validators.js';

/**
 * The configuration schema: every setting a sysadmin can make, its default,
 * and what it must look like, one file per section. Messages are written for
 * the person editing the YAML file: each says what the value must be (the
 * loader appends what it got and where from, and hides secrets). Keys are
 * camelCase in YAML as here; every setting can also be set by an environment
 * variable named after its path (`sip2.pool.acquireTimeoutMs` ->
 * `PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS`, settings.ts). Where a component has a
 * default of its own, the setting's default is taken from the component.
 */

export { STATE_DIR_OFF } from './state.js';

/** What the file must be, as a whole. */
export const TOP_LEVEL_MUST =
  'must be a mapping of sections (http, sip2, paia, daia, auth, state, cache, metrics, log, demo, libraries)';

/** The whole file. */
export const configSchema = z
  .strictObject(
    {
      /** The HTTP(S) side: where PAIA clients connect. */
      http: httpSection,
      /** The SIP2 side: the library system. */
      sip2: sip2Section,
      /** PAIA identifiers and limits. */
      paia: paiaSection,
      /** Anonymous availability (DAIA): its limits per client and its share of the SIP2 pool. */
      daia: daiaSection,
      /** Access tokens and sessions. */
      auth: authSection,
      /** Where sessions, lockouts and limits live (memory or Redis). */
      state: stateSection,
      /** Short-lived caches of ILS answers. */
      cache: cacheSection,
      /** Prometheus metrics. */
      metrics: metricsSection,
      /** Logging. */
      log: logSection,
      /** The embedded SIP2 simulator, used only while sip2.host is null. */
      demo: demoSection,
      /** Several libraries behind one gateway, by id, each with its own sip2, paia and daia over the top level's (issue 29). */
      libraries: librariesSection,
    },
    must(TOP_LEVEL_MUST),
  )
  .superRefine(crossSectionRules, { when: () => true })
  // Demo mode (no sip2.host): the demo library's terminal account and institution.
  .transform((config) => {
    const terminal: { user?: string; password?: string; location?: string } = config.sip2.terminal;
    const institution: string | undefined = config.sip2.institution;
    return {
      ...config,
      sip2: {
        ...config.sip2,
        terminal: {
          user: terminal.user ?? DEMO_SIP2.terminal.user,
          password: terminal.password ?? DEMO_SIP2.terminal.password,
          location: terminal.location ?? DEMO_SIP2.terminal.location,
        },
        institution: institution ?? DEMO_SIP2.institution,
      },
    };
  });

/**
 * The validated configuration: the schema's output, deeply readonly (the
 * loader deep-freezes it). What each setting means is documented on the
 * schema above. `libraries` is the loader's: null without libraries (a
 * single-library gateway), else each library's effective configuration.
 */
export type Config = DeepReadonly<Omit<z.output<typeof configSchema>, 'libraries'>> & {
  readonly libraries: readonly LibraryConfig[] | null;
};

/**
 * One library of the libraries section, in file order. `config` is a whole
 * configuration: the top level's, with the library's effective sip2, paia and
 * daia (its own settings merged over the top level's, validated, defaults
 * applied) and `libraries` null; so whatever builds a gateway's sides from a
 * Config (gateway/parts/) builds a library's unchanged. Its other sections
 * are the top level's very objects.
 */
export interface LibraryConfig {
  readonly id: string;
  readonly config: Config;
}
/** @internal */
export type HttpTlsConfig = NonNullable<Config['http']['tls']>;
/** @internal */
export type Sip2TlsConfig = NonNullable<Config['sip2']['tls']>;
