/**
 * The container image, built from the Dockerfile as it is and run as docs/operations.md says: the demo
 * (no sip2.host: the embedded simulator and its demo data) behind a TLS-terminating proxy
 * (PAIA_HTTP_TRUSTED_PROXY, PAIA_HTTP_PUBLIC_URL), `--read-only`, with nothing published beyond
 * 127.0.0.1. Skipped, with the reason printed, where no Docker engine can be had (test/image/setup.ts);
 * a build or a check that fails fails.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { build } from './base-images.js';
import { attach, type Engine } from './engine.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TAG = 'paia-sip2:image-test';
const PUBLIC_URL = 'https://paia.example.org';
/** The HEALTHCHECK's own interval is 30 s; its command and its other timings are the image's. */
const HEALTH_INTERVAL = '1s';
const WAIT_MS = 30_000;

const docker = inject('docker');
const unavailable = 'unavailable' in docker ? docker.unavailable : null;
if (unavailable !== null) console.log(`skipped: the container image: ${unavailable}`);

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what} within ${WAIT_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(unavailable !== null)('the container image, from the Dockerfile unchanged', () => {
  let engine: Engine;
  const name = `paia-image-test-${process.pid}`;
  let url: string;
  const inspect = (format: string) => engine.docker(['inspect', '--format', format, name]);
  const exec = (command: string) => engine.docker(['exec', name, 'sh', '-c', command]);
  // As a TLS-terminating proxy forwards a request (trustedProxy requires it).
  const headers = { 'x-forwarded-proto': 'https', 'content-type': 'application/json' };

  beforeAll(async () => {
    if ('unavailable' in docker) return;
    engine = attach(docker);
    const began = Date.now();
    await build(engine, `${REPO_ROOT}Dockerfile`, TAG, REPO_ROOT);
    const [size, base] = await Promise.all(
      [TAG, 'node:22-bookworm-slim'].map(async (image) =>
        Number(await engine.docker(['image', 'inspect', '--format', '{{.Size}}', image])),
      ),
    );
    const mb = (bytes: number) => Math.round(bytes / 1e6);
    console.log(
      `image ${TAG}: built in ${Math.round((Date.now() - began) / 1000)} s, ${mb(size!)} MB (${mb(size! - base!)} MB on top of node:22-bookworm-slim)`,
    );
    const port = await freePort();
    // The private engine has no bridge: the container shares the host's network and listens on 127.0.0.1.
    const network = docker.hostNetwork
      ? ['--network', 'host', '-e', 'PAIA_HTTP_HOST=127.0.0.1', '-e', `PAIA_HTTP_PORT=${port}`]
      : ['-p', `127.0.0.1:${port}:8080`];
    await engine.docker([
      'run',
      '--detach',
      '--name',
      name,
      '--read-only',
      '--health-interval',
      HEALTH_INTERVAL,
      ...network,
      '-e',
      'PAIA_HTTP_TRUSTED_PROXY=true',
      '-e',
      `PAIA_HTTP_PUBLIC_URL=${PUBLIC_URL}`,
      TAG,
    ]);
    url = `http://127.0.0.1:${port}`;
    await until(
      () =>
        fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
          (response) => response.ok,
          () => false,
        ),
      'the gateway in the container did not answer /healthz',
    );
  }, 15 * 60_000);

  afterAll(async () => {
    if (engine === undefined) return;
    await engine.docker(['rm', '--force', '--volumes', name]).catch(() => undefined);
    // The private engine goes with its images; an engine of the developer's keeps no test image.
    if (!engine.private) await engine.docker(['image', 'rm', TAG]).catch(() => undefined);
  });

  it('serves the demo login and the patron and items', async () => {
    const login = await fetch(`${url}/auth/login`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ username: 'alice', password: 'alice-pass', grant_type: 'password' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(login.status).toBe(200);
    const { access_token: token } = (await login.json()) as { access_token: string };
    for (const path of ['/core/alice', '/core/alice/items']) {
      const response = await fetch(`${url}${path}`, {
        headers: { ...headers, authorization: `Bearer ${token}` },
        signal: AbortSignal.timeout(10_000),
      });
      expect(response.status, path).toBe(200);
    }
  });

  it('runs as uid 1000 under tini as PID 1', async () => {
    expect(await inspect('{{.Config.User}}')).toBe('node');
    expect(await exec('id -u')).toBe('1000');
    expect(await exec('tr "\\0" " " < /proc/1/cmdline')).toMatch(/^\/usr\/bin\/tini -- node /);
    // The gateway itself, tini's child, as the same user.
    expect(await exec('stat -c %u /proc/$(cat /proc/1/task/1/children | cut -d" " -f1)')).toBe('1000');
  });

  it('has the package command on the PATH: paia-sip2 simulator answers --help', async () => {
    expect(await exec('paia-sip2 simulator --help')).toMatch(/^usage: paia-sip2 simulator /);
  });

  it('runs with a read-only root: only the state volume takes writes', async () => {
    expect(await inspect('{{.HostConfig.ReadonlyRootfs}}')).toBe('true');
    await expect(exec('touch /app/written')).rejects.toThrow(/Read-only file system/);
    await expect(exec('touch /tmp/written')).rejects.toThrow(/Read-only file system/);
    await exec('touch /var/lib/paia-sip2/written && rm /var/lib/paia-sip2/written');
  });

  it("passes the image's HEALTHCHECK", async () => {
    await until(async () => (await inspect('{{.State.Health.Status}}')) === 'healthy', 'the container was not healthy');
    // Checks before the gateway listened may have failed (the start period allows for them); the last passed.
    expect(await inspect('{{range .State.Health.Log}}{{.ExitCode}} {{end}}')).toMatch(/(^| )0$/);
  });

  it('ends with exit code 0 on docker stop (SIGTERM)', async () => {
    const began = Date.now();
    await engine.docker(['stop', '--time', '10', name]);
    const seconds = (Date.now() - began) / 1000;
    // 0, not 137: the gateway ended on the SIGTERM tini passed it, before docker's SIGKILL after --time.
    expect(await inspect('{{.State.ExitCode}}')).toBe('0');
    console.log(`docker stop: exit code 0 after ${seconds.toFixed(2)} s`);
  });
});
