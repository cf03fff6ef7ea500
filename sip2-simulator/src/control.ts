import type { Server } from 'node:http';
import { createAdaptorServer } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { Dialect } from '../../src/sip2/index.js';
import type { ConformanceTally } from './conformance/tally.js';
import { loopbackOnly } from './control-guard.js';
import type { Counters } from './counters.js';
import type { FaultPatch, FaultState, Faults } from './faults.js';
import { parseFaultPatch } from './faults.js';
import type { Library } from './library.js';
import { servePage } from './page.js';
import type { Profile } from './profiles.js';
import { describeProfile, ProfileError, parseProfile } from './profiles.js';
import type { SessionConfig } from './session.js';
import type { TrafficRecorder } from './traffic.js';

/**
 * The control endpoint: HTTP+JSON on 127.0.0.1, used by tests and testers
 * while the simulator runs. Requests must name a loopback host, and changes
 * sent by a browser must come from a loopback origin (control-guard.ts).
 *
 *   GET    /state       {dialect, charset, errorDetection, strictChecksums, connections, waiting, profile, faults, counters}
 *   GET    /profile     {profile: "workers=1,...", workers, idleTimeoutS, fines, bv, bh, pad, scStatusFirst, ids, counts, unavailableHolds, bx}
 *   PUT    /profile     {"profile": "koha,workers=2"} replaces the profile ("" or "none" = no profile); 400 on bad terms
 *   GET    /counters    {received: {"63": 4, ...}, executed: {...}}
 *   PUT    /faults      partial fault JSON, merged; 400 on bad input; answers the faults
 *   DELETE /faults      clears every fault; answers the faults
 *   POST   /reset       reloads the data file, clears counters and faults
 *   POST   /disconnect  destroys every open client connection
 *   GET    /conformance {strict, totals, connections}: each client message's deviations from the 3M text
 *   PUT    /conformance {"strict": true}: answer 96 to a non-conforming message (false: answer it, as by default)
 *   POST   /conformance/reset (or DELETE /conformance) clears the report
 *   POST   /desk/holds  {"patron": "alice", "item": "it-0030"} (or "title"): a hold placed at the circulation
 *                       desk, not over SIP2 (201 {hold, queuePosition}; 409 {error} when the library refuses it)
 *   POST   /desk/block  {"patron": "alice", "reason": "..."}: the card blocked as by a 01 (404 for an unknown patron)
 *   POST   /desk/enable {"patron": "alice"}: the block lifted as by a 25 ({blocked: false, wasBlocked})
 *   GET    /traffic     {connections: [{id, remote, openedAt, closedAt, user, dropped, messages: [...]}]}
 *   GET    /            the traffic page (page.ts), with its script and style sheet
 */

/** What the control endpoint reads and changes of a running simulator (server.ts's ControlledSimulator is one). */
export interface ControlledSimulator {
  readonly host: string;
  readonly port: number;
  readonly faults: Faults;
  readonly counters: Counters;
  /** Deviations of the clients' messages from the 3M text. */
  readonly conformance: Pick<ConformanceTally, 'snapshot' | 'reset'>;
  readonly dialect: Dialect;
  readonly config: SessionConfig;
  /** The library's data; the desk routes change it as staff would, without SIP2. */
  readonly library: Pick<Library, 'placeHold' | 'block' | 'enable'>;
  /** Every connection's last messages, for GET /traffic and the page. */
  readonly traffic: Pick<TrafficRecorder, 'snapshot'>;
  /** Open client connections being served. */
  connectionCount(): number;
  /** Connections accepted but waiting for a worker (workers profile). */
  waitingCount(): number;
  /** The active profile. */
  profile(): Readonly<Profile>;
  /** Switches the profile; a lower worker limit takes effect as sessions end, a higher one at once. */
  setProfile(profile: Profile): Readonly<Profile>;
  /** Merges a fault update; resolves once refuseConnections has taken effect. */
  setFaults(patch: FaultPatch): Promise<Readonly<FaultState>>;
  clearFaults(): Promise<Readonly<FaultState>>;
  /** Reloads the data file, clears counters and faults. */
  reset(): Promise<void>;
  /** Strict conformance on or off (SessionConfig.strictConformance). */
  setStrictConformance(on: boolean): void;
  /** Destroys every open client connection; returns how many. */
  disconnectAll(): number;
}

export interface ControlServer {
  readonly port: number;
  close(): Promise<void>;
}

function controlApp(sim: ControlledSimulator, logger: Logger): Hono {
  const app = new Hono();
  app.use(loopbackOnly());

  app.get('/state', (c) =>
    c.json({
      dialect: sim.dialect.name,
      charset: sim.config.charset,
      errorDetection: sim.config.errorDetection,
      strictChecksums: sim.config.strictChecksums,
      idleTimeoutS: sim.config.idleTimeoutMs / 1000,
      host: sim.host,
      port: sim.port,
      connections: sim.connectionCount(),
      waiting: sim.waitingCount(),
      profile: profileState(sim),
      faults: sim.faults.state,
      counters: sim.counters.snapshot(),
    }),
  );

  app.get('/counters', (c) => c.json(sim.counters.snapshot()));

  app.get('/profile', (c) => c.json(profileState(sim)));

  app.put('/profile', async (c) => {
    const usage = 'the body must be a JSON object {"profile": "koha,workers=2"} ("" or "none" = no profile)';
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: usage }, 400);
    }
    const spec = (body as { profile?: unknown } | null)?.profile;
    if (
      body === null ||
      typeof body !== 'object' ||
      Array.isArray(body) ||
      typeof spec !== 'string' ||
      Object.keys(body).length !== 1
    ) {
      return c.json({ error: usage }, 400);
    }
    try {
      sim.setProfile(parseProfile([spec]));
    } catch (error) {
      if (!(error instanceof ProfileError)) throw error;
      return c.json({ error: error.message }, 400);
    }
    return c.json(profileState(sim));
  });

  app.put('/faults', async (c) => {
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: 'the body must be a JSON object of faults, e.g. {"latencyMs": 200}' }, 400);
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      return c.json({ error: 'the body must be a JSON object of faults, e.g. {"latencyMs": 200}' }, 400);
    }
    let patch;
    try {
      patch = parseFaultPatch(body);
    } catch (error) {
      return c.json({ error: (error as Error).message }, 400);
    }
    return c.json(await sim.setFaults(patch));
  });

  app.delete('/faults', async (c) => c.json(await sim.clearFaults()));

  app.post('/reset', async (c) => {
    try {
      await sim.reset();
    } catch (error) {
      logger.error({ err: (error as Error).message }, 'reset failed');
      return c.json({ error: (error as Error).message }, 500);
    }
    return c.json({ reset: true });
  });

  const conformanceState = () => ({ strict: sim.config.strictConformance === true, ...sim.conformance.snapshot() });
  app.get('/conformance', (c) => c.json(conformanceState()));
  app.put('/conformance', async (c) => {
    const usage = 'the body must be a JSON object {"strict": true} or {"strict": false}';
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: usage }, 400);
    }
    const strict = (body as { strict?: unknown } | null)?.strict;
    if (typeof strict !== 'boolean' || Object.keys(body as object).length !== 1) return c.json({ error: usage }, 400);
    sim.setStrictConformance(strict);
    return c.json(conformanceState());
  });
  const clearConformance = (c: Context) => {
    sim.conformance.reset();
    return c.json(conformanceState());
  };
  app.post('/conformance/reset', clearConformance);
  app.delete('/conformance', clearConformance);

  app.post('/disconnect', (c) => c.json({ disconnected: sim.disconnectAll() }));

  // What staff do at the circulation desk, behind the back of every SIP2 client (a discovery system's cache).
  app.post('/desk/holds', async (c) => {
    const usage =
      'the body must be a JSON object {"patron": "alice", "item": "it-0030"} or {"patron": ..., "title": ...}';
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      return c.json({ error: usage }, 400);
    }
    const { patron, item, title } = (body ?? {}) as Record<string, unknown>;
    const text = (value: unknown) => value === undefined || (typeof value === 'string' && value !== '');
    if (
      typeof patron !== 'string' ||
      patron === '' ||
      !text(item) ||
      !text(title) ||
      (item === undefined) === (title === undefined)
    ) {
      return c.json({ error: usage }, 400);
    }
    const result = sim.library.placeHold(patron, {
      item: item as string | undefined,
      title: title as string | undefined,
    });
    if (!result.ok) return c.json({ error: result.reason }, 409);
    logger.info({ hold: result.hold.id }, 'hold placed at the desk');
    return c.json({ hold: result.hold.id, queuePosition: result.queuePosition }, 201);
  });

  app.get('/traffic', (c) => c.json(sim.traffic.snapshot()));

  // The switch of the traffic page that a library's staff pull at the desk: a card blocked or enabled, without SIP2.
  app.post('/desk/block', async (c) => {
    const body = await objectBody(c.req.raw, ['patron', 'reason']);
    const { patron, reason = '' } = body ?? {};
    if (typeof patron !== 'string' || patron === '' || typeof reason !== 'string')
      return c.json(
        { error: 'the body must be a JSON object {"patron": "alice", "reason": "..."} (reason optional)' },
        400,
      );
    if (!sim.library.block(patron, reason)) return c.json({ error: 'no such patron' }, 404);
    logger.info('card blocked at the desk');
    return c.json({ blocked: true });
  });
  app.post('/desk/enable', async (c) => {
    const patron = (await objectBody(c.req.raw, ['patron']))?.patron;
    if (typeof patron !== 'string' || patron === '')
      return c.json({ error: 'the body must be a JSON object {"patron": "alice"}' }, 400);
    const wasBlocked = sim.library.enable(patron);
    logger.info('card enabled at the desk');
    return c.json({ blocked: false, wasBlocked });
  });

  servePage(app);

  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${new URL(c.req.url).pathname}` }, 404));
  app.onError((error, c) => {
    logger.error({ err: error }, 'control endpoint error');
    return c.json({ error: error.message }, 500);
  });
  return app;
}

/** A JSON object body with no keys but `allowed`; null for anything else. */
async function objectBody(request: Request, allowed: readonly string[]): Promise<Record<string, unknown> | null> {
  let body: unknown;
  try {
    body = JSON.parse(await request.text());
  } catch {
    return null;
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  return Object.keys(body).every((key) => allowed.includes(key)) ? (body as Record<string, unknown>) : null;
}

/** The active profile: its terms, and every knob with the value in force (idleTimeoutS resolved). */
function profileState(sim: ControlledSimulator) {
  const profile = sim.profile();
  return { ...profile, profile: describeProfile(profile), idleTimeoutS: sim.config.idleTimeoutMs / 1000 };
}

export async function startControlServer(
  sim: ControlledSimulator,
  options: { host: string; port: number; logger: Logger },
): Promise<ControlServer> {
  if (options.host !== '127.0.0.1')
    throw new Error(`the control endpoint binds to 127.0.0.1 only (asked for ${options.host})`);
  const app = controlApp(sim, options.logger);
  const server = createAdaptorServer({ fetch: app.fetch, overrideGlobalObjects: false }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: options.host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = address && typeof address === 'object' ? address.port : options.port;
  options.logger.info({ port }, 'control endpoint up');
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
