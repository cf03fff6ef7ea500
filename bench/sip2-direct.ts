import { type Config, loadConfigWithWarnings } from '../src/config/index.js';
import { sip2Setup } from '../src/gateway/index.js';
import { Sip2Connection } from '../src/sip2/connection.js';
import type { Dialect } from '../src/sip2/dialect.js';
import type { RequestMessage } from '../src/sip2/index.js';
import type { Sip2Messages } from '../src/sip2/messages.js';
import { simulatorIls } from '../test/helpers/simulator.js';
import { percentile, sequential, sortedOf } from './driver.js';

/**
 * A SIP2 session from the bench process straight to the simulator, built
 * exactly as the gateway builds its pool's connections and its requests
 * (the gateway's sip2Setup over the default configuration, generic dialect): same
 * terminal account, charset, error detection, timeouts and message builders.
 * Used by B3 (the SIP2 round trip alone) and by the naive items baseline of B2.
 */

export interface DirectSip2 {
  connection: Sip2Connection;
  requests: Sip2Messages;
  dialect: Dialect;
  /** sip2.pageSize ?? the dialect's page size, as the gateway uses it. */
  pageSize: number;
  close(): void;
}

/** The configuration the bench gateways run with, as far as SIP2 is concerned (defaults + generic dialect). */
function benchConfig(sip2Port: number): Config {
  const { config } = loadConfigWithWarnings({
    env: { ...simulatorIls(sip2Port), PAIA_SIP2_DIALECT: 'generic' },
  });
  return config;
}

/**
 * The unknown-setting warnings the gateway would print for these PAIA_*
 * variables (e.g. a cache setting this version of the gateway does not have
 * yet), from the gateway's own configuration loader.
 */
export function unknownSettings(env: Record<string, string | undefined>): string[] {
  const paia: Record<string, string> = {};
  for (const [name, value] of Object.entries(env))
    if (name.startsWith('PAIA_') && value !== undefined) paia[name] = value;
  const { warnings } = loadConfigWithWarnings({ env: paia });
  return warnings.filter((warning) => / is not a paia-sip2 setting/.test(warning));
}

/**
 * p50 of `samples` round trips of `message` over the direct session, one at a
 * time: what one SIP2 message really costs against this simulator on this
 * machine (its configured wait plus timers and scheduling), the unit of the
 * items floor (B2, B7).
 */
export async function roundTripP50(direct: DirectSip2, message: RequestMessage, samples = 20): Promise<number> {
  const trips = await sequential(samples, async () => {
    await direct.connection.send(message);
  });
  return percentile(sortedOf(trips), 50);
}

export async function openDirect(sip2Port: number): Promise<DirectSip2> {
  const setup = sip2Setup(benchConfig(sip2Port));
  const connection = await Sip2Connection.open({ ...setup.session({ host: '127.0.0.1', port: sip2Port }), id: 1 });
  return {
    connection,
    requests: setup.messages,
    dialect: setup.dialect,
    pageSize: setup.settings.pageSize,
    close: () => connection.close('bench done'),
  };
}
