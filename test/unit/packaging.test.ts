/**
 * What ships: the npm package's file list (npm pack --dry-run), the systemd
 * unit as systemd-analyze reads it, and compose.yaml's published ports. The
 * container image itself needs a Docker engine (docs/operations.md,
 * "Running in production"); test/integration/compiled.test.ts runs the Dockerfile's
 * command from a directory laid out as the image.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { GATEWAY_NODE_FLAGS, missingNodeFlags } from '../../src/node-flags.js';
import { readDockerfile } from '../helpers/image.js';
import { linkTargets } from '../helpers/markdown.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

async function packedFiles(): Promise<string[]> {
  // --ignore-scripts: no build here; whether dist/ exists or not, the list must hold no test or bench file.
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: REPO_ROOT,
    timeout: 60_000,
  });
  const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  return pack.files.map((file) => file.path);
}

async function which(command: string): Promise<string | null> {
  try {
    return (await run('sh', ['-c', `command -v ${command}`])).stdout.trim() || null;
  } catch {
    return null;
  }
}

describe('the npm package', () => {
  it('holds what runs (the command, config/, the dialects, the simulator data files and traffic page, README and the docs pages it links, LICENSE, CHANGELOG) and no tests, benchmarks or sources', async () => {
    const files = await packedFiles();
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'bin/paia-sip2.mjs',
      'config/default.yaml',
      'config/example.yaml',
      'config/dialects/generic.yaml',
      'config/dialects/koha.yaml',
      'sip2-simulator/data/demo.json',
      'sip2-simulator/data/demo-records.json',
      'sip2-simulator/data/sipserver.json',
      'sip2-simulator/page/index.html',
      'sip2-simulator/page/page.js',
      'sip2-simulator/page/page.css',
      ...linkTargets(readFileSync(join(REPO_ROOT, 'README.md'), 'utf8'))
        .filter((target) => target.startsWith('docs/'))
        .map((target) => target.split('#')[0]!),
    ])
      expect(files).toContain(file);
    const outside = files.filter(
      (file) =>
        !/^(dist\/(src|sip2-simulator\/src)\/.+\.js|bin\/[^/]+\.mjs|config\/.+\.yaml|sip2-simulator\/data\/[^/]+\.json|sip2-simulator\/page\/[^/]+\.(html|js|css)|docs\/[^/]+\.md)$/.test(
          file,
        ) && !['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md'].includes(file),
    );
    expect(outside).toEqual([]);
  }, 60_000);

  it('lists in package.json files only paths that exist or that npm run build writes', () => {
    const { files } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { files: string[] };
    const missing = files.filter((path) => !path.startsWith('dist/') && !existsSync(join(REPO_ROOT, path)));
    expect(missing).toEqual([]);
    expect(files).toEqual(expect.arrayContaining(['dist/src/', 'dist/sip2-simulator/']));
  });
});

describe("the gateway's node options (src/node-flags.ts)", () => {
  const flags = GATEWAY_NODE_FLAGS.join(' ');

  it('are passed by npm start, the paia-sip2 command, the Dockerfile and the systemd unit alike', () => {
    const { scripts } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts.start).toBe(`exec node ${flags} dist/src/cli/main.js serve`);
    expect(readFileSync(join(REPO_ROOT, 'bin', 'paia-sip2.mjs'), 'utf8').split('\n')[0]).toBe(
      `#!/usr/bin/env -S node ${flags}`,
    );
    const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8'))?.[1];
    expect(JSON.parse(cmd ?? 'null')).toEqual(['node', ...GATEWAY_NODE_FLAGS, 'dist/src/cli/main.js', 'serve']);
    expect(readFileSync(join(REPO_ROOT, 'deploy', 'paia-sip2.service'), 'utf8')).toContain(
      `ExecStart=/usr/bin/node ${flags} /opt/`,
    );
  });

  // The command itself, through its shebang, needs dist/: test/integration/compiled.test.ts runs it after the build.
  it('are accepted by this node', () => {
    expect(missingNodeFlags([...GATEWAY_NODE_FLAGS])).toEqual([]);
    expect(missingNodeFlags(['--max-semi-space-size=8', '--expose-gc'])).toEqual(['--heap-growing-percent=60']);
  });
});

describe('the systemd unit (deploy/paia-sip2.service)', () => {
  const unit = readFileSync(join(REPO_ROOT, 'deploy', 'paia-sip2.service'), 'utf8');
  const setting = (name: string) => [...unit.matchAll(new RegExp(`^${name}=(.*)$`, 'gm'))].map((match) => match[1]);

  it('runs the compiled gateway with node directly, reloads with SIGHUP and stops with SIGTERM past the drain bound', () => {
    expect(setting('ExecStart')).toEqual([
      `/usr/bin/node ${GATEWAY_NODE_FLAGS.join(' ')} /opt/paia-sip2/dist/src/cli/main.js serve --config /etc/paia-sip2/config.yaml`,
    ]);
    expect(setting('ExecReload')).toEqual(['/bin/kill -HUP $MAINPID']);
    expect(setting('KillSignal')).toEqual(['SIGTERM']);
    const stopSeconds = Number(/^(\d+)s$/.exec(setting('TimeoutStopSec')[0] ?? '')?.[1]);
    // http.shutdownTimeoutMs defaults to 10 s (config/default.yaml).
    const shutdownMs = Number(
      /shutdownTimeoutMs: (\d+)/.exec(readFileSync(join(REPO_ROOT, 'config/default.yaml'), 'utf8'))?.[1],
    );
    // The drain, the primary's grace for its workers (5 s) and the wait for the journal to take the last lines (2 s).
    expect(stopSeconds * 1000).toBeGreaterThan(shutdownMs + 5000 + 2000);
    expect(setting('User')).toEqual(['paia-sip2']);
    expect(setting('CapabilityBoundingSet')).toEqual(['']);
    expect(setting('RestrictAddressFamilies')).toEqual(['AF_INET AF_INET6 AF_UNIX']);
    for (const name of ['NoNewPrivileges', 'ProtectHome', 'PrivateTmp']) expect(setting(name)).toEqual(['yes']);
    expect(setting('ProtectSystem')).toEqual(['strict']);
  });

  it('gives the gateway its state directory (sessions across restarts), writable under ProtectSystem=strict, mode 0700', () => {
    expect(setting('StateDirectory')).toEqual(['paia-sip2']);
    expect(setting('StateDirectoryMode')).toEqual(['0700']);
    expect(setting('Environment')).toContain('PAIA_STATE_DIR=/var/lib/paia-sip2');
  });

  it('passes systemd-analyze verify without a warning, with an exposure level of at most 2.0 (where systemd-analyze is installed)', async () => {
    const analyze = await which('systemd-analyze');
    if (analyze === null) {
      console.log('skipped: no systemd-analyze here (Debian package "systemd"; .ci/run installs it)');
      return;
    }
    const dir = mkdtempSync(join(tmpdir(), 'paia-sip2-unit-'));
    try {
      const path = join(dir, 'paia-sip2.service');
      copyFileSync(join(REPO_ROOT, 'deploy', 'paia-sip2.service'), path);
      if (!existsSync('/usr/bin/node')) {
        // verify checks that ExecStart's program exists; this machine's node lives elsewhere.
        console.log(`/usr/bin/node is missing here: ExecStart checked with ${process.execPath}`);
        writeFileSync(path, unit.replace('ExecStart=/usr/bin/node ', `ExecStart=${process.execPath} `));
      }
      const verified = await run(analyze, ['verify', path], { timeout: 30_000 }).catch(
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      expect(`${verified.stdout}${verified.stderr}`).toBe('');
      // --threshold is the overall exposure times ten: fail above 2.0 ("OK" in systemd's words).
      const security = await run(analyze, ['security', '--offline=yes', '--threshold=20', path], {
        timeout: 30_000,
      }).catch((error: { code: number; stdout: string }) => error);
      const level = /Overall exposure level for paia-sip2\.service: ([\d.]+)/.exec(security.stdout)?.[1];
      console.log(`systemd-analyze security: overall exposure ${level}`);
      expect('code' in security ? security.code : 0).toBe(0);
      expect(Number(level)).toBeLessThanOrEqual(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('compose.yaml', () => {
  const compose = parseYaml(readFileSync(join(REPO_ROOT, 'compose.yaml'), 'utf8')) as {
    services: Record<
      string,
      { ports?: string[]; environment?: Record<string, string>; command?: string[]; volumes?: string[] }
    >;
    volumes?: Record<string, unknown>;
  };

  it('publishes ports on 127.0.0.1 only', () => {
    const ports = Object.values(compose.services).flatMap((service) => service.ports ?? []);
    expect(ports.length).toBeGreaterThan(0);
    expect(ports.filter((port) => !port.startsWith('127.0.0.1:'))).toEqual([]);
  });

  it('puts the gateway on the Redis store and the simulator of the same image, reached by its service name', () => {
    const { gateway, simulator, redis } = compose.services;
    expect(gateway?.environment).toMatchObject({
      PAIA_STATE_STORE: 'redis',
      PAIA_STATE_REDIS_URL: 'redis://redis:6379',
      PAIA_SIP2_HOST: 'simulator',
    });
    expect(simulator?.command?.slice(0, 2)).toEqual(['node', 'dist/sip2-simulator/src/main.js']);
    expect(simulator?.command).toContain(gateway?.environment?.PAIA_SIP2_PORT);
    expect(redis).toBeDefined();
  });

  it("mounts a named volume on the image's state directory, which the image declares and hands to its user", () => {
    const image = readDockerfile();
    const dir = image.env.PAIA_STATE_DIR;
    expect(dir).toBe('/var/lib/paia-sip2');
    expect(image.volumes).toEqual([dir]);
    expect(readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8')).toMatch(
      new RegExp(`^RUN install -d -o node -g node -m 0700 ${dir}$`, 'm'),
    );
    const [volume] = compose.services.gateway?.volumes ?? [];
    expect(volume).toBe(`gateway-state:${dir}`);
    expect(compose.volumes).toHaveProperty('gateway-state');
  });

  it('runs Redis so that a restart keeps lockouts and sessions, and so that it never evicts them', () => {
    const { redis } = compose.services;
    const command = redis?.command ?? [];
    const option = (name: string) => (command.includes(name) ? command[command.indexOf(name) + 1] : undefined);
    expect(option('--appendonly')).toBe('yes');
    expect(option('--maxmemory-policy')).toBe('noeviction');
    expect(command).not.toContain('--save');
    // The append-only file lives on a named volume, not on a tmpfs that a restart empties.
    const [volume] = redis?.volumes ?? [];
    expect(volume).toMatch(/^[a-z-]+:\/data$/);
    expect(compose.volumes).toHaveProperty(String(volume).split(':')[0] as string);
  });
});
