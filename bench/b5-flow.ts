import { closedLoop, httpPool, type TaskOutcome } from './driver.js';
import { call, login, logout } from './paia.js';
import { gatewayEnv, startGateway, startSimulator } from './processes.js';
import { counts, ms, perSecond, type Row } from './report.js';
import type { Settings } from './settings.js';

/**
 * B5: a realistic session mix. V virtual patrons at once, each looping
 * login -> GET patron -> GET items -> GET fees -> logout, simulator at 0 ms,
 * over the demo patrons that can log in (found by trying each once). No
 * target: HTTP requests/s and flows/s in the measured window, and errors.
 */

const DEMO_PATRONS = ['alice', 'bob', 'carol', 'dave', 'emile', 'frank', 'gina'];
const POOL = '4';

export async function runB5(settings: Settings): Promise<Row[]> {
  const simulator = await startSimulator();
  try {
    const gateway = await startGateway(
      gatewayEnv(simulator.port, { PAIA_SIP2_POOL_MIN: POOL, PAIA_SIP2_POOL_MAX: POOL }),
    );
    const http = httpPool(gateway.url, settings.b5Virtual);
    try {
      const usable: string[] = [];
      for (const patron of DEMO_PATRONS) {
        try {
          const token = await login(http, patron, `${patron}-pass`);
          usable.push(patron);
          await logout(http, token, patron);
        } catch {
          // cannot log in: not used
        }
      }
      if (usable.length === 0) throw new Error('B5: no demo patron can log in');

      const flow = async (worker: number): Promise<TaskOutcome> => {
        const patron = usable[worker % usable.length]!;
        let requests = 0;
        const fail = (step: string, status: number | string): TaskOutcome => ({
          ok: false,
          label: `${step} ${status}`,
          requests,
        });
        const loginAnswer = await call(http, 'POST', '/auth/login', {
          json: { username: patron, password: `${patron}-pass`, grant_type: 'password' },
        });
        requests++;
        if (loginAnswer.status !== 200) return fail('login', loginAnswer.status);
        const token = (JSON.parse(loginAnswer.text) as { access_token: string }).access_token;
        for (const path of [`/core/${patron}`, `/core/${patron}/items`, `/core/${patron}/fees`]) {
          const answer = await call(http, 'GET', path, { token });
          requests++;
          if (answer.status !== 200) return fail(`GET ${path.replace(patron, ':patron')}`, answer.status);
        }
        const status = await logout(http, token, patron);
        requests++;
        if (status !== 200) return fail('logout', status);
        return { ok: true, label: 'ok', requests };
      };

      const result = await closedLoop({
        concurrency: settings.b5Virtual,
        warmupMs: settings.warmupMs,
        durationMs: settings.durationMs,
        task: flow,
      });
      const notes = [
        `${settings.b5Virtual} virtual patrons over ${usable.join(', ')} (each worker keeps one patron); flow p50 ${ms(result.p50)}, p99 ${ms(result.p99)}; ${result.completed} flows / ${result.requests} requests in ${result.durationS} s after ${settings.warmupMs / 1000} s warm-up; pool min=max=${POOL}, simulator 0 ms`,
        `flow outcomes (warm-up included): ${counts(result.outcomes)}; errors: ${result.failures}`,
      ];
      if (result.failures > 0) notes.push(`INVALID: ${result.failures} flows failed`);
      return [
        {
          id: 'B5',
          what: `flow login→patron→items→fees→logout, ${settings.b5Virtual} virtual patrons`,
          result: `${perSecond(result.requestsPerSecond)} HTTP requests, ${perSecond(result.tasksPerSecond)} flows, ${result.failures} errors`,
          target: 'none (just the number)',
          met: result.failures > 0 ? 'INVALID' : 'n/a',
          notes,
        },
      ];
    } finally {
      await http.close();
      await gateway.stop();
    }
  } finally {
    await simulator.stop();
  }
}
