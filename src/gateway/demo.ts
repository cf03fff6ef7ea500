import type { Config } from '../config/index.js';
import type { Logger } from '../log.js';

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

/** Starts the embedded simulator as demo.* says; null when a real ILS is configured. */
export function demoStarter(config: Config): ((logger: Logger) => Promise<EmbeddedSimulator>) | null {
  if (config.sip2.host !== null) return null;
  return async (logger) => {
    const { startSimulator } = await import('../../sip2-simulator/src/server.js');
    const simulator = await startSimulator({
      host: '127.0.0.1',
      port: config.demo.sip2Port,
      dialect: config.demo.dialect,
      charset: config.demo.charset,
      errorDetection: config.sip2.errorDetection,
      logger,
    });
    return { target: { host: simulator.host, port: simulator.port }, stop: () => simulator.stop() };
  };
}
