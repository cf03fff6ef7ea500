/**
 * B1's HTTP layer alone: the compiled gateway exactly as `serve` runs it
 * (routing, auth, rate limit, access log, metrics, deadline, the response),
 * except that Sip2Backend.patron() answers at once with a record of the
 * usual size instead of asking the ILS. Its CPU per request, less the
 * hello-world's, is what the HTTP layer costs without any SIP2 under it.
 *
 *   PAIA_SIP2_PORT=... (and the rest of gatewayEnv) node bench/http-layer-server.mjs
 *
 * The gateway still starts its pool against the simulator (logins need it);
 * it prints the gateway's own `paia-sip2 listening on ...` banner.
 */
import { Sip2Backend } from '../dist/src/backend/sip2-backend.js';

Sip2Backend.prototype.patron = async (barcode) => ({
  name: `Patron ${barcode}`,
  email: `patron-${barcode}@example.org`,
  expires: '2030-12-31',
  status: 0,
});
process.argv = [process.argv[0], process.argv[1], 'serve'];
await import('../dist/src/cli/main.js');
