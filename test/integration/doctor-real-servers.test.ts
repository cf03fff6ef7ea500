import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { runDoctorProcess as doctor, explainRun as explain, warningBlock } from '../helpers/doctor.js';
import { type SimulatorProcess, simulatorIls, startSimulatorProcess } from '../helpers/simulator.js';
import { startTlsProxy, type TlsProxy } from '../helpers/tls-proxy.js';

/**
 * The doctor against what broke with real SIP2 servers, as the simulator's
 * profiles reproduce them: a charset other than the configured one, fine
 * items in another system's format, fewer workers than sip2.pool.max, idle
 * sessions closed before the keepalive, a one-worker server, and TLS in
 * front of the ILS. The real CLI against the simulator process.
 */

const ilsOf = (sim: SimulatorProcess) => simulatorIls(sim.port);

describe('an ILS that sends UTF-8 to a doctor configured for cp850', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--charset', 'utf-8'] });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('warns that names and titles look like UTF-8 read as cp850, shows how they read in UTF-8, and advises sip2.charset utf-8', async () => {
    const run = await doctor(['--quick', '--patron', 'emile'], {
      ...ilsOf(sim),
      PAIA_SIP2_CHARSET: 'cp850',
      PAIA_DOCTOR_PASSWORD: 'emile-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^ok {3}charset cp850: 5 names and titles checked, some look mis-decoded$/m);
    const warning = warningBlock(run.stdout, 'look like UTF-8 read as cp850');
    expect(warning, run.stdout).not.toBeNull();
    expect(warning).toContain(
      "the patron's name, the patron's address, 3 of 3 item titles look like UTF-8 read as cp850: the ILS sends UTF-8.",
    );
    expect(warning).toContain('Read as UTF-8: "Émile Zoë Ångström"');
    expect(warning).toContain('set sip2.charset: utf-8 (PAIA_SIP2_CHARSET=utf-8)');
    expect(run.stdout).toMatch(/^1 warning: see the lines marked "!"$/m);
  });

  it('finds nothing wrong once sip2.charset is utf-8', async () => {
    const run = await doctor(['--quick', '--patron', 'emile'], {
      ...ilsOf(sim),
      PAIA_SIP2_CHARSET: 'utf-8',
      PAIA_DOCTOR_PASSWORD: 'emile-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toContain('"name": "Émile Zoë Ångström"');
    expect(run.stdout).toMatch(/^ok {3}charset utf-8: 5 names and titles checked, none looks mis-decoded$/m);
    expect(run.stdout).not.toMatch(/^ {5}! /m);
  });
});

describe('an ILS that sends cp850 to a doctor configured for UTF-8', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ extraArgs: ['--charset', 'cp850'] });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('warns about the replacement characters and advises a single-byte sip2.charset', async () => {
    const run = await doctor(['--quick', '--patron', 'emile'], {
      ...ilsOf(sim),
      PAIA_SIP2_CHARSET: 'utf-8',
      PAIA_DOCTOR_PASSWORD: 'emile-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    const warning = warningBlock(run.stdout, 'are not UTF-8');
    expect(warning, run.stdout).not.toBeNull();
    // "Harry Potter y el cáliz" has an á (cp850 0xA0); the other titles have characters cp850 sends as "?".
    expect(warning).toContain(
      "the patron's name, the patron's address, 1 of 3 item titles hold characters that are not UTF-8",
    );
    expect(warning).toContain('set sip2.charset: cp850');
    expect(warning).toContain('or latin1');
  });
});

describe('fine items in another system’s format (profile fines=koha, dialect generic)', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'fines=koha', dialect: 'generic' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('warns that they fit none of the dialect’s patterns, shows their shapes (not the text) and a pattern that reads them, and suggests no koha dialect', async () => {
    const run = await doctor(['--quick', '--patron', 'alice'], { ...ilsOf(sim), PAIA_DOCTOR_PASSWORD: 'alice-pass' });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(
      /^ok {3}fine items \(AV\): 2 read with a 63 fine summary, 0 fit the patterns of dialect generic \([\d.]+ ms\)$/m,
    );
    const warning = warningBlock(run.stdout, 'fine items (AV) fit none of the patterns');
    expect(warning, run.stdout).not.toBeNull();
    expect(warning).toContain('2 of 2 fine items (AV) fit none of the patterns of dialect generic (sip2.dialect).');
    // Koha's "<description> <amount>": alice's "Der Zauberberg 2.50" and "Effi Briest 1.00" by shape.
    expect(warning).toContain('"Aaa Aaaaaaaaaa 9.99": the gateway lists it by the amount in its text');
    expect(warning).toContain('"Aaaa Aaaaaa 9.99": the gateway lists it by the amount in its text');
    expect(warning).toContain(
      String.raw`A pattern that reads them (the amount at the end): '^(?<about>.*\S)\s+(?<amount>-?\d+\.\d{2})$'`,
    );
    expect(warning).toContain('copy config/dialects/generic.yaml');
    // Koha's patterns read them, but this ILS's hold lists (AS with every hold) are not Koha's: no switch suggested.
    expect(warning).not.toMatch(/built-in dialect|koha/);
    // Patron data stays out of the warning.
    expect(warning).not.toMatch(/Zauberberg|Effi|2\.50|1\.00/);
    // What the gateway makes of them, as the fees step shows.
    expect(run.stdout).toContain('"about": "Der Zauberberg 2.50"');
  });

  it('says so when the entries carry no amount at all (profile fines=sipserver): the gateway leaves them out', async () => {
    await sim.setProfile('fines=sipserver');
    try {
      const run = await doctor(['--quick', '--patron', 'alice'], { ...ilsOf(sim), PAIA_DOCTOR_PASSWORD: 'alice-pass' });
      expect(run.code, explain(run)).toBe(0);
      const warning = warningBlock(run.stdout, 'fine items (AV) fit none of the patterns');
      expect(warning, run.stdout).not.toBeNull();
      expect(warning).toContain('"Aaa Aaaaaaaaaa": no amount in it: the gateway leaves it out of the fees');
      expect(warning).toContain('2 carry no amount, which no pattern can change');
      expect(warning).not.toContain('A pattern that reads them');
    } finally {
      await sim.setProfile('fines=koha');
    }
  });
});

describe('an ILS with fewer workers than sip2.pool.max (profile workers=2, pool.max 4)', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'workers=2' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('counts 2 sessions at once, says the gateway will share them, advises the ILS’s worker settings or pool.max 2, and leaves nothing waiting', async () => {
    const run = await doctor(['--quick', '--patron', 'alice'], {
      ...ilsOf(sim),
      PAIA_SIP2_POOL_MAX: '4',
      PAIA_SIP2_TIMEOUTS_RESPONSE_MS: '1500',
      PAIA_DOCTOR_PASSWORD: 'alice-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^wait up to 6\.0 s: 3 further sessions at once/m);
    expect(run.stdout).toMatch(/^ok {3}sessions at once: 2 of sip2\.pool\.max 4 logged in \([\d.]+ ms\)$/m);
    const warning = warningBlock(run.stdout, 'fewer than sip2.pool.max');
    expect(warning, run.stdout).not.toBeNull();
    expect(warning).toContain('the ILS serves 2 sessions to this host at once, fewer than sip2.pool.max (4)');
    expect(warning).toContain('2 further logins got no answer within sip2.timeouts.responseMs (1500 ms)');
    expect(warning).toContain('shares the 2 sessions among its requests');
    expect(warning).toContain('min_servers, min_spare_servers and max_servers');
    expect(warning).toContain('set sip2.pool.max to 2 (PAIA_SIP2_POOL_MAX=2)');
    // The patron's methods still work on the sessions there are.
    expect(run.stdout).toMatch(/^ok {3}PAIA items \([\d.]+ ms\)$/m);
    // Nothing of the doctor is left waiting for a worker.
    await expect.poll(async () => (await sim.state()).waiting, { timeout: 3000 }).toBe(0);
  });
});

describe('an ILS that closes idle sessions after 1 s (profile idle-timeout=1), keepalive 3 s', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'idle-timeout=1' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('keeps one session idle at the end, sees the ILS close it after about 1 s, and says what to do', async () => {
    const run = await doctor(['--patron', 'alice'], {
      ...ilsOf(sim),
      PAIA_SIP2_POOL_KEEPALIVE_MS: '3000',
      PAIA_DOCTOR_PASSWORD: 'alice-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    const wait = run.stdout.indexOf('wait 4 s: one session stays idle');
    expect(wait, run.stdout).toBeGreaterThan(run.stdout.indexOf('ok   PAIA fees'));
    expect(run.stdout).toContain('(sip2.pool.keepaliveMs 3000) would; --quick skips this');
    expect(run.stdout).toMatch(/^ok {3}idle session: the ILS closed it after 1\.\d s \(\d+ ms\)$/m);
    const warning = warningBlock(run.stdout, 'closes idle SIP2 sessions');
    expect(warning, run.stdout).not.toBeNull();
    expect(warning).toMatch(
      /the ILS closes idle SIP2 sessions after about 1\.\d s, sooner than the gateway's keepalive \(sip2\.pool\.keepaliveMs 3000\)/,
    );
    // 1 s leaves no keepalive of at least 1 s safely below it.
    expect(warning).toContain("raise the ILS's idle timeout (Koha: client_timeout");
    // It did not wait the full 4 s: it saw the close.
    expect(run.ms).toBeLessThan(20_000);
  });

  it('sees a session still open after the wait when the ILS keeps it (no idle timeout), and --quick skips the wait', async () => {
    await sim.setProfile('idle-timeout=0');
    try {
      const run = await doctor([], { ...ilsOf(sim), PAIA_SIP2_POOL_KEEPALIVE_MS: '1000' });
      expect(run.code, explain(run)).toBe(0);
      expect(run.stdout).toMatch(/^ok {3}idle session: still open after 2 s and answers a 99 \((\d+) ms\)$/m);
      const ms = Number(
        /^ok {3}idle session: still open after 2 s and answers a 99 \((\d+) ms\)$/m.exec(run.stdout)![1],
      );
      expect(ms).toBeGreaterThanOrEqual(2000);
      expect(run.stdout).not.toMatch(/^ {5}! /m);

      const quick = await doctor(['--quick'], { ...ilsOf(sim), PAIA_SIP2_POOL_KEEPALIVE_MS: '1000' });
      expect(quick.code, explain(quick)).toBe(0);
      expect(quick.stdout).toMatch(/^skip idle session: --quick/m);
      expect(quick.stdout).not.toContain('wait 2 s');
    } finally {
      await sim.setProfile('idle-timeout=1');
    }
  });
});

describe('a one-worker ILS (profile workers=1, pool.max 1)', () => {
  let sim: SimulatorProcess;
  beforeAll(async () => {
    sim = await startSimulatorProcess({ profile: 'workers=1' });
  });
  afterAll(async () => {
    await sim?.stop();
  });

  it('passes every check, and every connection the doctor opens logs in: none takes the worker without a session', async () => {
    const run = await doctor(['--patron', 'alice'], {
      ...ilsOf(sim),
      PAIA_SIP2_POOL_MAX: '1',
      PAIA_SIP2_POOL_KEEPALIVE_MS: '1000',
      PAIA_DOCTOR_PASSWORD: 'alice-pass',
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^skip sessions at once: sip2\.pool\.max is 1/m);
    expect(run.stdout).toMatch(/^ok {3}PAIA fees/m);
    expect(run.stdout).toMatch(/^ok {3}idle session: still open after 2 s and answers a 99/m);
    expect(run.stdout).toMatch(/^all checks passed$/m);
    await expect.poll(async () => (await sim.state()).connections, { timeout: 3000 }).toBe(0);
    expect((await sim.state()).waiting).toBe(0);
    // The simulator logs each connection a worker takes and each login it accepts: one of each per session
    // (the first, the patron's pool, the idle one). A reachability probe would be a connection without a login.
    const log = sim.stderr;
    const opened = log.match(/"msg":"connection opened"/g)?.length ?? 0;
    const loggedIn = log.match(/"msg":"login accepted"/g)?.length ?? 0;
    expect(opened).toBeGreaterThanOrEqual(3);
    expect(loggedIn).toBe(opened);
  });
});

describe('TLS in front of the ILS', () => {
  let sim: SimulatorProcess;
  let certs: TestCerts;
  let proxy: TlsProxy | undefined;
  let proxyPort: number;

  beforeAll(async () => {
    sim = await startSimulatorProcess();
    certs = makeTestCerts();
    proxy = await startTlsProxy(certs.server, sim.port);
    proxyPort = proxy.port;
  });
  afterAll(async () => {
    await proxy?.close();
    certs?.cleanup();
    await sim?.stop();
  });

  const ils = () => simulatorIls(proxyPort);

  it('shows the TLS session of the first session: protocol, certificate, validity, verified', async () => {
    const run = await doctor(['--quick'], { ...ils(), PAIA_SIP2_TLS_CA: certs.ca });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(
      new RegExp(
        `^ok   connect TLS 127\\.0\\.0\\.1:${proxyPort} \\+ 93 login as terminal user "paia" \\([\\d.]+ ms\\)$`,
        'm',
      ),
    );
    expect(run.stdout).toMatch(
      /^ {5}TLSv1\.[23], certificate 127\.0\.0\.1, issued by paia-sip2 test ca, valid until .+ GMT, verified$/m,
    );
    expect(run.stdout).not.toMatch(/^ {5}! /m);
  });

  it('fails on a certificate its CA did not sign, saying it was not trusted and what to set', async () => {
    const run = await doctor(['--quick'], { ...ils(), PAIA_SIP2_TLS_CA: certs.otherCa });
    expect(run.code, explain(run)).toBe(1);
    expect(run.stdout).toMatch(
      /^FAIL connect TLS [\d.:]+ \+ 93 login as terminal user "paia": the ILS's TLS certificate was not trusted \([A-Z_]+\): set sip2\.tls\.ca/m,
    );
  });

  it('warns when the certificate is not verified (rejectUnauthorized false)', async () => {
    const run = await doctor(['--quick'], {
      ...ils(),
      PAIA_SIP2_TLS_CA: certs.otherCa,
      PAIA_SIP2_TLS_REJECT_UNAUTHORIZED: 'false',
    });
    expect(run.code, explain(run)).toBe(0);
    expect(run.stdout).toMatch(/^ {5}TLSv1\.[23], certificate 127\.0\.0\.1, .*, NOT verified$/m);
    const warning = warningBlock(run.stdout, "the ILS's certificate was not verified");
    expect(warning, run.stdout).toMatch(/not verified \([A-Z_]+\) because sip2\.tls\.rejectUnauthorized is false/);
  });

  it('with TLS towards a plain SIP2 port: a FAIL that names sip2.tls: null', async () => {
    const run = await doctor(['--quick'], {
      ...ilsOf(sim),
      PAIA_SIP2_TLS_CA: certs.ca,
      PAIA_SIP2_TIMEOUTS_CONNECT_MS: '1000',
    });
    expect(run.code, explain(run)).toBe(1);
    // The port waits for a SIP2 message, so the handshake usually never ends; when the ClientHello's random
    // bytes hold a CR, the simulator answers it as a frame and the handshake fails at once. Both say so.
    expect(run.stdout).toMatch(
      /^FAIL connect TLS [\d.:]+ \+ 93 login as terminal user "paia": (no TLS session within sip2\.timeouts\.connectMs \(1000 ms\): .*or the port speaks plain TCP and waits for SIP2 \(then sip2\.tls: null\)|the TLS handshake failed \(ERR_SSL_[A-Z_]+\): the port does not speak TLS; it may speak plain TCP and SIP2 \(then sip2\.tls: null\))/m,
    );
  });
});
