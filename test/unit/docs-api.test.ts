import { readFileSync } from 'node:fs';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { allowedScopes, formatScopes, METHOD_SCOPE, SCOPES } from '../../src/auth/scopes.js';
import { notFound, PAIA_ERROR_CODES } from '../../src/http/errors.js';
import { paiaFormatStep } from '../../src/http/middleware/paia-format/index.js';
import { requestFrame } from '../../src/http/middleware/request-steps/index.js';
import { respondError } from '../../src/http/respond.js';
import { ALLOWED_REQUEST_HEADERS } from '../../src/http/routes/mount.js';
import { rows, section as sectionOf } from '../helpers/markdown.js';

/** docs/api.md is written for client developers; these checks keep its tables in step with the code. */
const root = new URL('../../', import.meta.url);
const doc = readFileSync(new URL('docs/api.md', root), 'utf8');
const source = (path: string) => readFileSync(new URL(path, root), 'utf8');

/** The text of the section whose heading starts with `title`. */
const section = (title: string) => sectionOf(doc, title, 'docs/api.md');

/** Table rows whose first cell is a number: the status tables. */
function numberedRows(text: string): Map<number, string[]> {
  const found = new Map<number, string[]>();
  for (const cells of rows(text)) {
    if (/^\d+$/.test(cells[0] ?? '')) found.set(Number(cells[0]), cells);
  }
  return found;
}

/** Every (error, HTTP status) pair in the errors tables: first cell `code`, second the status. */
function documentedErrors(): Set<string> {
  const pairs = new Set<string>();
  for (const cells of rows(section('Errors'))) {
    const error = /^`(\w+)`$/.exec(cells[0] ?? '')?.[1];
    if (error !== undefined && /^\d{3}$/.test(cells[1] ?? '')) pairs.add(`${error} ${cells[1]}`);
  }
  return pairs;
}

/** Every (error, HTTP status) pair the code can answer with, read from where errors are made. */
function producedErrors(): Set<string> {
  const pairs = new Set<string>();
  const errors = source('src/http/errors.ts');
  for (const match of errors.matchAll(/new PaiaError\(\s*'(\w+)',\s*(\d{3})/g)) pairs.add(`${match[1]} ${match[2]}`);
  const limits = source('src/gateway/connection-limits.ts');
  for (const match of limits.matchAll(/\[(\d{3}), '[^']*', '(\w+)'/g)) pairs.add(`${match[2]} ${match[1]}`);
  for (const match of limits.matchAll(/error: '(\w+)',\s*code: (\d{3})/g)) pairs.add(`${match[1]} ${match[2]}`);
  return pairs;
}

describe('docs/api.md', () => {
  it('gives every method of METHOD_SCOPE the scope the code checks, and no method the code lacks', () => {
    const table = new Map(rows(section('Scopes per method')).map((cells) => [cells[0], cells[1] ?? '']));
    for (const [method, scope] of Object.entries(METHOD_SCOPE)) {
      const cell = table.get(method);
      expect(cell, `no row for ${method}`).toBeDefined();
      if (scope === null) expect(cell).toMatch(/^none\b/);
      else expect(cell).toMatch(new RegExp(`^\`${scope}\``));
    }
    const methods = [...table.keys()].filter((name) => name !== 'method');
    expect(methods.sort()).toEqual(Object.keys(METHOD_SCOPE).sort());
  });

  it('names every scope of SCOPES', () => {
    for (const scope of SCOPES) expect(doc).toContain(`\`${scope}\``);
  });

  it('describes exactly the account states 0-4, each with the scopes allowedScopes grants at login', () => {
    const states = numberedRows(section('Account state'));
    expect([...states.keys()].sort()).toEqual([0, 1, 2, 3, 4]);
    for (const [state, cells] of states) {
      expect(cells.at(-1), `scopes of account state ${state}`).toBe(`\`${formatScopes(allowedScopes(state))}\``);
      expect(cells[2], `SIP2 source of account state ${state}`).not.toBe('');
    }
  });

  it('describes exactly the service statuses 0-5, each with its items and write sources', () => {
    const statuses = numberedRows(section('Service status'));
    expect([...statuses.keys()].sort()).toEqual([0, 1, 2, 3, 4, 5]);
    for (const [status, cells] of statuses) {
      expect(cells, `row of status ${status}`).toHaveLength(4);
      for (const cell of cells) expect(cell, `cell of status ${status}`).not.toBe('');
    }
  });

  it('has an errors row for every error code and HTTP status the code produces, and none it does not', () => {
    const produced = producedErrors();
    // The reading above must keep finding the errors: a renamed constructor would otherwise empty both sides.
    expect(produced.size).toBeGreaterThanOrEqual(12);
    expect([...documentedErrors()].sort()).toEqual([...produced].sort());
  });

  it('lists every PaiaErrorCode of src/http/errors.ts', () => {
    const codes = [...PAIA_ERROR_CODES];
    expect(codes.length).toBeGreaterThanOrEqual(10);
    const documented = new Set([...documentedErrors()].map((pair) => pair.split(' ')[0]));
    for (const code of codes) expect(documented, code).toContain(code);
  });

  it('says auth errors never carry code and core errors do, as respondError renders them', async () => {
    const app = new Hono();
    app.use(requestFrame([paiaFormatStep({ authPrefix: '/auth' })], (error) => Promise.reject(error)));
    app.all('*', (c) => respondError(c, notFound('x'), { realm: 'PAIA' }));
    const auth = (await (await app.request('/auth/nothing')).json()) as Record<string, unknown>;
    const coreResponse = await app.request('/core/nothing?suppress_response_codes');
    const core = (await coreResponse.json()) as Record<string, unknown>;
    expect(auth).not.toHaveProperty('code');
    expect(core).toHaveProperty('code', 404);
    expect(section('Errors')).toContain('**never** carry `code`');

    // The CORS tables name the headers the renderer actually sends.
    expect(section('CORS')).toContain(`\`${coreResponse.headers.get('access-control-expose-headers')}\``);
    expect(section('CORS')).toContain(`\`${ALLOWED_REQUEST_HEADERS}\``);
  });

  it('links the PAIA and DAIA specifications', () => {
    expect(doc).toContain('https://gbv.github.io/paia/');
    expect(doc).toContain('https://gbv.github.io/daia/');
  });
});
