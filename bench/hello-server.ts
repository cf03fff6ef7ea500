/**
 * Beside B1's result, for information: a bare Hono hello-world on @hono/node-server (the
 * same HTTP stack as the gateway), nothing else. `GET /` -> {"hello":"world"}.
 * Prints `hello listening on http://127.0.0.1:PORT`; exits on SIGTERM/SIGINT.
 */
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const app = new Hono();
app.get('/', (c) => c.json({ hello: 'world' }));

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, (info) => {
  process.stdout.write(`hello listening on http://127.0.0.1:${info.port}\n`);
});

const stop = () => {
  server.close(() => process.exit(0));
  setTimeout(() => process.exit(0), 2000).unref();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
