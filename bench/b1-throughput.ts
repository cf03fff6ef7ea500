import { httpLoop, httpPool, type LoopResult } from './driver.js';
import { login } from './paia.js';
import { cpuSecondsOf, gatewayEnv, startGateway, startHello, startSimulator } from './processes.js';
import { counts, metOf, ms, perSecond, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B1: req/s of GET /core/alice through the gateway (simulator at 0 ms, pool
 * 4) divided by req/s of a bare Hono hello-world, same closed-loop driver
 * settings. The hello server runs alone first, then simulator + gateway, so
 * the two never compete for the CPU. CPU seconds each process used in the
 * measured window are read from /proc to show where the time goes.
 */

const TARGET = 0.5;
const POOL = '4';

/** CPU seconds used by each process (pid) and by the bench process itself during the measured window. */
class WindowCpu {
  private start = new Map<string, number>();
  readonly used = new Map<string, number>();
  private driverStart = process.cpuUsage();
  constructor(private readonly pids: Record<string, number>) {}
  open = () => {
    for (const [name, pid] of Object.entries(this.pids)) this.start.set(name, cpuSecondsOf(pid));
    this.driverStart = process.cpuUsage();
  };
  close = () => {
    for (const [name, pid] of Object.entries(this.pids))
      this.used.set(name, cpuSecondsOf(pid) - (this.start.get(name) ?? 0));
    const driver = process.cpuUsage(this.driverStart);
    this.used.set('driver', (driver.user + driver.system) / 1e6);
  };
  describe(result: LoopResult): string {
    const parts = [...this.used].map(
      ([name, seconds]) =>
        `${name} ${(seconds / result.durationS).toFixed(2)} cores, ${((seconds * 1e6) / Math.max(1, result.completed)).toFixed(0)} µs/request`,
    );
    return `CPU in the window: ${parts.join('; ')}`;
  }
}

function describe(result: LoopResult): string {
  return `${perSecond(result.requestsPerSecond)} (p50 ${ms(result.p50)}, p99 ${ms(result.p99)}, ${result.completed} answers in ${result.durationS} s; statuses ${counts(result.outcomes)})`;
}

export async function runB1(settings: Settings): Promise<Row[]> {
  const loop = { connections: settings.b1Connections, warmupMs: settings.warmupMs, durationMs: settings.durationMs };

  const hello = await startHello();
  let reference: LoopResult;
  const helloCpu = new WindowCpu({ hello: hello.pid });
  try {
    reference = await httpLoop({
      origin: hello.url,
      path: '/',
      ...loop,
      onWindowStart: helloCpu.open,
      onWindowEnd: helloCpu.close,
    });
  } finally {
    await hello.stop();
  }

  const simulator = await startSimulator();
  let gatewayResult: LoopResult;
  let gatewayCpu: WindowCpu;
  try {
    const gateway = await startGateway(
      gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: POOL, PAIA_SIP2_POOL_MAX: POOL }),
    );
    try {
      const http = httpPool(gateway.url, 1);
      const token = await login(http, 'alice', 'alice-pass');
      await http.close();
      gatewayCpu = new WindowCpu({ gateway: gateway.pid, simulator: simulator.pid });
      gatewayResult = await httpLoop({
        origin: gateway.url,
        path: '/core/alice',
        headers: { authorization: `Bearer ${token}` },
        ...loop,
        onWindowStart: gatewayCpu.open,
        onWindowEnd: gatewayCpu.close,
      });
    } finally {
      await gateway.stop();
    }
  } finally {
    await simulator.stop();
  }

  const ratio = gatewayResult.requestsPerSecond / reference.requestsPerSecond;
  const valid = gatewayResult.failures === 0 && reference.failures === 0 && gatewayResult.completed > 0;
  const notes = [
    `gateway GET /core/alice: ${describe(gatewayResult)}; ${gatewayCpu.describe(gatewayResult)}`,
    `hello-world GET /: ${describe(reference)}; ${helloCpu.describe(reference)}`,
    `driver: ${settings.b1Connections} connections, ${settings.warmupMs / 1000} s warm-up + ${settings.durationMs / 1000} s; gateway pool min=max=${POOL}, simulator 0 ms`,
  ];
  if (!valid) {
    notes.push(
      `INVALID: ${gatewayResult.failures} non-200 gateway answers, ${reference.failures} non-200 hello answers (statuses above)`,
    );
  }
  return [
    {
      id: 'B1',
      what: 'throughput GET /core/alice ÷ hello-world',
      result: `${ratio.toFixed(2)} (${perSecond(gatewayResult.requestsPerSecond)} ÷ ${perSecond(reference.requestsPerSecond)})`,
      target: `>= ${TARGET}`,
      met: metOf(ratio >= TARGET, valid),
      notes,
    },
  ];
}
