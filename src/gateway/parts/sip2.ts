import { AccountWindow } from '../../backend/account-window.js';
import type { RecordSource } from '../../backend/daia/records/source.js';
import type { DaiaService } from '../../backend/daia/service.js';
import { ItemInfoCache } from '../../backend/item-cache.js';
import { SharedReads } from '../../backend/shared-reads.js';
import type { Backend } from '../../backend/types.js';
import type { Logger } from '../../log.js';
import type { GatewayMetrics } from '../../metrics/gateway.js';
import { AnomalyLog, type Sip2Pool } from '../../sip2/index.js';
import type { StateStore } from '../../state/index.js';
import { KeyedHash } from '../../state/keyed-hash.js';
import { type EmbeddedSimulator, startDemo } from '../demo.js';
import { explainOpen, openProblem } from '../ils-advice.js';
import { newBackend, newDaia, newPool } from './sip2-build.js';
import type { Sip2Options, Sip2Target } from './sip2-options.js';

/**
 * The gateway's SIP2 side: the ILS end (the embedded simulator in demo
 * mode, the started pool), then the PAIA and DAIA services over the pool
 * with the caches in front of them, wired to the other instances through
 * the state store.
 */

/** The ILS end of a running gateway: where its sessions go, the embedded simulator (demo mode), the started pool. */
export interface Ils {
  readonly target: Sip2Target;
  /** The simulator this gateway started; null with a real ILS or one shared by the primary. */
  readonly demo: EmbeddedSimulator | null;
  readonly pool: Sip2Pool;
}

/**
 * Starts the embedded simulator (demo mode, unless `sharedSimulator` is the
 * primary's) and the pool towards the ILS. A pool that cannot log in yet is
 * no failure at start: it keeps trying, and the log says why at once. With
 * `requireLogin` (a library put in by a reload, which has a running one to
 * keep instead) it is: the pool is dropped and the start fails with the why.
 * Either way the pool's first attempt decides (bounded by
 * sip2.timeouts.connectMs and responseMs); in a maintenance window, or with
 * pool.min 0, there is none, and nothing says the settings are wrong.
 */
export async function startIls(
  options: Sip2Options,
  parts: {
    logger: Logger;
    metrics: GatewayMetrics | null;
    sharedSimulator?: Sip2Target | null | undefined;
    requireLogin?: boolean | undefined;
  },
): Promise<Ils> {
  const { logger, metrics } = parts;
  const shared = options.demo ? (parts.sharedSimulator ?? null) : null;
  const demo =
    options.demo && shared === null ? await startDemo(options.demo, logger.child({ component: 'simulator' })) : null;
  const target = shared ?? demo?.target ?? options.target;
  if (target === null) throw new Error('no SIP2 target: neither sip2.host nor the embedded simulator');

  const sip2Logger = logger.child({ component: 'sip2' });
  const anomalies = new AnomalyLog({ logger: sip2Logger, onAnomaly: metrics?.sip2.anomaly });
  const pool = newPool(options, target, { logger: sip2Logger, anomalies, onRoundTrip: metrics?.sip2.roundTrip });
  try {
    await pool.start();
  } catch (error) {
    await demo?.stop();
    throw error;
  }
  // The pool keeps retrying in the background; a sysadmin starting the gateway must see at once why it cannot serve.
  if (!pool.hasReadyConnection && pool.openFailure !== null) {
    const { settings, dialect } = options;
    const advice = explainOpen(pool.openFailure, { settings, dialect, tls: settings.tls, target }, new Set());
    if (parts.requireLogin) {
      pool.destroy();
      await demo?.stop();
      throw new Error(`cannot log in to the ILS at ${target.host}:${target.port}: ${advice}`);
    }
    sip2Logger.error(
      { ils: `${target.host}:${target.port}`, problem: openProblem(pool.openFailure, target) },
      `cannot log in to the ILS at start: ${advice}. The gateway keeps trying; until it succeeds /readyz answers 503 and calls get 503 or 502. \`paia-sip2 doctor\` checks the connection step by step`,
    );
  }
  return { target, demo, pool };
}

/** The PAIA and DAIA services over the pool, and the caches in front of them. */
export interface Sip2Services {
  /** PAIA: the account window in front of the backend when cache.accounts is on, else the backend. */
  readonly backend: Backend;
  readonly daia: DaiaService;
  readonly itemCache: ItemInfoCache | null;
  readonly accountWindow: AccountWindow | null;
}

/**
 * The services over a started pool. Writes on this instance are published
 * through the state store so other instances drop what they hold, and theirs
 * reach this one the same way.
 */
export function sip2Services(
  options: Sip2Options,
  pool: Sip2Pool,
  parts: {
    store: Pick<StateStore, 'publishInvalidation' | 'onInvalidation'>;
    records: RecordSource | null;
    logger: Logger;
  },
): Sip2Services {
  const { store, logger } = parts;
  // The backend and DAIA over one pool share identical reads in flight (one 17 for an item both ask about).
  const sharedReads = new SharedReads();
  // A renew, request or cancel on this instance drops the item on every other one too.
  const itemCache =
    options.itemCache &&
    new ItemInfoCache({
      ...options.itemCache,
      onInvalidate: (item, outcomeUnknown) => {
        store.publishInvalidation({ item, outcomeUnknown }).catch((error: unknown) => {
          logger.warn({ item, error: (error as Error).message }, 'could not tell other instances to drop an item');
        });
      },
    });
  const sip2Backend = newBackend(options, pool, {
    sharedReads,
    itemCache,
    logger: logger.child({ component: 'backend' }),
  });
  const accountWindow = options.accountWindow && newAccountWindow(options.accountWindow, sip2Backend, store, logger);
  store.onInvalidation((invalidation) => {
    const { outcomeUnknown } = invalidation;
    if (invalidation.item !== undefined) {
      sharedReads.forget({ item: invalidation.item });
      itemCache?.invalidate(invalidation.item, { outcomeUnknown, fromPeer: true });
    } else {
      sharedReads.forget({ anyPatron: true });
      accountWindow?.forget(invalidation.patron, { outcomeUnknown });
    }
  });
  // Anonymous DAIA: its share of the pool is the DAIA service's; its ids per address are counted in the store (app.ts).
  // A record counts as one id there; its copies are bounded by daia.records.maxItemsPerRecord and go through the share.
  const daia = newDaia(options, pool, { sharedReads, itemCache, records: parts.records });
  return { backend: accountWindow ?? sip2Backend, daia, itemCache, accountWindow };
}

/** The account window of cache.accounts in front of `backend`; a write tells other instances of each patron (by digest) whose reads it dropped. */
function newAccountWindow(
  settings: NonNullable<Sip2Options['accountWindow']>,
  backend: Backend,
  store: Pick<StateStore, 'publishInvalidation'>,
  logger: Logger,
): AccountWindow {
  // The same patron has the same key on every instance, and the barcode never reaches the store's channel.
  const keys = new KeyedHash(settings.keySecret);
  return new AccountWindow({
    backend,
    windowMs: settings.windowMs,
    maxPatrons: settings.maxPatrons,
    keyOf: (barcode) => keys.digest(`account-window:${barcode}`).toString('base64url'),
    onWrite: (patron, outcomeUnknown) =>
      store.publishInvalidation({ patron, outcomeUnknown }).catch((error: unknown) => {
        // The write happened; other instances show it once their window has passed.
        logger.warn(
          { error: (error as Error).message },
          "could not tell other instances to drop a patron's account reads",
        );
      }),
  });
}
