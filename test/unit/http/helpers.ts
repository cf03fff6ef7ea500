import type { Hono } from 'hono';
import type { ClientAllowlist } from '../../../src/auth/client-allowlist.js';
import { LoginService } from '../../../src/auth/login.js';
import { LoginThrottle, type LoginThrottleOptions } from '../../../src/auth/login-throttle.js';
import { DEFAULT_DENY_LIST, PasswordPolicy } from '../../../src/auth/password-policy.js';
import { PatronIds } from '../../../src/auth/patron-ids.js';
import { TokenRateLimit } from '../../../src/auth/token-rate-limit.js';
import type { DaiaService } from '../../../src/backend/daia/service.js';
import type {
  AccountState,
  Backend,
  CredentialCheck,
  DocumentRequest,
  FeeRecord,
  PaiaDocument,
  PatronLookup,
  PatronRecord,
} from '../../../src/backend/types.js';
import { type AppOptions, createApp } from '../../../src/http/app.js';
import { createLogger } from '../../../src/log.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { LruSessionStore } from '../../../src/state/memory/sessions.js';

export interface Call {
  method: keyof Backend;
  args: unknown[];
}

interface FakePatron {
  username: string;
  password: string;
  barcode: string;
  state: AccountState;
  record: PatronRecord;
  items: PaiaDocument[];
  fees: FeeRecord;
}

export const ITEM = (n: string) => `https://lib.example.org/item/${n}`;

/** An in-memory Backend that records every call; `failNext` makes the next call throw. */
export class FakeBackend implements Backend {
  readonly calls: Call[] = [];
  readonly patrons: FakePatron[] = [
    {
      username: 'alice',
      password: 'alice-pass',
      barcode: '1001',
      state: 0,
      record: { name: 'Alice Example', email: 'alice@example.org', expires: '2030-12-31', status: 0 },
      items: [
        {
          status: 3,
          item: ITEM('it-1'),
          about: 'A book',
          duedate: '2026-12-01',
          endtime: '2026-12-01',
          canrenew: true,
        },
        { status: 1, item: ITEM('it-2'), queue: 2, cancancel: true },
      ],
      fees: {
        amount: '2.50 EUR',
        fee: [{ amount: '2.50 EUR', about: 'overdue', item: ITEM('it-1'), date: '2026-11-01' }],
      },
    },
    {
      username: 'emile',
      password: 'émile-pass',
      barcode: '2002',
      state: 0,
      record: { name: 'Émile Zola', status: 0 },
      items: [{ status: 3, item: ITEM('it-3'), about: 'L’Assommoir – 😀' }],
      fees: { fee: [] },
    },
    {
      username: 'bob',
      password: 'bob-pass',
      barcode: '3003',
      state: 2,
      record: { name: 'Bob Expired', expires: '2020-01-01', status: 2 },
      items: [],
      fees: { fee: [] },
    },
  ];
  /** Thrown (or rejected with) by the next backend call. */
  failNext: unknown = undefined;
  /** Whether the failure is thrown synchronously instead of a rejected promise. */
  failSynchronously = false;
  /** Patron lookups return null (account deleted in the ILS meanwhile). */
  patronGone = false;

  #call<T>(method: keyof Backend, args: unknown[], result: () => T): Promise<T> {
    this.calls.push({ method, args });
    if (this.failNext !== undefined) {
      const failure = this.failNext;
      this.failNext = undefined;
      if (this.failSynchronously) throw failure;
      return Promise.reject(failure);
    }
    return Promise.resolve(result());
  }

  #byBarcode(barcode: string): FakePatron | undefined {
    return this.patrons.find((p) => p.barcode === barcode);
  }

  callsOf(method: keyof Backend): Call[] {
    return this.calls.filter((call) => call.method === method);
  }

  login(username: string, password: string): Promise<CredentialCheck> {
    return this.#call('login', [username, password], () => {
      const patron = this.patrons.find((p) => p.username === username && p.password === password);
      return patron ? { ok: true, barcode: patron.barcode, state: patron.state } : { ok: false };
    });
  }
  lookupPatron(identifier: string): Promise<PatronLookup | null> {
    return this.#call('lookupPatron', [identifier], () => {
      const patron = this.patrons.find((p) => p.username === identifier || p.barcode === identifier);
      return patron ? { barcode: patron.barcode, state: patron.state } : null;
    });
  }
  patron(barcode: string): Promise<PatronRecord | null> {
    return this.#call('patron', [barcode], () => (this.patronGone ? null : (this.#byBarcode(barcode)?.record ?? null)));
  }
  items(barcode: string): Promise<PaiaDocument[]> {
    return this.#call('items', [barcode], () => this.#byBarcode(barcode)?.items ?? []);
  }
  renew(barcode: string, docs: DocumentRequest[]): Promise<PaiaDocument[]> {
    return this.#call('renew', [barcode, docs], () =>
      docs.map((d) =>
        d.item === ITEM('it-1')
          ? { status: 3 as const, item: d.item, duedate: '2027-01-01', endtime: '2027-01-01' }
          : {
              status: 0 as const,
              ...(d.item ? { item: d.item } : {}),
              ...(d.edition ? { edition: d.edition } : {}),
              error: 'unknown document',
            },
      ),
    );
  }
  request(barcode: string, docs: DocumentRequest[]): Promise<PaiaDocument[]> {
    return this.#call('request', [barcode, docs], () => docs.map((d) => ({ status: 1 as const, ...d })));
  }
  cancel(barcode: string, docs: DocumentRequest[]): Promise<PaiaDocument[]> {
    return this.#call('cancel', [barcode, docs], () => docs.map((d) => ({ status: 0 as const, ...d })));
  }
  fees(barcode: string): Promise<FeeRecord> {
    return this.#call('fees', [barcode], () => this.#byBarcode(barcode)?.fees ?? { fee: [] });
  }
  logout(barcode: string): Promise<void> {
    return this.#call('logout', [barcode], () => undefined);
  }
}

export interface TestApp {
  app: Hono;
  backend: FakeBackend;
  sessions: LruSessionStore;
  /** Parsed pino lines so far. */
  logs: () => Array<Record<string, unknown>>;
  /** Raw log output, to check secrets never appear. */
  rawLog: () => string;
  base: string;
}

/** What the login service is built from (the gateway builds it from auth.* settings). */
interface LoginOverrides {
  patronIds?: PatronIds;
  throttle?: LoginThrottleOptions;
  loginThrottle?: LoginThrottle;
  passwordPolicy?: PasswordPolicy;
  allowedClients?: ClientAllowlist;
  tokenLifetimeMs?: number;
  /** Requests per minute per token (auth.requestsPerMinute); default 120. */
  requestsPerMinute?: number;
}

export function makeApp(overrides: Partial<AppOptions> & LoginOverrides = {}): TestApp {
  const backend = (overrides.backend as FakeBackend | undefined) ?? new FakeBackend();
  const sessions = (overrides.sessions as LruSessionStore | undefined) ?? new LruSessionStore({ maxSessions: 100 });
  const chunks: string[] = [];
  // pino writes each line synchronously to any object with write()
  const logger = createLogger({ level: 'debug', destination: { write: (line: string) => void chunks.push(line) } });
  const {
    patronIds,
    throttle,
    loginThrottle,
    passwordPolicy,
    allowedClients,
    tokenLifetimeMs,
    requestsPerMinute,
    ...rest
  } = overrides;
  const login = new LoginService({
    backend,
    sessions,
    patronIds: patronIds ?? new PatronIds('barcode'),
    throttle:
      loginThrottle ??
      new LoginThrottle(new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 }), {
        maxAttemptsPerSecond: 10_000,
        ...(throttle ?? { freeAttemptsPerUser: 1000, freeAttemptsPerAddress: 1000 }),
      }),
    passwordPolicy: passwordPolicy ?? new PasswordPolicy({ minLength: 4, denyList: DEFAULT_DENY_LIST }),
    allowedClients,
    tokenLifetimeMs: tokenLifetimeMs ?? 3_600_000,
  });
  const app = createApp({
    backend,
    sessions,
    login,
    basePath: '',
    maxDocs: 5,
    maxBodyBytes: 2048,
    logger,
    rateLimit: new TokenRateLimit(
      new MemoryStore({ maxSessions: 10, maxSessionsPerPatron: 10 }),
      requestsPerMinute ?? 120,
    ),
    ...rest,
  });
  return {
    app,
    backend,
    sessions,
    base: overrides.basePath ?? '',
    logs: () =>
      chunks
        .join('')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    rawLog: () => chunks.join(''),
  };
}

export function jsonPost(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  };
}

/** Logs in and returns the token and patron id; fails the test on anything but 200. */
export async function login(
  t: TestApp,
  username = 'alice',
  password = 'alice-pass',
  scope?: string,
): Promise<{ token: string; patron: string; scope: string; response: Response }> {
  const response = await t.app.request(
    `${t.base}/auth/login`,
    jsonPost({ username, password, grant_type: 'password', ...(scope !== undefined ? { scope } : {}) }),
  );
  if (response.status !== 200) throw new Error(`login failed: ${response.status} ${await response.text()}`);
  const body = (await response.clone().json()) as { access_token: string; patron: string; scope: string };
  return { token: body.access_token, patron: body.patron, scope: body.scope, response };
}

export function bearer(token: string, extra: Record<string, string> = {}): Record<string, string> {
  return { Authorization: `Bearer ${token}`, ...extra };
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

/** The app's DAIA option with a service that answers without an ILS (the routes call only availability()). */
export function fakeDaia(maxIds?: number): NonNullable<AppOptions['daia']> {
  const service = {
    availability: (ids: string[]) =>
      Promise.resolve({
        version: '1.0.0',
        timestamp: '2026-01-01T00:00:00Z',
        document: ids.map((id) => ({ id, item: [] })),
      }),
  } as unknown as DaiaService;
  return maxIds === undefined ? { service } : { service, maxIds };
}
