import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { findPackageRoot, PACKAGE_ROOT, packagePath } from '../../src/package-root.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url)).replace(/\/$/, '');

describe('package root', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paia-sip2-root-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is the repository root when run from the source tree, where config/ and the demo data are', () => {
    expect(PACKAGE_ROOT).toBe(REPO_ROOT);
    expect(existsSync(packagePath('config', 'default.yaml'))).toBe(true);
    expect(existsSync(packagePath('config', 'dialects', 'koha.yaml'))).toBe(true);
    expect(existsSync(packagePath('sip2-simulator', 'data', 'demo.json'))).toBe(true);
  });

  it('is found from a module in the build (dist/src/sip2/) as from one in the source tree (src/sip2/)', () => {
    writeFileSync(join(dir, 'package.json'), '{"name":"paia-sip2"}');
    for (const folder of ['dist/src/sip2', 'src/sip2', 'dist/sip2-simulator/src'])
      mkdirSync(join(dir, folder), { recursive: true });
    expect(findPackageRoot(join(dir, 'dist', 'src', 'sip2'))).toBe(dir);
    expect(findPackageRoot(join(dir, 'src', 'sip2'))).toBe(dir);
    expect(findPackageRoot(join(dir, 'dist', 'sip2-simulator', 'src'))).toBe(dir);
  });

  it('is the nearest folder with a package.json, not one further up', () => {
    const inner = join(dir, 'node_modules', 'paia-sip2');
    mkdirSync(join(inner, 'dist', 'src'), { recursive: true });
    writeFileSync(join(inner, 'package.json'), '{"name":"paia-sip2"}');
    expect(findPackageRoot(join(inner, 'dist', 'src'))).toBe(inner);
  });
});
