import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';
import type { Charset } from '../sip2/index.js';

/**
 * Demo mode: with no sip2.host configured, the bundled SIP2 simulator runs
 * inside the gateway with the demo library, so `npm start` works on a fresh
 * clone. Imported lazily: a gateway in front of a real ILS never loads it.
 */

export interface EmbeddedSimulator {
  /** Where its SIP2 listener is (127.0.0.1). */
  readonly target: { host: string; port: number };
  stop(): Promise<void>;
}

/** The embedded simulator as demo.* says (and sip2.errorDetection, which both ends must agree on). */
export interface DemoOptions {
  /** demo.sip2Port; 0 picks a free one. */
  port: number;
  dialect: string;
  charset: Charset;
  errorDetection: boolean;
}

/** Demo mode's options; null when a real ILS is configured (sip2.host). */
export function demoOptions(config: Config): DemoOptions | null {
  if (config.sip2.host !== null) return null;
  const { demo } = config;
  return {
    port: demo.sip2Port,
    dialect: demo.dialect,
    charset: demo.charset,
    errorDetection: config.sip2.errorDetection,
  };
}

/** Starts the embedded simulator on 127.0.0.1. */
export async function startDemo(options: DemoOptions, logger: Logger): Promise<EmbeddedSimulator> {
  const { startSimulator } = await import('../../sip2-simulator/src/server.js');
  const simulator = await startSimulator({
    host: '127.0.0.1',
    port: options.port,
    dialect: options.dialect,
    charset: options.charset,
    errorDetection: options.errorDetection,
    logger,
  });
  return { target: { host: simulator.host, port: simulator.port }, stop: () => simulator.stop() };
}
