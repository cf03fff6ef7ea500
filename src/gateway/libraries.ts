import { join } from 'node:path';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import type { Config } from '../config/index.js';
import { librariesFetch } from '../http/libraries.js';
import type { Logger } from '../log.js';
import { LibrariesMetrics } from '../metrics/libraries.js';
import { buildComponents, type Components, type Served } from './components.js';
import { appSettings, clientAddressOf } from './parts/app.js';

/**
 * Several libraries behind one gateway (issue 29): each library's parts are
 * built by the composition root unchanged (components.ts), from the
 * library's own configuration placed at its own URL and its own state:
 *
 * - http.basePath (and http.publicUrl) get "/{id}", so its routes, links,
 *   OpenAPI servers and URIs are the library's;
 * - state.dir gets "/{id}" (the memory store's state file per library), and
 *   state.redis.keyPrefix gets "{id}/" (a "/" no id has, so no library's
 *   keys and invalidation channel are the beginning of another's): tokens,
 *   lockouts, limits and shared reads never cross libraries;
 * - its logger carries `library: id` on every line, the access lines too.
 *
 * Each has its own SIP2 pool, state store, app and metrics; the one HTTP
 * server's fetch dispatches by the first path segment below the base path
 * (http/libraries.ts), and /readyz and /metrics report every library.
 */

/** A library's configuration at its place: its base path, its state. */
export function libraryPlace(config: Config, id: string): Config {
  const { http, state } = config;
  return {
    ...config,
    http: { ...http, basePath: `${http.basePath}/${id}`, publicUrl: http.publicUrl && `${http.publicUrl}/${id}` },
    state: {
      ...state,
      dir: state.dir === null ? null : join(state.dir, id),
      redis: { ...state.redis, keyPrefix: `${state.redis.keyPrefix}${id}/` },
    },
  };
}

/** Builds every library's parts at once (a pool per library); one that does not start stops the start, naming it. */
export async function buildLibraries(
  config: Config,
  libraries: NonNullable<Config['libraries']>,
  logger: Logger,
  ownUrl: string,
): Promise<Served> {
  const built = await Promise.allSettled(
    libraries.map(({ id, config: own }) =>
      buildComponents(libraryPlace(own, id), logger.child({ library: id }), {
        ownUrl: `${ownUrl}/${id}`,
        processMetrics: false,
      }),
    ),
  );
  const failed = built.findIndex((outcome) => outcome.status === 'rejected');
  if (failed >= 0) {
    for (const outcome of built) if (outcome.status === 'fulfilled') outcome.value.destroy();
    const reason = (built[failed] as PromiseRejectedResult).reason as Error;
    throw new Error(`library ${libraries[failed]?.id}: ${reason.message}`, { cause: reason });
  }
  const parts = libraries.map(({ id }, index) => ({
    id,
    parts: (built[index] as PromiseFulfilledResult<Components>).value,
  }));
  return served(config, parts, logger);
}

/** The libraries behind one fetch, with the root's /readyz and /metrics, and stopped together. */
function served(config: Config, libraries: readonly { id: string; parts: Components }[], logger: Logger): Served {
  const web = appSettings(config);
  const clientAddress = clientAddressOf(web.trustedProxy);
  const metrics = libraries.flatMap(({ id, parts }) => (parts.metrics ? [{ id, metrics: parts.metrics }] : []));
  const each = <T>(read: (parts: Components) => T): Record<string, T> =>
    Object.fromEntries(libraries.map(({ id, parts }) => [id, read(parts)]));
  const fetch = librariesFetch({
    basePath: web.basePath,
    libraries: libraries.map(({ id, parts: { app } }) => ({ id, fetch: (request, env) => app.fetch(request, env) })),
    logger: logger.child({ component: 'http' }),
    corsOrigins: web.corsOrigins,
    hsts: web.hsts,
    health: {
      readiness: () => libraries.map(({ id, parts }) => ({ id, state: parts.readiness() })),
      anyLibrary: config.http.readyWhen === 'any-library',
      logger: logger.child({ component: 'health' }),
    },
    ...(web.metrics
      ? {
          metricsEndpoint: {
            metrics: new LibrariesMetrics(metrics),
            allowedClients: new ClientAllowlist(web.metrics.allowedClients),
            clientAddress,
            logger: logger.child({ component: 'metrics' }),
          },
        }
      : {}),
  });
  return {
    fetch,
    metrics: null,
    started: { libraries: each(({ target, dialect }) => ({ sip2: `${target.host}:${target.port}`, dialect })) },
    demo: null,
    sip2Stats: () => each(({ pool }) => pool.stats()),
    markShuttingDown: () => {
      for (const { parts } of libraries) parts.markShuttingDown();
    },
    async close(deadline, log) {
      // Each library's own order (records, pool, store); the libraries side by side, so that one slow pool does not hold up the others' closing.
      await Promise.all(libraries.map(({ id, parts }) => parts.close(deadline, log.child({ library: id }))));
    },
    destroy() {
      for (const { parts } of libraries) parts.destroy();
    },
  };
}
