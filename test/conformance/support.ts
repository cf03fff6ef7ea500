/**
 * Shared plumbing of the conformance suite: one SIP2 simulator process and
 * one gateway process per dialect (describe block), an HTTP client that keeps
 * the raw bytes, and the assertions every request error must pass.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';
import { type SimulatorProcess, type SimulatorProcessOptions, startSimulatorProcess } from '../helpers/simulator.js';
import { OpenApiChecker } from './openapi-check.js';
import { errorBodyProblems, isObject } from './shapes.js';

/** The dialects the suite runs against (folio has no expiry date, so it is left to the backend tests). */
export const DIALECTS = ['generic', 'koha', 'evergreen'] as const;
export type Dialect = (typeof DIALECTS)[number];
/** Every shipped dialect, folio too: for the client-contract tests that must hold in each (discovery-paia.test.ts). */
export const SHIPPED_DIALECTS = [...DIALECTS, 'folio'] as const;
export type ShippedDialect = (typeof SHIPPED_DIALECTS)[number];

const ITEM_TEMPLATE = 'https://lib.example.org/item/{barcode}';
const EDITION_TEMPLATE = 'https://lib.example.org/title/{title}';
const STORAGE_TEMPLATE = 'https://lib.example.org/location/{location}';
export const item = (barcode: string): string => `https://lib.example.org/item/${barcode}`;
export const edition = (titleId: string): string => `https://lib.example.org/title/${titleId}`;

/** The four core scopes a login grants by default. */
export const CORE_SCOPES = ['read_patron', 'read_fees', 'read_items', 'write_items'] as const;

export const PASSWORDS: Readonly<Record<string, string>> = {
  alice: 'alice-pass',
  bob: 'bob-pass',
  carol: 'carol-pass',
  dave: 'dave-pass',
  emile: 'emile-pass',
  frank: 'frank-pass',
  gina: 'gina-pass',
};

/** Settings every conformance gateway gets (URIs as a real library would configure them). */
export const BASE_ENV: Readonly<Record<string, string>> = {
  PAIA_PAIA_ITEM_URI: ITEM_TEMPLATE,
  PAIA_PAIA_EDITION_URI: EDITION_TEMPLATE,
  PAIA_PAIA_STORAGE_URI: STORAGE_TEMPLATE,
  // The suite logs in far faster than patrons do; the global login ceiling
  // (auth.maxLoginsPerSecond, default 20) is tested in test/integration/abuse.test.ts.
  PAIA_AUTH_MAX_LOGINS_PER_SECOND: '1000',
  // The spec is checked as the gateway ships: with its item cache and account window on (the process helper turns them off,
  // for tests that count what reaches the ILS; those that use this fixture turn it off themselves).
  PAIA_CACHE_ITEMS_ENABLED: 'true',
  PAIA_CACHE_ACCOUNTS_ENABLED: 'true',
};

/** Today's date where gateway and simulator run (the library's local time). */
export function today(): string {
  const d = new Date();
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

// ------------------------------------------------------------ HTTP

export interface Reply {
  status: number;
  headers: Headers;
  /** The body bytes as received. */
  bytes: Buffer;
  /** The body decoded with the charset of its Content-Type (UTF-8 when none). */
  text: string;
  /** The JSON value of the body (of the JSONP argument for JSONP); undefined when it does not parse. */
  json: unknown;
  /** json as an object (empty when it is not one): for reading fields in tests. */
  body: Record<string, unknown>;
  /** The request, for failure messages. */
  request: string;
}

export interface CallOptions {
  /** Access token; sent as Authorization: Bearer unless tokenIn is 'query'. */
  token?: string;
  tokenIn?: 'header' | 'query';
  headers?: Record<string, string>;
  query?: Record<string, string>;
  /** A JSON body (Content-Type application/json unless headers say otherwise). */
  json?: unknown;
  /** A form body (application/x-www-form-urlencoded). */
  form?: Record<string, string>;
  /** A raw body; set Content-Type yourself. */
  raw?: string | Buffer;
}

/** The charset parameter of a Content-Type, lower case. */
export function charsetOf(contentType: string | null): string | undefined {
  return /;\s*charset="?([^";\s]+)"?/i.exec(contentType ?? '')?.[1]?.toLowerCase();
}

function decode(bytes: Buffer, contentType: string | null): string {
  const charset = charsetOf(contentType);
  return bytes.toString(charset === 'iso-8859-1' || charset === 'latin1' ? 'latin1' : 'utf8');
}

/** The argument of a JSONP call `name(...)` (optionally preceded by a comment, followed by `;`). */
export function jsonpArgument(text: string, name: string): string | undefined {
  const trimmed = text.trim().replace(/^\/\*\*\/\s*/, '');
  if (!trimmed.startsWith(`${name}(`)) return undefined;
  const end = trimmed.replace(/;\s*$/, '');
  if (!end.endsWith(')')) return undefined;
  return end.slice(name.length + 1, -1);
}

export class Client {
  /** The gateway's /openapi.json, fetched on first use: every reply is checked against it. */
  private openApi: Promise<OpenApiChecker> | undefined;

  constructor(readonly base: string) {}

  private checker(): Promise<OpenApiChecker> {
    this.openApi ??= (async () => {
      // X-Forwarded-Proto: the document must be readable from gateways that require it too.
      const response = await fetch(new URL('/openapi.json', this.base), { headers: { 'X-Forwarded-Proto': 'https' } });
      if (response.status !== 200) throw new Error(`GET /openapi.json answered ${response.status}`);
      return new OpenApiChecker((await response.json()) as Record<string, unknown>);
    })();
    return this.openApi;
  }

  async call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const url = new URL(path, this.base);
    for (const [name, value] of Object.entries(options.query ?? {})) url.searchParams.append(name, value);
    const headers = new Headers(options.headers ?? {});
    if (options.token !== undefined) {
      if (options.tokenIn === 'query') url.searchParams.set('access_token', options.token);
      else headers.set('Authorization', `Bearer ${options.token}`);
    }
    let body: string | Buffer | undefined;
    if (options.json !== undefined) {
      body = JSON.stringify(options.json);
      if (!headers.has('content-type')) headers.set('Content-Type', 'application/json');
    } else if (options.form !== undefined) {
      body = new URLSearchParams(options.form).toString();
      if (!headers.has('content-type')) headers.set('Content-Type', 'application/x-www-form-urlencoded');
    } else if (options.raw !== undefined) {
      body = options.raw;
    }
    const response = await fetch(url, {
      method,
      headers,
      body: body as string | Uint8Array | undefined,
      redirect: 'manual',
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const contentType = response.headers.get('content-type');
    const text = decode(bytes, contentType);
    const callback = url.searchParams.get('callback');
    const jsonText = callback !== null && /javascript/i.test(contentType ?? '') ? jsonpArgument(text, callback) : text;
    let json: unknown;
    try {
      json = jsonText === undefined ? undefined : (JSON.parse(jsonText) as unknown);
    } catch {
      json = undefined;
    }
    const problems = (await this.checker()).problems({ method, url, status: response.status, contentType, json });
    if (problems.length > 0) {
      throw new Error(
        `${method} ${url.pathname}${url.search} -> ${response.status} does not match /openapi.json:\n${problems.join('\n')}\n${text.slice(0, 500)}`,
      );
    }
    return {
      status: response.status,
      headers: response.headers,
      bytes,
      text,
      json,
      body: isObject(json) ? json : {},
      request: `${method} ${url.pathname}${url.search}`,
    };
  }

  get(path: string, options: CallOptions = {}): Promise<Reply> {
    return this.call('GET', path, options);
  }

  post(path: string, json: unknown, options: CallOptions = {}): Promise<Reply> {
    return this.call('POST', path, { ...options, json });
  }

  /** POST /auth/login with a JSON body; the raw reply. */
  loginReply(username: string, password: string, scope?: string, options: CallOptions = {}): Promise<Reply> {
    const body: Record<string, string> = { username, password, grant_type: 'password' };
    if (scope !== undefined) body.scope = scope;
    return this.post('/auth/login', body, options);
  }

  /** Logs in (password from the demo data unless given) and returns the token; fails the test if login fails. */
  async login(username: string, options: { password?: string; scope?: string } = {}): Promise<Session> {
    const password = options.password ?? PASSWORDS[username] ?? '';
    const reply = await this.loginReply(username, password, options.scope);
    if (reply.status !== 200 || typeof reply.body.access_token !== 'string') {
      throw new Error(`login as ${username} failed: ${reply.status} ${reply.text}`);
    }
    return {
      token: reply.body.access_token,
      patron: String(reply.body.patron),
      scopes: String(reply.body.scope).split(' ').filter(Boolean),
      reply,
    };
  }
}

export interface Session {
  token: string;
  patron: string;
  scopes: string[];
  reply: Reply;
}

// ------------------------------------------------------------ processes

export interface Fixture {
  readonly dialect: ShippedDialect;
  readonly sim: SimulatorProcess;
  readonly gateway: GatewayProcess;
  readonly client: Client;
  /** The further gateways asked for in useFixture (same simulator, own settings), in order. */
  readonly extras: ReadonlyArray<{ gateway: GatewayProcess; client: Client }>;
  /** Starts one more gateway against the same simulator (stopped in afterAll). */
  extraGateway(env: Record<string, string>): Promise<{ gateway: GatewayProcess; client: Client }>;
  /** Executed count of a SIP2 message code on the simulator ("29" renew, "15" hold). */
  executed(code: string): Promise<number>;
}

/**
 * One simulator and one gateway for the enclosing describe block (plus one
 * more gateway per entry of `extras`, started alongside), started in
 * beforeAll and stopped in afterAll; the getter is valid inside tests.
 * `simulator` adds options of the simulator process (a profile ...).
 */
export function useFixture(
  dialect: ShippedDialect,
  env: Record<string, string> = {},
  extras: Array<Record<string, string>> = [],
  simulator: Omit<SimulatorProcessOptions, 'dialect'> = {},
): () => Fixture {
  let fixture: Fixture | undefined;
  const started: GatewayProcess[] = [];
  let sim: SimulatorProcess | undefined;

  beforeAll(async () => {
    sim = await startSimulatorProcess({
      ...simulator,
      dialect,
      extraArgs: ['--log-level', 'warn', ...(simulator.extraArgs ?? [])],
    });
    const s = sim;
    const start = async (settings: Record<string, string>) => {
      const g = await startGatewayProcess({ sip2Port: s.port, dialect, env: { ...BASE_ENV, ...settings } });
      started.push(g);
      return { gateway: g, client: new Client(g.url) };
    };
    const [main, ...more] = await Promise.all([start(env), ...extras.map(start)]);
    fixture = {
      dialect,
      sim: s,
      gateway: main!.gateway,
      client: main!.client,
      extras: more,
      extraGateway: start,
      async executed(code) {
        return (await s.counters()).executed[code] ?? 0;
      },
    };
  });

  afterAll(async () => {
    await Promise.all(started.map((g) => g.stop()));
    await sim?.stop();
  });

  return () => {
    if (!fixture) throw new Error('the fixture is not started (used outside a test?)');
    return fixture;
  };
}

// ------------------------------------------------------------ assertions

const JSON_TYPE = /^application\/json\s*;\s*charset="?(utf-8|iso-8859-1)"?$/i;

/** Content-Type application/json with a charset parameter (UTF-8 or ISO-8859-1). */
export function expectJsonContentType(reply: Reply): void {
  expect(reply.headers.get('content-type'), `${reply.request}: Content-Type`).toMatch(JSON_TYPE);
}

/** A 200 with a JSON object body. */
export function expectOk(reply: Reply): Record<string, unknown> {
  expect(reply.status, `${reply.request} -> ${reply.status} ${reply.text.slice(0, 300)}`).toBe(200);
  expectJsonContentType(reply);
  expect(isObject(reply.json), `${reply.request}: body must be a JSON object`).toBe(true);
  return reply.body;
}

export interface ExpectedError {
  status: number;
  error: string;
  api?: 'core' | 'auth';
  /** suppress_response_codes was given: HTTP status 200, error status in the body. */
  suppressed?: boolean;
}

/**
 * A request error: HTTP status (200 with suppress_response_codes), a JSON
 * error body {error, code?, error_description?} (code in core only, equal to
 * the status), Content-Type with charset, and WWW-Authenticate with scheme
 * Bearer (spec, Authentication 10).
 */
export function expectRequestError(reply: Reply, expected: ExpectedError): void {
  const api = expected.api ?? 'core';
  const what = `${reply.request} -> ${reply.status} ${reply.text.slice(0, 300)}`;
  expect(reply.status, what).toBe(expected.suppressed ? 200 : expected.status);
  expect(reply.body.error, what).toBe(expected.error);
  expect(
    errorBodyProblems(reply.json, { api, status: expected.status, suppressed: expected.suppressed ?? false }),
    what,
  ).toEqual([]);
  expect(reply.headers.get('www-authenticate') ?? '', `${what}: WWW-Authenticate`).toMatch(/^Bearer(?:\s|$)/);
  expect(reply.headers.get('content-type'), `${what}: Content-Type`).toMatch(
    /^application\/(json|javascript)\s*;\s*charset=/i,
  );
}

/** The scopes of a space-separated header or field, sorted. */
export function scopeSet(value: string | null | undefined): string[] {
  return (value ?? '').split(/\s+/).filter(Boolean).sort();
}
