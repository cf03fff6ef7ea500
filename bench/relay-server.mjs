/**
 * B1's layers: the gateway's SIP2 path without its HTTP layer, to show what
 * each layer adds to the CPU per request. Plain JavaScript over the compiled
 * gateway (dist/, as the bench runs it; `npm run bench` builds first), so
 * that no TypeScript loader adds to the figures.
 *
 *   PAIA_SIP2_PORT=... (and the rest of gatewayEnv) node bench/relay-server.mjs raw|conn|pool|backend
 *
 * GET /core/:id answers one 63 for patron :id as JSON, through
 * - raw: sip2.pool.max plain sockets, each logged in with one 93, handed out
 *   by a plain array; the 63 is encoded by the codec, and of the 64 only the
 *   name is read (a regular expression), nothing decoded: the floor of any
 *   HTTP-to-SIP2 relay on Hono, whatever its SIP2 code;
 * - conn: the same over Sip2Connections (93 + 99 as the pool opens them):
 *   what the gateway's connection and codec add to that floor;
 * - pool: the gateway's Sip2Pool (sip2.pool, min = max in B1);
 * - backend: the gateway's Sip2Backend.patron() over that pool, with a
 *   Cancellation per call as the deadline middleware gives one.
 * Configured by the environment the bench gives its gateways (gatewayEnv),
 * so the SIP2 side is the gateway's own. Prints `relay listening on
 * http://127.0.0.1:PORT`.
 */
import net from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pino from 'pino';
import { Cancellation } from '../dist/src/cancel-signal.js';
import { loadConfigWithWarnings } from '../dist/src/config/index.js';
import { sip2Setup } from '../dist/src/gateway/index.js';
import { encodeMessage } from '../dist/src/sip2/codec.js';
import { Sip2Connection } from '../dist/src/sip2/connection.js';

const mode = process.argv[2];
if (!['raw', 'conn', 'pool', 'backend'].includes(mode)) {
  process.stderr.write('usage: node bench/relay-server.mjs raw|conn|pool|backend\n');
  process.exit(2);
}

// The bench gateway's environment (bench/processes.ts gatewayEnv): the simulator, its terminal account, the pool.
const { config } = loadConfigWithWarnings({ env: process.env });
const setup = sip2Setup(config);
const target = setup.target;
const app = new Hono();

/** Up to `slots.length` calls at once, each with a slot of its own; the others wait in arrival order. */
function slotted(slots) {
  const waiting = [];
  return async (call) => {
    const slot = slots.pop() ?? (await new Promise((resolve) => waiting.push(resolve)));
    try {
      return await call(slot);
    } finally {
      const next = waiting.shift();
      if (next) next(slot);
      else slots.push(slot);
    }
  };
}

/** A logged-in plain SIP2 socket: `ask(bytes)` writes a message and resolves with the next answer's text. */
async function rawSession() {
  const session = setup.session(target);
  const wire = { charset: session.charset, errorDetection: session.errorDetection, terminator: session.terminator };
  const socket = net.connect({ host: session.host, port: session.port });
  socket.setNoDelay(true);
  socket.setEncoding('latin1');
  // A bench process: a lost simulator ends it, loudly, rather than leaving calls waiting.
  socket.on('error', (error) => {
    process.stderr.write(`relay raw: SIP2 socket failed: ${error.message}\n`);
    process.exit(1);
  });
  socket.on('close', () => process.exit(1));
  let buffered = '';
  let answer = null;
  socket.on('data', (text) => {
    buffered += text;
    const end = buffered.indexOf('\r');
    if (end < 0) return;
    const frame = buffered.slice(0, end);
    buffered = buffered.slice(end + session.terminator.length);
    const settle = answer;
    answer = null;
    settle?.(frame);
  });
  // AY counts 0-9 as every SIP2 client's does: a request repeating the last one's AY and checksum is a
  // retransmission, which the ACS answers with its last response without executing it again.
  let sequence = 0;
  const ask = (message) =>
    new Promise((resolve) => {
      answer = resolve;
      socket.write(encodeMessage(message, { ...wire, sequence }));
      sequence = (sequence + 1) % 10;
    });
  const login = {
    code: '93',
    uidAlgorithm: '0',
    pwdAlgorithm: '0',
    loginUserId: session.loginUserId,
    loginPassword: session.loginPassword,
    locationCode: session.locationCode,
  };
  if (!(await ask(login)).startsWith('941')) throw new Error('the simulator refused the 93 login');
  return { ask };
}

if (mode === 'raw') {
  const sessions = [];
  for (let id = 1; id <= config.sip2.pool.max; id++) sessions.push(await rawSession());
  const withSession = slotted(sessions);
  app.get('/core/:id', (c) =>
    withSession(async ({ ask }) => {
      const answer = await ask(setup.messages.patronInformation(c.req.param('id')));
      return c.json({ name: /\|AE([^|]*)/.exec(answer)?.[1] ?? '', status: answer.slice(2, 16) });
    }),
  );
} else if (mode === 'conn') {
  const connections = [];
  for (let id = 1; id <= config.sip2.pool.max; id++)
    connections.push(await Sip2Connection.open({ ...setup.session(target), id }));
  const withConnection = slotted(connections);
  app.get('/core/:id', (c) =>
    withConnection(async (connection) => {
      const answer = await connection.send(setup.messages.patronInformation(c.req.param('id')));
      return c.json({ name: answer.personalName, status: answer.patronStatus });
    }),
  );
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
