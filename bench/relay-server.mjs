/**
 * B1's layers: the gateway's SIP2 path without its HTTP layer, to show what
 * each layer adds to the CPU per request. Plain JavaScript over the compiled
 * gateway (dist/, as the bench runs it; `npm run bench` builds first), so
 * that no TypeScript loader adds to the figures.
 *
 *   PAIA_SIP2_PORT=... (and the rest of gatewayEnv) node bench/relay-server.mjs conn|pool|backend
 *
 * GET /core/:id answers one 63 for patron :id as JSON, through
 * - conn: sip2.pool.max Sip2Connections (93 + 99 as the pool opens them),
 *   handed out by a plain array: the floor of any HTTP-to-SIP2 relay on
 *   Hono and this codec;
 * - pool: the gateway's Sip2Pool (sip2.pool, min = max in B1);
 * - backend: the gateway's Sip2Backend.patron() over that pool, with a
 *   Cancellation per call as the deadline middleware gives one.
 * Configured by the environment the bench gives its gateways (gatewayEnv),
 * so the SIP2 side is the gateway's own. Prints `relay listening on
 * http://127.0.0.1:PORT`.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pino from 'pino';
import { Cancellation } from '../dist/src/cancel-signal.js';
import { loadConfigWithWarnings } from '../dist/src/config/index.js';
import { sip2Setup } from '../dist/src/gateway/index.js';
import { Sip2Connection } from '../dist/src/sip2/connection.js';

const mode = process.argv[2];
if (!['conn', 'pool', 'backend'].includes(mode)) {
  process.stderr.write('usage: node bench/relay-server.mjs conn|pool|backend\n');
  process.exit(2);
}

// The bench gateway's environment (bench/processes.ts gatewayEnv): the simulator, its terminal account, the pool.
const { config } = loadConfigWithWarnings({ env: process.env });
const setup = sip2Setup(config);
const target = setup.target;
const app = new Hono();

if (mode === 'conn') {
  const free = [];
  for (let id = 1; id <= config.sip2.pool.max; id++)
    free.push(await Sip2Connection.open({ ...setup.session(target), id }));
  const waiting = [];
  app.get('/core/:id', async (c) => {
    const connection = free.pop() ?? (await new Promise((resolve) => waiting.push(resolve)));
    try {
      const answer = await connection.send(setup.messages.patronInformation(c.req.param('id')));
      return c.json({ name: answer.personalName, status: answer.patronStatus });
    } finally {
      const next = waiting.shift();
      if (next) next(connection);
      else free.push(connection);
    }
  });
} else {
  const logger = pino({ level: 'warn' });
  const pool = setup.pool(target, { logger });
  await pool.start();
  if (mode === 'pool') {
    app.get('/core/:id', async (c) => {
      const answer = await pool.send(setup.messages.patronInformation(c.req.param('id')));
      return c.json({ name: answer.personalName, status: answer.patronStatus });
    });
  } else {
    const backend = setup.backend(pool, { logger, itemCache: null });
    app.get('/core/:id', async (c) => {
      const call = new Cancellation();
      try {
        return c.json(await backend.patron(c.req.param('id'), { signal: call }));
      } finally {
        call.abort('call-over');
      }
    });
  }
}

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`relay listening on http://127.0.0.1:${info.port}\n`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => process.exit(0));
