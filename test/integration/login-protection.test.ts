/**
 * The login protection against the attack patterns a red-team run measured
 * (issue 14), with the real gateway, the simulator and, for the redis store,
 * a real redis-server: each scenario asserts that the outcome measured then
 * is gone, once with the memory store and once with the redis store.
 *
 * The simulator matches patron identifiers case- and accent-insensitively
 * (profile ids=folded), as Koha does on MySQL's default collations: that is
 * what made username variants a lockout bypass.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type RedisServer, startRedisServer } from '../helpers/redis.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

interface Answer {
  status: number;
  retryAfter: string | null;
  ms: number;
}

/** One login from `address` (the gateway trusts X-Forwarded-For as a proxy would set it); the client gives up after `timeoutMs`. */
async function login(
  gateway: GatewayProcess,
  username: string,
  password: string,
  address: string,
  timeoutMs = 20_000,
): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${gateway.url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Forwarded-For': address, 'X-Forwarded-Proto': 'https' },
    body: JSON.stringify({ username, password, grant_type: 'password' }),
    signal: AbortSignal.timeout(timeoutMs),
  });
  await response.arrayBuffer();
  return { status: response.status, retryAfter: response.headers.get('retry-after'), ms: performance.now() - started };
}

/** 128 spellings of "alice" an ILS matching case- and accent-insensitively takes for her. */
function variantsOfAlice(): string[] {
  const letters = [
    ['a', 'A', 'ä', 'Ä', 'á', 'Ａ'],
    ['l', 'L'],
    ['i', 'I', 'í', 'Í'],
    ['c', 'C', 'ç'],
    ['e', 'E', 'é', 'É'],
  ];
  const variants: string[] = [];
  for (let i = 0; variants.length < 128; i++) {
    let n = i;
    let word = '';
    for (const choices of letters) {
      word += choices[n % choices.length];
      n = Math.floor(n / choices.length);
    }
    variants.push(i % 3 === 0 ? `${word}\u200B` : i % 3 === 1 ? ` ${word} ` : word);
  }
  return variants;
}

const STORES = ['memory', 'redis'] as const;

describe.each(STORES)('login protection, %s store', (store) => {
  let sim: SimulatorProcess;
  let redis: RedisServer | null = null;
  const started: GatewayProcess[] = [];
  let prefixes = 0;

  beforeAll(async () => {
    sim = await startSimulatorProcess({
      dialect: 'generic',
      profile: 'ids=folded',
      extraArgs: ['--log-level', 'warn'],
    });
    if (store === 'redis') redis = await startRedisServer();
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await sim?.stop();
    await redis?.close();
  });

  /** A gateway behind a (pretend) proxy; with the redis store, `shareWith` names the key prefix of gateways that share state. */
  async function gateway(env: Record<string, string> = {}, prefix = `t${++prefixes}:`): Promise<GatewayProcess> {
    const storeEnv: Record<string, string> =
      redis === null
        ? {}
        : { PAIA_STATE_STORE: 'redis', PAIA_STATE_REDIS_URL: redis.url, PAIA_STATE_REDIS_KEY_PREFIX: prefix };
    const g = await startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: { PAIA_HTTP_TRUSTED_PROXY: 'true', ...storeEnv, ...env },
    });
    started.push(g);
    return g;
  }

  const reachedIls = async () => (await sim.counters()).executed['63'] ?? 0;

  it('128 wrong guesses at variants of a username reach the ILS no more often than the free failures, and no variant gets a token while the account is locked', async () => {
    const g = await gateway({ PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000' });
    const before = await reachedIls();
    const answers: Answer[] = [];
    const variants = variantsOfAlice();
    // Eight at a time, as a guessing tool would send them.
    for (let i = 0; i < variants.length; i += 8) {
      answers.push(
        ...(await Promise.all(variants.slice(i, i + 8).map((u, j) => login(g, u, `wrong-${i + j}`, '203.0.113.5')))),
      );
    }
    const reached = (await reachedIls()) - before;
    console.log(`variant guesses (${store}): 128 sent, ${reached} reached the ILS`);
    expect(answers.every((answer) => answer.status === 403)).toBe(true);
    expect(reached).toBeGreaterThanOrEqual(1);
    expect(reached).toBeLessThanOrEqual(5);
    // The red team's token: alice's own password through a variant. Locked: the same 403, with Retry-After.
    for (const username of ['ÄLICE', 'alice', 'Ａｌｉｃｅ']) {
      const right = await login(g, username, 'alice-pass', '192.0.2.44');
      expect(right.status, username).toBe(403);
      expect(Number(right.retryAfter), username).toBeGreaterThanOrEqual(1);
    }
    expect((await reachedIls()) - before).toBe(reached);
  });

  it('a discovery system with 31 wrong logins from its address still logs its patrons in; its attempts are only slowed', async () => {
    // The ceiling out of the way: this is about the address's failures, and one address alone may send 20 per second.
    const g = await gateway({
      PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_MS: '1000',
      PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
    });
    const address = '198.51.100.7';
    const wrong: Answer[] = [];
    for (let i = 0; i < 31; i++) wrong.push(await login(g, `patron-${i}`, 'mistyped-pass', address));
    expect(wrong.map((answer) => answer.status).join(' ')).toBe(Array(31).fill(403).join(' '));
    expect(wrong.at(-1)!.ms).toBeGreaterThanOrEqual(700); // past the 30 free failures: held back
    for (const patron of ['alice', 'dave', 'frank', 'hanna']) {
      const right = await login(g, patron, `${patron}-pass`, address);
      expect(right.status, patron).toBe(200);
    }
  });

  it('an address past its free failures waits before its attempts reach the ILS: 20 guesses cut short at 0.3 s reach it not once', async () => {
    const g = await gateway({
      PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_ADDRESS: '3',
      PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000',
      PAIA_AUTH_BRUTE_FORCE_MAX_SLOWDOWN_MS: '1000',
      PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
    });
    const address = '203.0.113.40';
    for (let i = 0; i < 3; i++) expect((await login(g, `guess-${i}`, 'wrong-pass', address)).status).toBe(403);
    const before = await reachedIls();
    let cut = 0;
    for (let i = 0; i < 20; i++) {
      // A guessing tool that does not wait for slow answers: each attempt is dropped after 0.3 s.
      await login(g, `cut-${i}`, 'wrong-pass', address, 300).catch(() => {
        cut += 1;
      });
    }
    // Anything that was let through would have reached the ILS by now.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const reached = (await reachedIls()) - before;
    console.log(`guesses cut at 0.3 s (${store}): 20 sent, ${cut} cut, ${reached} reached the ILS`);
    expect(cut).toBe(20);
    expect(reached).toBe(0);
    // A patron behind that address still gets in, after the wait.
    const right = await login(g, 'alice', 'alice-pass', address);
    expect(right.status).toBe(200);
    expect(right.ms).toBeGreaterThanOrEqual(900);
  });

  it('attackers on many addresses filling the login ceiling do not starve a quiet address', async () => {
    // No address slowdown, so the attackers keep the ceiling (20 per second) full throughout.
    const g = await gateway({ PAIA_AUTH_BRUTE_FORCE_FREE_FAILURES_PER_ADDRESS: '100000' });
    const until = performance.now() + 3500;
    const attackers = Array.from({ length: 10 }, (_, i) => `203.0.113.${100 + i}`);
    let sent = 0;
    let busy = 0;
    const flood = attackers.flatMap((address, a) =>
      [0, 1, 2].map(async (lane) => {
        for (let n = 0; performance.now() < until; n++) {
          const answer = await login(g, `victim-${a}-${lane}-${n}`, 'guess-pass', address);
          sent += 1;
          if (answer.status === 503) busy += 1;
        }
      }),
    );
    const quiet: Answer[] = [];
    const patron = (async () => {
      await new Promise((resolve) => setTimeout(resolve, 500));
      for (const name of ['alice', 'dave', 'frank']) {
        quiet.push(await login(g, name, `${name}-pass`, '192.0.2.200'));
        await new Promise((resolve) => setTimeout(resolve, 1100));
      }
    })();
    await Promise.all([...flood, patron]);
    console.log(
      `ceiling flood (${store}): attackers sent ${sent}, ${busy} answered 503; quiet address: ${quiet.map((a) => a.status).join(', ')}`,
    );
    expect(busy).toBeGreaterThan(0); // the ceiling was full
    expect(quiet.map((answer) => answer.status)).toEqual([200, 200, 200]);
  });

  it('12 correct logins of one account at once all get a token', async () => {
    const g = await gateway();
    const answers = await Promise.all(Array.from({ length: 12 }, () => login(g, 'emile', 'emile-pass', '192.0.2.9')));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
  });

  it.runIf(store === 'redis')(
    'a lockout begun on one instance holds on another instance sharing the store',
    async () => {
      const env = { PAIA_AUTH_BRUTE_FORCE_LOCKOUT_BASE_MS: '60000' };
      const a = await gateway(env, 'shared-lockout:');
      const b = await gateway(env, 'shared-lockout:');
      for (let i = 0; i < 5; i++) expect((await login(a, 'gina', `wrong-${i}`, '203.0.113.77')).status).toBe(403);
      const before = await reachedIls();
      const onB = await login(b, 'GINA', 'gina-pass', '192.0.2.78');
      expect(onB.status).toBe(403);
      expect(Number(onB.retryAfter)).toBeGreaterThanOrEqual(1);
      expect((await reachedIls()) - before).toBe(0);
    },
  );
});
