/**
 * The compiled build (`npm run build` -> dist/) run as it is deployed, from a
 * directory laid out as the container image is (the Dockerfile's COPY lines,
 * test/helpers/image.ts) and, where the test may use a private mount
 * namespace, mounted read-only with a read-only HOME and TMPDIR, as
 * `docker run --read-only` would: the Dockerfile's CMD serves a login against
 * the compiled simulator, its HEALTHCHECK passes, SIGHUP reloads the HTTPS
 * certificate, SIGTERM drains and exits 0. And `npm start`, the real script:
 * SIGTERM sent to npm reaches the gateway, which drains and exits, leaving no
 * process behind. Prints the resident memory of the compiled gateway and of
 * the same gateway run through tsx.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import tls from 'node:tls';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { withoutSettings } from '../../src/config/load.js';
import { GATEWAY_NODE_FLAGS } from '../../src/node-flags.js';
import { makeTestCerts, type TestCerts } from '../helpers/certs.js';
import { isRunning, trackChild } from '../helpers/children.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type ImageSpec, layOutImage, readDockerfile } from '../helpers/image.js';
import { type SimulatorProcess, startSimulatorProcess } from '../helpers/simulator.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILD_TIMEOUT_MS = 180_000;

interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; killed (and rejected) past `timeoutMs`. */
function run(
  file: string,
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = trackChild(spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${file} ${args.join(' ')}: not done within ${options.timeoutMs} ms\n${stdout}\n${stderr}`));
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Resident set size of a running process in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB$/m);
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Math.round(Number(line[1]) / 102.4) / 10;
}

/** The certificate a new TLS connection gets. */
function freshFingerprint(url: string, ca: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: hostname, port: Number(port), ca: readFileSync(ca) }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('no TLS handshake within 5 s')));
    socket.once('error', reject);
  });
}

async function login(url: string): Promise<{ status: number; token?: string }> {
  const response = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await response.json()) as { access_token?: string };
  return { status: response.status, ...(body.access_token ? { token: body.access_token } : {}) };
}

/** Every file under `dir` with its size and modification time: a directory nobody wrote to keeps this. */
function snapshot(dir: string): string[] {
  const walk = (folder: string): string[] =>
    readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
      const path = join(folder, entry.name);
      if (entry.isSymbolicLink()) return [relative(dir, path)];
      if (entry.isDirectory()) return [relative(dir, path), ...walk(path)];
      const stat = statSync(path);
      return [`${relative(dir, path)} ${stat.size} ${stat.mtimeMs}`];
    });
  return walk(dir).sort();
}

/** Bare package names the compiled modules import (node: built-ins aside). */
function importedPackages(dir: string): Set<string> {
  const packages = new Set<string>();
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.js')) {
        const text = readFileSync(path, 'utf8');
        for (const match of text.matchAll(
          /(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gm,
        )) {
          const specifier = match[1] ?? match[2]!;
          if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(specifier))
            continue;
          const parts = specifier.split('/');
          packages.add(specifier.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!);
        }
      }
    }
  };
  walk(dir);
  return packages;
}

/**
 * A command prefix that runs the rest with `app` and `home` mounted read-only in a
 * private mount namespace (unshare -m; needs root or CAP_SYS_ADMIN), ending in exec so
 * the pid stays the gateway's; null, with the reason, where that is not possible.
 */
async function readOnlyPrefix(app: string, home: string): Promise<{ prefix: string[] | null; reason: string }> {
  const script = 'mount --bind -o ro "$1" "$1" && mount --bind -o ro "$2" "$2" && shift 2 && exec "$@"';
  const prefix = ['unshare', '--mount', 'sh', '-c', script, 'paia-sip2-read-only', app, home];
  const probe = await run(
    prefix[0]!,
    [...prefix.slice(1), 'sh', '-c', 'touch "$0/probe" 2>/dev/null; test $? -ne 0', app],
    {
      cwd: REPO_ROOT,
      timeoutMs: 10_000,
    },
  ).catch((error: Error) => ({ code: -1, stderr: error.message }));
  if (probe.code === 0) return { prefix, reason: 'read-only mounts in a private mount namespace (unshare -m)' };
  return {
    prefix: null,
    reason: `no read-only mount here (${probe.stderr.trim() || `exit ${probe.code}`}); the directory is checked unchanged instead`,
  };
}

describe('the compiled build, run as the container runs it', () => {
  let image: ImageSpec;
  let work: string;
  let app: string;
  let home: string;
  let before: string[];
  let readOnly: { prefix: string[] | null; reason: string };
  let built: Ran;
  let buildMs: number;
  let certs: TestCerts;
  let sim: SimulatorProcess;
  let gateway: GatewayProcess | undefined;
  let tlsGateway: GatewayProcess | undefined;
  /** The drained gateway's state directory and a token it issued. */
  let drained: { stateDir: string; token: string } | undefined;

  /**
   * The image's environment, the address changed to loopback and an ephemeral port; HOME and TMPDIR read-only;
   * the state directory (the image's VOLUME) a writable folder of its own for each gateway, as a volume would be.
   */
  const imageEnv = (extra: Record<string, string> = {}) => ({
    ...image.env,
    PAIA_HTTP_HOST: '127.0.0.1',
    PAIA_HTTP_PORT: '0',
    HOME: home,
    TMPDIR: home,
    PAIA_STATE_DIR: mkdtempSync(join(work, 'volume-')),
    ...extra,
  });
  const startCompiled = (env: Record<string, string>) =>
    startGatewayProcess({
      sip2Port: sim.port,
      dialect: 'generic',
      env: imageEnv(env),
      compiled: { dir: app, ...(readOnly.prefix ? { prefix: readOnly.prefix } : {}) },
    });

  beforeAll(async () => {
    const started = Date.now();
    built = await run('npm', ['run', 'build'], { cwd: REPO_ROOT, timeoutMs: BUILD_TIMEOUT_MS });
    buildMs = Date.now() - started;
    if (built.code !== 0) throw new Error(`npm run build failed:\n${built.stdout}\n${built.stderr}`);

    image = readDockerfile();
    work = mkdtempSync(join(tmpdir(), 'paia-sip2-image-'));
    app = join(work, 'app');
    home = join(work, 'home');
    mkdirSync(app);
    mkdirSync(home);
    layOutImage(image, app);
    before = snapshot(app);
    readOnly = await readOnlyPrefix(app, home);
    console.log(`npm run build: ${(buildMs / 1000).toFixed(1)} s; image directory: ${readOnly.reason}`);

    certs = makeTestCerts();
    sim = await startSimulatorProcess({ compiledIn: app, extraArgs: ['--log-level', 'warn'] });
  }, BUILD_TIMEOUT_MS + 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await tlsGateway?.stop();
    await sim?.stop();
    certs?.cleanup();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('builds with npm run build, and the compiled code imports no package beyond the runtime dependencies', () => {
    expect(built.code).toBe(0);
    expect(existsSync(join(REPO_ROOT, 'dist', 'src', 'cli', 'main.js'))).toBe(true);
    expect(existsSync(join(REPO_ROOT, 'dist', 'sip2-simulator', 'src', 'main.js'))).toBe(true);
    // Tests and benchmarks are not compiled.
    expect(existsSync(join(REPO_ROOT, 'dist', 'test'))).toBe(false);
    expect(existsSync(join(REPO_ROOT, 'dist', 'bench'))).toBe(false);
    const { dependencies } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const imported = [...importedPackages(join(app, 'dist'))];
    expect(imported).toContain('hono');
    expect(imported.filter((name) => !(name in dependencies))).toEqual([]);
  });

  it('the paia-sip2 command (package.json bin) runs the compiled command line', async () => {
    const { bin } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      bin: Record<string, string>;
    };
    expect(bin['paia-sip2']).toBe('bin/paia-sip2.mjs');
    expect(readFileSync(join(REPO_ROOT, 'bin', 'paia-sip2.mjs'), 'utf8')).not.toMatch(/tsx/);
    const checked = await run(process.execPath, ['bin/paia-sip2.mjs', 'check-config'], {
      cwd: REPO_ROOT,
      env: withoutSettings(process.env),
      timeoutMs: 20_000,
    });
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/^configuration is valid/);
    // As an installed command runs it: the file itself, through its shebang.
    const version = await run(join(REPO_ROOT, 'bin', 'paia-sip2.mjs'), ['--version'], {
      cwd: REPO_ROOT,
      timeoutMs: 20_000,
    });
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('`paia-sip2 simulator --help` works from a packed install (npm pack), which holds the simulator and its page', async () => {
    const packed = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', work], {
      cwd: REPO_ROOT,
      timeoutMs: 60_000,
    });
    expect(packed.code, packed.stderr).toBe(0);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: Array<{ path: string }> }];
    const paths = files.map((file) => file.path);
    for (const path of [
      'bin/paia-sip2.mjs',
      'dist/src/cli/main.js',
      'dist/sip2-simulator/src/command.js',
      'sip2-simulator/page/index.html',
      'sip2-simulator/page/page.js',
      'sip2-simulator/page/page.css',
      'sip2-simulator/data/demo.json',
    ])
      expect(paths, path).toContain(path);
    // Unpacked as npm installs it (package/ in the tarball), its runtime dependencies linked: no registry here.
    const installed = join(work, 'installed');
    mkdirSync(installed);
    const untar = await run('tar', ['-xzf', join(work, filename), '-C', installed], { cwd: work, timeoutMs: 30_000 });
    expect(untar.code, untar.stderr).toBe(0);
    const pkg = join(installed, 'package');
    symlinkSync(realpathSync(join(REPO_ROOT, 'node_modules')), join(pkg, 'node_modules'), 'dir');
    const help = await run(process.execPath, [join(pkg, 'bin', 'paia-sip2.mjs'), 'simulator', '--help'], {
      cwd: installed,
      timeoutMs: 20_000,
    });
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^usage: paia-sip2 simulator \[options\]/);
    expect(help.stdout).toContain('--control-port N');
  });

  it('the compiled simulator in the image layout serves its traffic page', async () => {
    const page = await fetch(`http://127.0.0.1:${sim.controlPort}/page.js`, { signal: AbortSignal.timeout(5000) });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await page.text()).toContain('/traffic');
  });

  it("runs the Dockerfile's CMD from a directory laid out as the image, in the image's environment", () => {
    expect(image.cmd).toEqual(['node', ...GATEWAY_NODE_FLAGS, 'dist/src/cli/main.js', 'serve']);
    // What startGatewayProcess runs with `compiled` is that command.
    expect(image.workdir).toBe('/app');
    expect(existsSync(join(app, 'config', 'dialects', 'generic.yaml'))).toBe(true);
  });

  it('serves a login and the patron against the compiled simulator, and passes the HEALTHCHECK', async () => {
    gateway = await startCompiled({ PAIA_LOG_LEVEL: 'info' });
    const { status, token } = await login(gateway.url);
    expect(status).toBe(200);
    const patron = await fetch(`${gateway.url}/core/alice`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(patron.status).toBe(200);
    expect(await patron.json()).toMatchObject({ name: expect.any(String) });

    const [command, ...args] = image.healthcheck;
    expect(command).toBe('node');
    const check = await run(process.execPath, args, {
      cwd: app,
      env: { ...process.env, PAIA_HTTP_PORT: new URL(gateway.url).port },
      timeoutMs: 10_000,
    });
    expect(check.code).toBe(0);
  });

  it('SIGHUP: new connections get the renewed certificate', async () => {
    // The gateway reads copies in a writable folder of their own, which the test overwrites as a renewal would.
    const live = mkdtempSync(join(work, 'tls-'));
    const cert = join(live, 'live.crt');
    const key = join(live, 'live.key');
    copyFileSync(certs.server.cert, cert);
    copyFileSync(certs.server.key, key);
    tlsGateway = await startCompiled({ PAIA_HTTP_TLS_CERT: cert, PAIA_HTTP_TLS_KEY: key, PAIA_LOG_LEVEL: 'info' });
    expect(tlsGateway.url).toMatch(/^https:/);
    expect(await freshFingerprint(tlsGateway.url, certs.ca)).toBe(certs.server.fingerprint256);

    copyFileSync(certs.second.cert, cert);
    copyFileSync(certs.second.key, key);
    process.kill(tlsGateway.pid, 'SIGHUP');
    const g = tlsGateway;
    await waitFor('the reload line', () => (/TLS certificate reloaded/.test(g.stdout()) ? true : undefined));
    expect(await freshFingerprint(tlsGateway.url, certs.ca)).toBe(certs.second.fingerprint256);
    expect(g.stdout()).not.toMatch(/shutdown/);
    await tlsGateway.stop();
    tlsGateway = undefined;
  });

  it('SIGTERM: the request in flight finishes, the gateway exits 0, the HEALTHCHECK then fails', async () => {
    const g = gateway!;
    const { token } = await login(g.url);
    await sim.setFaults({ latencyMs: 1000 });
    const inFlight = fetch(`${g.url}/core/alice`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const exit = g.kill('SIGTERM');
    expect((await inFlight).status).toBe(200);
    expect(await exit).toEqual({ code: 0, signal: null });
    expect(g.stdout()).toMatch(/shutdown: complete/);
    await sim.clearFaults();

    const [, ...args] = image.healthcheck;
    const check = await run(process.execPath, args, {
      cwd: app,
      env: { ...process.env, PAIA_HTTP_PORT: new URL(g.url).port },
      timeoutMs: 10_000,
    });
    expect(check.code).toBe(1);
    drained = { stateDir: g.stateDir, token: token! };
    gateway = undefined;
  });

  it('started again on the same state directory (the VOLUME), it still knows the token of before the SIGTERM', async () => {
    expect(image.volumes).toEqual([image.env.PAIA_STATE_DIR]);
    const { stateDir, token } = drained!;
    gateway = await startCompiled({ PAIA_STATE_DIR: stateDir });
    const patron = await fetch(`${gateway.url}/core/alice`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(10_000),
    });
    expect(patron.status).toBe(200);
    await gateway.stop();
    gateway = undefined;
  });

  it('wrote nothing into the image directory', () => {
    expect(snapshot(app)).toEqual(before);
  });

  it("accepts compose.yaml's gateway settings (check-config, compiled, in the image's environment)", async () => {
    const compose = parseYaml(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8')) as {
      services: { gateway: { environment: Record<string, string> } };
    };
    const checked = await run(process.execPath, ['dist/src/cli/main.js', 'check-config'], {
      cwd: app,
      env: { ...withoutSettings(process.env), ...image.env, ...compose.services.gateway.environment, HOME: home },
      timeoutMs: 20_000,
    });
    expect(checked.stderr).toBe('');
    expect(checked.code).toBe(0);
    expect(checked.stdout).toMatch(/"ils": "simulator:6001"/);
  });

  it('npm start: SIGTERM sent to npm reaches the gateway, which drains and exits 0; no process is left', async () => {
    const env = {
      ...withoutSettings(process.env),
      PAIA_HTTP_HOST: '127.0.0.1',
      PAIA_HTTP_PORT: '0',
      PAIA_LOG_LEVEL: 'info',
      // Not the repository's own .paia-sip2 (the default of npm start there): a developer's demo may hold it.
      PAIA_STATE_DIR: mkdtempSync(join(work, 'npm-start-state-')),
    };
    const npm: ChildProcess = trackChild(
      spawn('npm', ['start'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    let stdout = '';
    npm.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const npmExit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      npm.once('exit', (code, signal) => resolve({ code, signal })),
    );
    let gatewayPid: number | undefined;
    try {
      const url = await waitFor(
        'the listening line',
        () => /^paia-sip2 listening on (\S+)$/m.exec(stdout)?.[1],
        120_000,
      );
      // The gateway's own log names its pid: it is npm's child, with no shell between.
      gatewayPid = await waitFor('a log line with the pid', () => {
        const line = stdout.split('\n').find((text) => text.startsWith('{') && text.includes('"pid"'));
        return line ? (JSON.parse(line) as { pid: number }).pid : undefined;
      });
      expect(gatewayPid).not.toBe(npm.pid);
      const stat = readFileSync(`/proc/${gatewayPid}/stat`, 'utf8');
      expect(Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])).toBe(npm.pid);
      expect((await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5000) })).status).toBe(200);

      npm.kill('SIGTERM');
      const exited = await Promise.race([
        npmExit,
        new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 20_000)),
      ]);
      expect(exited).toEqual({ code: 0, signal: null });
      expect(stdout).toMatch(/shutdown: complete/);
      const pid = gatewayPid;
      await waitFor('the gateway to be gone', () => (isRunning(pid) ? undefined : true), 5000);
    } finally {
      if (gatewayPid !== undefined && isRunning(gatewayPid)) process.kill(gatewayPid, 'SIGKILL');
      npm.kill('SIGKILL');
    }
  }, 180_000);

  it('prints the resident memory of the compiled gateway and of the same gateway through tsx, at idle', async () => {
    const compiled = await startCompiled({});
    const viaTsx = await startGatewayProcess({ sip2Port: sim.port, dialect: 'generic', throughTsx: true });
    try {
      for (const g of [compiled, viaTsx]) expect((await login(g.url)).status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 2000));
      const figures = { compiled: rssMb(compiled.pid), tsx: rssMb(viaTsx.pid) };
      console.log(
        `RSS at idle after one login: compiled ${figures.compiled} MB, through tsx ${figures.tsx} MB (one process each)`,
      );
    } finally {
      await compiled.stop();
      await viaTsx.stop();
    }
  });
});
