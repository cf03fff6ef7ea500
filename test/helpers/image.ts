import { cpSync, mkdirSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The container image without a Docker engine: the Dockerfile's runtime stage
 * read line by line (its WORKDIR, COPY lines, ENV, VOLUME, HEALTHCHECK and CMD), and a
 * directory laid out as those COPY lines lay out the image, from the
 * repository and its build (dist/). node_modules is a link to the
 * repository's (the image runs `npm ci --omit=dev`; that the compiled code
 * needs no other package is checked apart).
 */

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Copy {
  /** 'build': from the build stage; 'context': from the build context (the repository). */
  from: 'build' | 'context';
  sources: string[];
  dest: string;
}

export interface ImageSpec {
  /** WORKDIR of the runtime stage, e.g. /app. */
  workdir: string;
  copies: Copy[];
  /** ENV of the runtime stage. */
  env: Record<string, string>;
  /** VOLUME paths of the runtime stage: where the running image writes. */
  volumes: string[];
  /** The HEALTHCHECK's command (exec form). */
  healthcheck: string[];
  /** The CMD (exec form). */
  cmd: string[];
}

/** Instructions of a Dockerfile: continuation lines joined, comments and blank lines dropped. */
function instructions(text: string): string[] {
  return text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

function execForm(text: string, where: string): string[] {
  const parsed = JSON.parse(text) as unknown;
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
    throw new Error(`Dockerfile: ${where} is not in exec form (a JSON list of strings)`);
  return parsed as string[];
}

/** Reads the Dockerfile's last stage; throws on an instruction it does not understand. */
export function readDockerfile(path = join(REPO_ROOT, 'Dockerfile')): ImageSpec {
  const lines = instructions(readFileSync(path, 'utf8'));
  const stages = lines.flatMap((line, index) => (/^FROM\s/i.test(line) ? [index] : []));
  const buildWorkdir = lines
    .slice(stages[0], stages[1])
    .find((line) => /^WORKDIR\s/i.test(line))
    ?.split(/\s+/)[1];
  const spec: ImageSpec = { workdir: '/', copies: [], env: {}, volumes: [], healthcheck: [], cmd: [] };
  for (const line of lines.slice(stages.at(-1)! + 1)) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = line.slice(keyword.length).trim();
    switch (keyword.toUpperCase()) {
      case 'WORKDIR':
        spec.workdir = args;
        break;
      case 'COPY': {
        const from = rest[0]?.startsWith('--from=') ? rest.shift()!.slice('--from='.length) : null;
        const paths = rest.filter((part) => !part.startsWith('--'));
        const dest = paths.pop()!;
        const sources = paths.map((source) => {
          if (from === null) return source;
          if (buildWorkdir === undefined || !source.startsWith(`${buildWorkdir}/`))
            throw new Error(`Dockerfile: COPY --from=${from} ${source} is outside the build stage's WORKDIR`);
          return source.slice(buildWorkdir.length + 1);
        });
        spec.copies.push({ from: from === null ? 'context' : 'build', sources, dest });
        break;
      }
      case 'ENV':
        for (const match of args.matchAll(/(\w+)=(\S+)/g)) spec.env[match[1]!] = match[2]!;
        break;
      case 'HEALTHCHECK':
        spec.healthcheck = execForm(args.slice(args.indexOf(' CMD ') + ' CMD '.length), 'HEALTHCHECK CMD');
        break;
      case 'CMD':
        spec.cmd = execForm(args, 'CMD');
        break;
      case 'VOLUME':
        spec.volumes.push(...execForm(args, 'VOLUME'));
        break;
      case 'RUN':
      case 'USER':
      case 'EXPOSE':
      case 'ENTRYPOINT':
        break;
      default:
        throw new Error(`Dockerfile: the image test does not know ${keyword}`);
    }
  }
  return spec;
}

/** Copies what the runtime stage's COPY lines copy into `dir` (the image's WORKDIR), and links node_modules. */
export function layOutImage(spec: ImageSpec, dir: string): void {
  for (const { sources, dest } of spec.copies) {
    const target = join(dir, posix.relative(spec.workdir, posix.resolve(spec.workdir, dest)));
    const intoFolder = dest.endsWith('/') || sources.length > 1;
    for (const source of sources) {
      const to = intoFolder ? join(target, posix.basename(source)) : target;
      mkdirSync(join(to, '..'), { recursive: true });
      cpSync(join(REPO_ROOT, source), to, { recursive: true });
    }
  }
  symlinkSync(realpathSync(join(REPO_ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir');
}
