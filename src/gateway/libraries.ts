import { join } from 'node:path';
import { ClientAllowlist } from '../auth/client-allowlist.js';
import type { Config } from '../config/index.js';
import { librariesFetch } from '../http/libraries.js';
import type { Logger } from '../log.js';
import { LibrariesMetrics } from '../metrics/libraries.js';
import type { StateStore } from '../state/index.js';
import { buildComponents, type Components, type Served } from './components.js';
import { planReload } from './libraries-reload.js';
import { LibraryStores } from './library-stores.js';
import { appSettings, clientAddressOf } from './parts/app.js';
import { openStore, stateStoreSettings } from './parts/state.js';

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

/** What a SIGHUP hands the gateway: the configuration read again, and the libraries whose new entries were refused. */
export interface LibrariesReload {
  readonly config: Config;
  readonly refused: readonly { id: string; problems: readonly { path: string; message: string }[] }[];
}

/** Several libraries as the server serves them; `reload` applies a configuration read again (SIGHUP). */
export interface ServedLibraries extends Served {
  reload(change: LibrariesReload): Promise<void>;
}

/** One library's parts as they serve: the configuration they were built from, and the calls in flight. */
interface Running {
  readonly id: string;
  readonly config: Config;
  readonly parts: Components;
  inFlight: number;
  /** Called when inFlight drops to 0 while the library drains. */
  idle: (() => void) | null;
  /** Its close, once begun (a drain after a reload and the gateway's stop may both ask). */
  closing: Promise<void> | null;
}

/**
 * Builds every library's parts at once (a pool per library); one that does
 * not start stops the start at once, naming it, and every pool built or
 * still being built is dropped, so that nothing keeps the process alive.
 */
export async function buildLibraries(
  config: Config,
  libraries: NonNullable<Config['libraries']>,
  logger: Logger,
  ownUrl: string,
): Promise<ServedLibraries> {
  const build = libraryBuilder(config, logger, ownUrl);
  const parts = await allOrNone(
    libraries.map(({ id, config: own }) =>
      build(id, own, { requireLogin: false }).catch((error: Error) => {
        throw new Error(`library ${id}: ${error.message}`, { cause: error });
      }),
    ),
    (built) => built.destroy(),
  );
  return served(
    config,
    libraries.map(({ id, config: own }, index) => running(id, own, parts[index] as Components)),
    logger,
    build,
  );
}

/**
 * Builds one library's parts. At start a pool that cannot log in yet keeps
 * trying, as a single library's does (the start-up line says why, /readyz
 * lists it as not ready); a reload puts a library in only once its pool has
 * logged in (`requireLogin`), since it has the running library, or none, to
 * keep instead. With the memory store a library's parts share its store
 * (library-stores.ts).
 */
type LibraryBuild = (id: string, config: Config, options: { requireLogin: boolean }) => Promise<Components>;

function libraryBuilder(config: Config, logger: Logger, ownUrl: string): LibraryBuild {
  const stores = config.state.store === 'memory' ? new LibraryStores() : null;
  return (id, own, { requireLogin }) => {
    const place = libraryPlace(own, id);
    const log = logger.child({ library: id });
    const build = (store?: StateStore) =>
      buildComponents(place, log, { ownUrl: `${ownUrl}/${id}`, processMetrics: false, requireLogin, store });
    return stores === null ? build() : stores.build(id, () => openStore(stateStoreSettings(place), log), build);
  };
}

function running(id: string, config: Config, parts: Components): Running {
  return { id, config, parts, inFlight: 0, idle: null, closing: null };
}

/**
 * Every promise's value, or the first rejection as soon as it happens (not
 * when the slowest is done); every value there is then, and every one that
 * comes later, is handed to `drop`.
 */
export function allOrNone<T>(promises: readonly Promise<T>[], drop: (value: T) => void): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const values: T[] = [];
    const done: T[] = [];
    let left = promises.length;
    let failed = false;
    if (left === 0) resolve(values);
    promises.forEach((promise, index) => {
      promise.then(
        (value) => {
          if (failed) return drop(value);
          values[index] = value;
          done.push(value);
          if (--left === 0) resolve(values);
        },
        (error: unknown) => {
          if (failed) return;
          failed = true;
          for (const value of done) drop(value);
          reject(error);
        },
      );
    });
  });
}

/**
 * The libraries behind one fetch, with the root's /readyz and /metrics,
 * stopped together. The set changes on reload: a library's calls go to the
 * parts in the map when they arrive, and each library counts its calls in
 * flight, so that one replaced or removed finishes them before its pool closes.
 */
function served(config: Config, initial: readonly Running[], logger: Logger, build: LibraryBuild): ServedLibraries {
  const current = new Map(initial.map((library) => [library.id, library]));
  const draining = new Set<Running>();
  let stopping = false;
  const web = appSettings(config);
  const clientAddress = clientAddressOf(web.trustedProxy);
  const all = () => [...current.values(), ...draining];
  const each = <T>(read: (parts: Components) => T): Record<string, T> =>
    Object.fromEntries([...current.values()].map(({ id, parts }) => [id, read(parts)]));
  // A removed library's series go with it: the label takes the ids of the libraries served now.
  const metrics = web.metrics
    ? new LibrariesMetrics(() =>
        [...current.values()].flatMap(({ id, parts }) => (parts.metrics ? [{ id, metrics: parts.metrics }] : [])),
      )
    : null;
  const fetch = librariesFetch({
    basePath: web.basePath,
    library: (id) => {
      const library = current.get(id);
      return library === undefined ? undefined : (request, env) => counted(library, request, env);
    },
    logger: logger.child({ component: 'http' }),
    corsOrigins: web.corsOrigins,
    hsts: web.hsts,
    health: {
      readiness: () => [...current.values()].map(({ id, parts }) => ({ id, state: parts.readiness() })),
      anyLibrary: config.http.readyWhen === 'any-library',
      logger: logger.child({ component: 'health' }),
    },
    ...(web.metrics && metrics
      ? {
          requestMetrics: metrics.http,
          metricsEndpoint: {
            metrics,
            allowedClients: new ClientAllowlist(web.metrics.allowedClients),
            clientAddress,
            logger: logger.child({ component: 'metrics' }),
          },
        }
      : {}),
  });

  const log = logger.child({ component: 'reload' });
  const drainMs = config.http.shutdownTimeoutMs;
  /** No new calls reach it (it is out of `current`); those in flight finish, bounded by http.shutdownTimeoutMs; then it closes. */
  const retire = async (library: Running): Promise<void> => {
    draining.add(library);
    const deadline = Date.now() + drainMs;
    await untilIdle(library, drainMs);
    if (library.inFlight > 0)
      log.warn(
        { library: library.id, inFlight: library.inFlight, timeoutMs: drainMs },
        `reload: library ${library.id}: calls still in flight after http.shutdownTimeoutMs; closing its pool anyway`,
      );
    try {
      await closeOf(library, deadline, log.child({ library: library.id }));
      log.info({ library: library.id }, `reload: library ${library.id}: calls finished, SIP2 connections closed`);
    } catch (error) {
      log.error({ library: library.id, err: error }, `reload: library ${library.id} did not close cleanly`);
      library.parts.destroy();
    } finally {
      draining.delete(library);
    }
  };

  const apply = async ({ config: next, refused }: LibrariesReload): Promise<void> => {
    if (next.libraries === null) {
      log.error(
        'reload: the configuration has no libraries section any more, nothing changed: a gateway without libraries serves other URLs, which takes a restart',
      );
      return;
    }
    for (const { id, problems } of refused) {
      const keeps = current.has(id) ? 'it keeps serving with its running configuration' : 'it is not added';
      log.error(
        { library: id, problems },
        `reload: the new configuration of library ${id} is invalid, ${keeps}: ${problems.map((problem) => `${problem.path}: ${problem.message}`).join('; ')}`,
      );
    }
    const plan = planReload(
      config,
      [...current.values()],
      next,
      refused.map(({ id }) => id),
    );
    if (plan.notApplied.length > 0)
      log.warn(
        { settings: plan.notApplied },
        `reload: not applied (these settings take effect at the next start): ${plan.notApplied.join(', ')}`,
      );
    const outcome = {
      added: [] as string[],
      replaced: [] as string[],
      removed: [] as string[],
      failed: [] as string[],
    };
    // A removed library takes no new call from now on, not once the new ones have started.
    for (const id of plan.removed) {
      const old = current.get(id);
      if (old === undefined || stopping) continue;
      current.delete(id);
      outcome.removed.push(id);
      void retire(old);
    }
    const toStart = [...plan.added, ...plan.replaced];
    const started = await Promise.allSettled(
      toStart.map(({ id, config: own }) => build(id, own, { requireLogin: true })),
    );
    toStart.forEach(({ id, config: own }, index) => {
      const result = started[index] as PromiseSettledResult<Components>;
      if (result.status === 'rejected') {
        const keeps = current.has(id) ? 'it keeps serving with its running configuration' : 'it is not added';
        log.error(
          { library: id, err: result.reason },
          `reload: library ${id} did not start, ${keeps}: ${(result.reason as Error).message}`,
        );
        outcome.failed.push(id);
        return;
      }
      if (stopping) {
        // The gateway began to stop while this one was starting: it never serves.
        result.value.destroy();
        return;
      }
      const old = current.get(id);
      current.set(id, running(id, own, result.value));
      (old === undefined ? outcome.added : outcome.replaced).push(id);
      if (old !== undefined) void retire(old);
    });
    log.info(
      { ...outcome, unchanged: plan.unchanged, kept: plan.kept, libraries: [...current.keys()] },
      'reload: libraries reloaded',
    );
  };
  // One reload at a time: a SIGHUP during a reload is applied after it, on what it left.
  let reloading: Promise<void> = Promise.resolve();

  return {
    fetch,
    metrics: null,
    started: { libraries: each(({ target, dialect }) => ({ sip2: `${target.host}:${target.port}`, dialect })) },
    demo: null,
    sip2Stats: () => each(({ pool }) => pool.stats()),
    markShuttingDown: () => {
      stopping = true;
      for (const { parts } of all()) parts.markShuttingDown();
    },
    async close(deadline, closeLog) {
      // Each library's own order (records, pool, store); the libraries side by side, so that one slow pool does not hold up the others' closing.
      await Promise.all(all().map((library) => closeOf(library, deadline, closeLog.child({ library: library.id }))));
    },
    destroy() {
      for (const { parts } of all()) parts.destroy();
    },
    reload(change) {
      const run = reloading.then(() => (stopping ? undefined : apply(change)));
      reloading = run.catch(() => {});
      return run;
    },
  };
}

/** The library's app answers; its count of calls in flight covers the call. */
async function counted(library: Running, request: Request, env: unknown): Promise<Response> {
  library.inFlight += 1;
  try {
    return await library.parts.app.fetch(request, env);
  } finally {
    library.inFlight -= 1;
    if (library.inFlight === 0) library.idle?.();
  }
}

/** Resolves when the library has no call in flight, or after `timeoutMs`. */
function untilIdle(library: Running, timeoutMs: number): Promise<void> {
  if (library.inFlight === 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    library.idle = () => {
      clearTimeout(timer);
      library.idle = null;
      resolve();
    };
  });
}

function closeOf(library: Running, deadline: number, log: Logger): Promise<void> {
  library.closing ??= library.parts.close(deadline, log);
  return library.closing;
}
