import { isIP } from 'node:net';
import { z } from 'zod';
import { clientRuleProblem } from '../auth/client-allowlist.js';
import { secretHashProblem } from '../auth/client-secret.js';
import { LOGIN_THROTTLE_DEFAULTS } from '../auth/login-throttle.js';
import { DEFAULT_PASSWORD_POLICY } from '../auth/password-policy.js';
import { MIN_PATRON_ID_SECRET_LENGTH, PATRON_ID_MODES } from '../auth/patron-ids.js';
import { DEFAULT_LOGIN_SCOPES } from '../auth/scopes.js';
import { ACCOUNT_WINDOW_DEFAULTS } from '../backend/account-window.js';
import { fieldPathProblem } from '../backend/daia/records/field-path.js';
import { DEFAULT_FILE_CHECK_SECONDS } from '../backend/daia/records/file-source.js';
import { HTTP_LOOKUP_DEFAULTS } from '../backend/daia/records/http-source.js';
import { DEFAULT_MAX_ITEMS_PER_RECORD } from '../backend/daia/records/mapping.js';
import { requestLinkProblem } from '../backend/daia/request-link.js';
import { APP_DEFAULTS, DEFAULT_CORS_ORIGINS } from '../http/defaults.js';
import {
  CHARSETS,
  DEFAULT_CIRCUIT_OPTIONS,
  DEFAULT_MAX_LIST_ENTRIES,
  type DialectName,
  isIsoDate,
  isTimeZone,
  MAX_FIELD_LENGTH,
  minutesOf,
  POOL_DEFAULTS,
  WEEKDAYS,
} from '../sip2/index.js';

/**
 * The configuration schema: every setting a sysadmin can make, its default,
 * and what it must look like. Messages are written for the person editing the
 * YAML file: each says what the value must be (the loader appends what it got
 * and where from, and hides secrets). Keys are camelCase in YAML as here; every
 * setting can also be set by an environment variable named after its path
 * (`sip2.pool.acquireTimeoutMs` -> `PAIA_SIP2_POOL_ACQUIRE_TIMEOUT_MS`), listed
 * with how its text is read in settings.ts. Where a component has a default of
 * its own, the setting's default is taken from the component.
 */

// ------------------------------------------------------------------ names

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const LOG_FORMATS = ['json', 'pretty'] as const;
const DEMO_DIALECTS = ['generic', 'koha', 'evergreen', 'folio'] as const satisfies readonly DialectName[];

/** Most worker processes (http.workers): far beyond the cores of any host the gateway runs on. */
const MAX_WORKERS = 64;

/** What the secret settings must not be left at: the placeholder in config/example.yaml. */
const PLACEHOLDER_SECRET = /change[-_ ]?me/i;

// ----------------------------------------------------------------- helpers

/**
 * Default of the settings that only the demo gives a value (sip2.terminal.*,
 * sip2.institution): not set, but kept in the output as undefined so that the
 * section keeps the order of its keys. zod types a default as defined; the
 * transform at the end of configSchema reads these as `string | undefined`.
 */
const UNSET = undefined as never;

const must = (text: string) => ({ error: text });

function integer(min: number, max: number, mustBe: string) {
  const e = must(mustBe);
  return z.number(e).int(e).min(min, e).max(max, e);
}

const port = (mustBe = 'must be a TCP port between 1 and 65535') => integer(1, 65535, mustBe);
const flag = () => z.boolean(must('must be true or false'));

/** A section of settings: strict (unknown keys are errors), and an empty section (`http:` alone) means all defaults. */
function section<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.preprocess(
    (value) => value ?? {},
    z.strictObject(shape, must('must be a section of settings (indented "key: value" lines)')),
  );
}

/** A SIP2 field value: at most 255 characters, none of the separators SIP2 frames with. */
function sipText(mustBe: string, options: { allowEmpty: boolean }) {
  const base = z
    .string(must(mustBe))
    .max(MAX_FIELD_LENGTH, must(`${mustBe}, at most ${MAX_FIELD_LENGTH} characters long`));
  return (options.allowEmpty ? base : base.min(1, must(mustBe))).refine((value) => !/[|\r\n\0]/.test(value), {
    error: `${mustBe}, without "|", line breaks or NUL characters (SIP2 uses them as separators)`,
  });
}

/** A list of strings; a string (a one-line list in YAML, or a PAIA_* variable) is split at commas, the entries trimmed. */
function textList(entryMustBe: string, listMustBe: string) {
  return z.preprocess(
    (value) =>
      typeof value === 'string'
        ? value
            .split(',')
            .map((entry) => entry.trim())
            .filter((entry) => entry !== '')
        : value,
    z.array(z.string(must(entryMustBe)), must(listMustBe)),
  );
}

/** IP addresses and CIDR blocks (IPv4 or IPv6); comma-separated in the environment. Each bad entry is named. */
function clientList() {
  const mustBe =
    'must be a list of IP addresses or CIDR blocks, e.g. ["10.0.0.0/8", "2001:db8::/32"], or [] for any client';
  return textList('must be a list of IP addresses or CIDR blocks (strings)', mustBe).superRefine((entries, ctx) => {
    for (const entry of entries) {
      const problem = clientRuleProblem(entry);
      if (problem !== null)
        ctx.addIssue({ code: 'custom', message: `has ${JSON.stringify(entry.slice(0, 80))}, which ${problem}` });
    }
  });
}

/** Why a CORS origin entry is wrong, or null when it is an absolute http(s) origin (scheme://host[:port], no path). */
function originProblem(value: string): string | null {
  const example = 'e.g. "https://opac.lib.example.org" or "http://localhost:3000"';
  const url = /^https?:\/\/[^/?#\s]+\/?$/i.test(value) && URL.canParse(value) ? new URL(value) : null;
  if (url === null) {
    if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return `is not an origin: give the scheme and host, ${example}`;
    if (!/^https?:/i.test(value)) return `is not an http(s) origin: ${example}`;
    return `is not an origin: give scheme://host[:port] without a path, query or fragment, ${example}`;
  }
  if (url.username !== '' || url.password !== '') return `must not contain a user name or password: ${example}`;
  return null;
}

const HOST_NAME =
  /^(?=.{1,253}\.?$)[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/;

/** Why a host setting is wrong, or null when it is a host name or an IP address. */
function hostProblem(value: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(value))
    return 'give the host name alone, without a scheme like "tcp://" or "https://"';
  if (/^[^:[\]]+:\d+$/.test(value) || /^\[[^\]]+\]:\d+$/.test(value))
    return 'give the host name alone and the port in its own setting';
  const bare = value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value;
  if (isIP(bare) !== 0 || HOST_NAME.test(value)) return null;
  return 'is not a valid host name or IP address';
}

function host(mustBe: string) {
  return z.string(must(mustBe)).superRefine((value, ctx) => {
    const problem = hostProblem(value);
    if (problem) ctx.addIssue({ code: 'custom', message: `${mustBe}: ${problem}` });
  });
}

/** Loopback addresses, where plain HTTP is allowed without a proxy. */
function isLoopback(hostName: string): boolean {
  const bare = hostName.replace(/^\[|\]$/g, '').toLowerCase();
  return (
    bare === 'localhost' ||
    bare === '::1' ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare) ||
    bare === '::ffff:127.0.0.1'
  );
}

const EXAMPLE_VALUES: Record<string, string> = {
  barcode: '0123456789',
  title: 'Some%20Title',
  location: 'MAIN',
  class: 'adult',
  record: '12345',
};

/** A URI with a scheme that parses, without spaces, quotes or angle brackets. */
function absoluteUri(value: string): boolean {
  return /^[a-z][a-z0-9+.-]*:/i.test(value) && !/[\s<>"]/.test(value) && URL.canParse(value);
}

/** Why a URI template is wrong, or null. It must have the placeholder once and be an absolute URI once filled in. */
function uriTemplateProblem(template: string, placeholder: string, example: string): string | null {
  const hint = `, e.g. "${example}"`;
  for (const match of template.matchAll(/\{([^{}]*)\}/g)) {
    if (match[1] !== placeholder)
      return `has the unknown placeholder {${match[1]}}: only {${placeholder}} is filled in${hint}`;
  }
  const count = template.split(`{${placeholder}}`).length - 1;
  if (count !== 1) return `must contain {${placeholder}} exactly once${hint}`;
  if (/[\s<>"]/.test(template)) return `must not contain spaces, quotes or angle brackets${hint}`;
  const filled = template.replace(`{${placeholder}}`, EXAMPLE_VALUES[placeholder] ?? 'x');
  if (!absoluteUri(filled)) {
    return `must be an absolute URI (with a scheme like https:) once {${placeholder}} is filled in${hint}`;
  }
  return null;
}

function uriTemplate(placeholder: string, example: string, what: string) {
  const mustBe = `must be a URI template for ${what} containing {${placeholder}}, e.g. "${example}"`;
  return z.string(must(mustBe)).superRefine((value, ctx) => {
    const problem = uriTemplateProblem(value, placeholder, example);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** An absolute path or a path relative to the config file (the loader makes it absolute and checks it can be read). */
const filePath = (mustBe: string) => z.string(must(mustBe)).min(1, must(mustBe));

// ------------------------------------------------------------------ sections

const httpTls = z.strictObject(
  {
    /** The PEM certificate (with intermediate certificates) the gateway presents to clients. */
    cert: filePath('must be the path of the PEM certificate file (with its chain) the gateway presents'),
    /** The certificate's PEM private key. */
    key: filePath('must be the path of the PEM private key file of http.tls.cert'),
  },
  must('must be a section with "cert" and "key" (PEM file paths), or null to serve plain HTTP'),
);

const httpSection = section({
  /** Address to listen on. Keep 127.0.0.1 behind a reverse proxy on the same host; 0.0.0.0 or :: listens everywhere (then TLS or trustedProxy is required). */
  host: host('must be a host name or IP address to listen on, e.g. 127.0.0.1 or 0.0.0.0').default('127.0.0.1'),
  /** TCP port to listen on (the plain PORT environment variable also sets it). 0 picks a free port (tests). */
  port: integer(0, 65535, 'must be a TCP port between 1 and 65535 (0 picks a free port, for tests)').default(8080),
  /** Path prefix when the gateway is mounted below the root of its host, e.g. "/paia". A trailing slash is dropped. */
  basePath: z
    .string(must('must be empty or a URL path starting with "/", e.g. "/paia"'))
    .regex(
      /^(?:\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)*\/?$/,
      must('must be empty or a URL path starting with "/", e.g. "/paia", without spaces, "?" or "#"'),
    )
    .transform((value) => value.replace(/\/$/, ''))
    .default(''),
  /**
   * The base URL clients reach the gateway at (base path included): links the
   * gateway writes (DAIA's Link rel="next") start with it. null derives them
   * from each request's own URL, which is right only when clients reach the
   * gateway directly: behind a proxy, set it.
   */
  publicUrl: z
    .string(
      must(
        'must be the absolute http(s) URL clients use to reach the gateway, e.g. "https://lib.example.org/paia", or null',
      ),
    )
    .superRefine((value, ctx) => {
      const url = URL.canParse(value) ? new URL(value) : null;
      if (
        !url ||
        (url.protocol !== 'http:' && url.protocol !== 'https:') ||
        url.username ||
        url.password ||
        /[\s?#]/.test(value)
      ) {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be an absolute http(s) URL without user name, password, query ("?") or fragment ("#"), e.g. "https://lib.example.org/paia", or null',
        });
      }
    })
    .transform((value) => value.replace(/\/+$/, ''))
    .nullable()
    .default(null),
  /** Serve HTTPS with this certificate and key. null = plain HTTP, allowed only on loopback or with trustedProxy. */
  tls: z.preprocess((value) => (value === undefined || value === false ? null : value), httpTls.nullable()),
  /**
   * true when a TLS-terminating reverse proxy forwards to the gateway: plain HTTP
   * is then allowed on any address and X-Forwarded-For / -Proto are believed.
   */
  trustedProxy: flag().default(false),
  /**
   * Web pages (origins) whose scripts may read the responses (CORS): ["*"],
   * any origin, or a list of exact origins such as
   * "https://opac.lib.example.org"; others get no Access-Control-Allow-Origin
   * (the request is still answered: browsers enforce CORS). [] allows none.
   * In the environment: comma-separated.
   */
  corsOrigins: textList(
    'must be a list of origins (strings)',
    'must be ["*"] (any origin) or a list of origins, e.g. ["https://opac.lib.example.org"]',
  )
    .superRefine((origins, ctx) => {
      if (origins.includes('*') && origins.length > 1) {
        ctx.addIssue({ code: 'custom', message: 'must be ["*"] alone (any origin) or a list of origins without "*"' });
      }
      for (const entry of origins) {
        if (entry === '*') continue;
        const problem = originProblem(entry);
        if (problem !== null)
          ctx.addIssue({ code: 'custom', message: `has ${JSON.stringify(entry.slice(0, 80))}, which ${problem}` });
      }
    })
    // Browsers send origins lower-case and without a default port.
    .transform((origins) => origins.map((entry) => (entry === '*' ? entry : new URL(entry).origin)))
    .default([...DEFAULT_CORS_ORIGINS]),
  /** Largest request body accepted (login forms and renew/request/cancel lists are small). */
  maxBodyBytes: integer(1024, 16 * 1024 * 1024, 'must be a size in bytes between 1024 and 16777216').default(65536),
  /** Largest request head (request line plus all headers) in bytes; Node answers 431 beyond it. */
  maxHeaderBytes: integer(1024, 1024 * 1024, 'must be a size in bytes between 1024 and 1048576').default(16384),
  /** Longest request target (path and query string) in bytes; longer ones get 414 invalid_request. */
  maxUrlBytes: integer(256, 65536, 'must be a length in bytes between 256 and 65536').default(APP_DEFAULTS.maxUrlBytes),
  /**
   * On SIGTERM or SIGINT the gateway stops listening, lets requests in flight
   * finish and closes its SIP2 connections; if that takes longer than this it
   * drops what is left and exits with code 1. Keep it below the process
   * manager's own kill timeout (systemd TimeoutStopSec, Kubernetes
   * terminationGracePeriodSeconds).
   */
  shutdownTimeoutMs: integer(1, 600_000, 'must be milliseconds between 1 and 600000 (e.g. 10000 for 10 s)').default(
    10_000,
  ),
  /**
   * Bound on one whole PAIA or DAIA call, however many SIP2 messages it
   * takes: past it the client gets 504 gateway_timeout, and nothing more is
   * sent to the ILS for that call (a renew, request or cancel already at the
   * ILS finishes and is reported "outcome unknown"). A client that goes away
   * cancels its call's SIP2 work in the same way.
   */
  requestTimeoutMs: integer(100, 600_000, 'must be milliseconds between 100 and 600000 (e.g. 30000 for 30 s)').default(
    APP_DEFAULTS.requestTimeoutMs,
  ),
  /**
   * Worker processes serving the one port (node:cluster; `serve --workers N`
   * wins over it). More than 1 needs state.store "redis": sessions and
   * counters must be shared by the workers. Each worker has its own SIP2
   * pool, so the ILS sees up to workers x sip2.pool.max sessions.
   */
  workers: integer(1, MAX_WORKERS, `must be a whole number of worker processes between 1 and ${MAX_WORKERS}`).default(
    1,
  ),
  // The HTTP server's own limits (gateway/connection-limits.ts), instead of Node's defaults.
  /**
   * A client must have sent its whole request head within this (also the
   * TLS handshake), or it gets 408 and the connection closes: a client
   * holding connections open with a head sent byte by byte is cut off.
   */
  headersTimeoutMs: integer(
    1000,
    600_000,
    'must be milliseconds between 1000 and 600000 (e.g. 10000 for 10 s)',
  ).default(10_000),
  /** A client must have sent its whole request, head and body, within this (408 otherwise); at least headersTimeoutMs. */
  receiveTimeoutMs: integer(
    1000,
    600_000,
    'must be milliseconds between 1000 and 600000 (e.g. 30000 for 30 s)',
  ).default(30_000),
  /**
   * An idle keep-alive connection is closed after this (at least 100: Node
   * reads 0 as never). Behind a reverse proxy, keep it above the proxy's own
   * idle timeout for upstream connections.
   */
  keepAliveTimeoutMs: integer(100, 600_000, 'must be milliseconds between 100 and 600000 (e.g. 5000 for 5 s)').default(
    5000,
  ),
  /** Open connections at most, per process (with http.workers, per worker); one more gets 503 (HTTPS: is closed at once). */
  maxConnections: integer(1, 1_000_000, 'must be a whole number of connections between 1 and 1000000').default(1000),
  /**
   * Open connections per client address at most, per process (with
   * http.workers, per worker); one more gets 503 (HTTPS: is closed at once). Counted by the connection's address
   * (IPv6 by its /64), so behind a
   * reverse proxy every connection is the proxy's: set it to null there (or
   * as high as maxConnections). null = no cap per address.
   */
  maxConnectionsPerAddress: integer(
    1,
    1_000_000,
    'must be a whole number of connections between 1 and 1000000, or null for no cap per address',
  )
    .nullable()
    .default(100),
})
  .superRefine(
    (http, ctx) => {
      if (
        typeof http.host === 'string' &&
        hostProblem(http.host) === null &&
        !isLoopback(http.host) &&
        http.tls === null &&
        http.trustedProxy === false
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['tls'],
          message: `is required because http.host ("${http.host}") is not a loopback address: set http.tls.cert and http.tls.key, or set http.trustedProxy to true if a TLS-terminating proxy forwards to the gateway`,
          params: { showValue: false },
        });
      }
      if (
        typeof http.host === 'string' &&
        hostProblem(http.host) === null &&
        !isLoopback(http.host) &&
        http.publicUrl === null
      ) {
        ctx.addIssue({
          code: 'custom',
          path: ['publicUrl'],
          message: `is required because http.host ("${http.host}") is not a loopback address: the https URL clients reach the gateway at (base path included), e.g. "https://lib.example.org/paia" (PAIA_HTTP_PUBLIC_URL); links the gateway writes start with it, never with a client's Host header`,
        });
      }
    },
    { when: () => true },
  )
  .superRefine(
    (http, ctx) => {
      const { headersTimeoutMs: head, receiveTimeoutMs: whole } = http as {
        headersTimeoutMs?: unknown;
        receiveTimeoutMs?: unknown;
      };
      if (typeof head === 'number' && typeof whole === 'number' && head > whole) {
        ctx.addIssue({
          code: 'custom',
          path: ['receiveTimeoutMs'],
          message: `must be at least http.headersTimeoutMs (${head}): the whole request cannot arrive before its head`,
        });
      }
    },
    { when: () => true },
  );

const sip2Tls = z
  .strictObject(
    {
      /** CA certificate(s) (PEM) that signed the ILS's certificate; leave out to use the system's CAs. */
      ca: filePath(
        'must be the path of a PEM file with the CA certificate(s) that signed the ILS certificate',
      ).optional(),
      /** Client certificate (PEM), only if the ILS or its stunnel asks for one. */
      cert: filePath('must be the path of the PEM client certificate file').optional(),
      /** The client certificate's PEM private key. */
      key: filePath('must be the path of the PEM private key file of sip2.tls.cert').optional(),
      /** Check the ILS certificate. Only for testing: false accepts any certificate, including an attacker's. */
      rejectUnauthorized: flag().default(true),
      /** Name to expect in the ILS certificate (and send as SNI) when it differs from sip2.host, e.g. when connecting by IP. */
      servername: host('must be the host name in the ILS certificate').optional(),
    },
    must('must be a section of TLS settings ({} or true for TLS with the system CAs), or null for plain TCP'),
  )
  .superRefine(
    (tls, ctx) => {
      if (tls.cert !== undefined && tls.key === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['key'],
          message: "is required when sip2.tls.cert is set: the path of the client certificate's PEM private key",
        });
      }
      if (tls.key !== undefined && tls.cert === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['cert'],
          message: 'is required when sip2.tls.key is set: the path of the PEM client certificate',
        });
      }
    },
    { when: () => true },
  );

const terminalSection = section({
  /** The SIP2 terminal (self-check) account the gateway logs in with (93 CN); created in the ILS for the gateway. Required with sip2.host. */
  user: sipText('must be the SIP2 terminal login name', { allowEmpty: false }).optional().default(UNSET),
  /** Its password (93 CO). Secret: prefer the PAIA_SIP2_TERMINAL_PASSWORD environment variable. Required with sip2.host. */
  password: sipText('must be the SIP2 terminal password', { allowEmpty: true })
    .refine((value) => !PLACEHOLDER_SECRET.test(value), {
      error: 'is still the placeholder from the example: set the password of the SIP2 terminal account',
    })
    .optional()
    .default(UNSET),
  /** Location code of the terminal (93 CP); empty to send none. Some ILSs require it to match the account. Required with sip2.host. */
  location: sipText('must be the SIP2 location code of the terminal', { allowEmpty: true }).optional().default(UNSET),
});

const poolSection = section({
  /** Connections kept open and logged in even when idle; 0 opens them only on demand. */
  min: integer(0, 100, 'must be a whole number of connections between 0 and 100').default(POOL_DEFAULTS.min),
  /** Most connections to the ILS at once, and so most SIP2 requests in flight. Ask the ILS admin how many it allows. */
  max: integer(1, 100, 'must be a whole number of connections between 1 and 100').default(POOL_DEFAULTS.max),
  /** How long a request may wait for a free connection before the client gets 503. */
  acquireTimeoutMs: integer(1, 600_000, 'must be milliseconds between 1 and 600000').default(
    POOL_DEFAULTS.acquireTimeoutMs,
  ),
  /** How many requests may wait for a connection; beyond that requests fail at once with 503. */
  maxWaiting: integer(0, 100_000, 'must be a whole number between 0 and 100000').default(POOL_DEFAULTS.maxWaiting),
  /**
   * Send a status request (99) on a connection idle this long. Keep it well
   * below the ILS's own session timeout (Koha and SIPServer: the `timeout`
   * of the SIP service in SIPconfig.xml, 60 s by default), or the ILS closes
   * idle sessions and they are reopened on demand. 0 = never.
   */
  keepaliveSeconds: integer(0, 86_400, 'must be seconds between 0 (off) and 86400').default(
    POOL_DEFAULTS.keepaliveIntervalMs / 1000,
  ),
  /** Replace connections older than this. 0 = never. */
  maxLifetimeSeconds: integer(0, 604_800, 'must be seconds between 0 (never) and 604800 (a week)').default(
    POOL_DEFAULTS.maxLifetimeMs / 1000,
  ),
}).superRefine(
  (pool, ctx) => {
    // Runs even when other pool settings are wrong (to report every problem), so only on valid numbers.
    const valid = (value: unknown, min: number) =>
      Number.isInteger(value) && (value as number) >= min && (value as number) <= 100;
    if (valid(pool.min, 0) && valid(pool.max, 1) && pool.min > pool.max) {
      ctx.addIssue({
        code: 'custom',
        path: ['min'],
        message: `must not be larger than sip2.pool.max (${pool.max}): lower it or raise sip2.pool.max`,
      });
    }
  },
  { when: () => true },
);

const timeoutsSection = section({
  /** How long to wait for the TCP (and TLS) connection to the ILS. */
  connectMs: integer(1, 600_000, 'must be milliseconds between 1 and 600000').default(3000),
  /** How long one SIP2 request may take, resends included, before the client gets 504. */
  responseMs: integer(1, 600_000, 'must be milliseconds between 1 and 600000').default(5000),
});

const circuitSection = section({
  /** Consecutive failures of the ILS (unreachable, no answer, garbage) after which requests fail at once with 503 for a while, instead of each waiting for the same failure. */
  failureThreshold: integer(1, 1000, 'must be a whole number between 1 and 1000').default(
    DEFAULT_CIRCUIT_OPTIONS.failureThreshold,
  ),
  /** How long requests fail at once after the first trip before one request probes the ILS; doubles with each further trip. */
  coolDownMs: integer(100, 600_000, 'must be milliseconds between 100 and 600000').default(
    DEFAULT_CIRCUIT_OPTIONS.coolDownMs.initial,
  ),
  /** Longest pause between probes. */
  maxCoolDownMs: integer(100, 3_600_000, 'must be milliseconds between 100 and 3600000').default(
    DEFAULT_CIRCUIT_OPTIONS.coolDownMs.max,
  ),
}).superRefine(
  (circuit, ctx) => {
    const valid = (value: unknown) => typeof value === 'number' && Number.isInteger(value);
    if (valid(circuit.coolDownMs) && valid(circuit.maxCoolDownMs) && circuit.coolDownMs > circuit.maxCoolDownMs) {
      ctx.addIssue({
        code: 'custom',
        path: ['coolDownMs'],
        message: `must not be larger than sip2.circuit.maxCoolDownMs (${circuit.maxCoolDownMs}): lower it or raise sip2.circuit.maxCoolDownMs`,
      });
    }
  },
  { when: () => true },
);

const DAYS_TEXT = 'mon, tue, wed, thu, fri, sat, sun';
const HH_MM_TEXT = 'must be a local time "HH:MM" (24 h), e.g. "02:00"';
const hhmm = z.string(must(HH_MM_TEXT)).refine((text) => minutesOf(text) !== null, must(HH_MM_TEXT));
const TIME_ZONE_TEXT = 'must be an IANA time zone, e.g. "Europe/Berlin" or "UTC"';

/** One maintenance window (sip2.maintenance). */
const maintenanceWindow = z
  .strictObject(
    {
      days: z
        .array(
          z.enum(WEEKDAYS, must(`must be days of the week: ${DAYS_TEXT}`)),
          must(`must be a list of days: ${DAYS_TEXT}`),
        )
        .min(1, must(`must name at least one day: ${DAYS_TEXT}`)),
      from: hhmm,
      to: hhmm,
      timeZone: z.string(must(TIME_ZONE_TEXT)).refine(isTimeZone, must(TIME_ZONE_TEXT)),
    },
    must(
      'must be a window: days, from, to and timeZone, e.g. {days: [mon, tue], from: "02:00", to: "02:30", timeZone: Europe/Berlin}',
    ),
  )
  .refine((window) => window.from !== window.to, {
    message: 'must end at another time than it starts (from and to are equal)',
    path: ['to'],
  });

const sip2Section = section({
  /** Host name or IP address of the ILS's SIP2 server. Leave it out (null) to run the embedded simulator with demo data. */
  host: host('must be the host name or IP address of the ILS SIP2 server, or null for the embedded demo simulator')
    .nullable()
    .default(null),
  /** TCP port of the ILS's SIP2 server (Koha and Evergreen often use 6001). */
  port: port().default(6001),
  /** Connect with TLS (directly or to an stunnel in front of the ILS). null = plain TCP; {} or true = TLS with the system CAs. */
  tls: z.preprocess(
    (value) => (value === undefined || value === false ? null : value === true ? {} : value),
    sip2Tls.nullable(),
  ),
  /** How the ILS fills SIP2: generic, koha, evergreen, folio, or the path of a dialect YAML file. */
  dialect: z
    .string(must('must be a dialect name (generic, koha, evergreen, folio) or the path of a dialect YAML file'))
    .min(1, must('must be a dialect name (generic, koha, evergreen, folio) or the path of a dialect YAML file'))
    .default('generic'),
  /** Wire charset, when the ILS differs from its dialect's (cp850, latin1, utf-8). null = the dialect's. */
  charset: z
    .enum(CHARSETS, must("must be cp850, latin1 or utf-8, or null for the dialect's charset"))
    .nullable()
    .default(null),
  /** AY sequence numbers and AZ checksums on every message; turn off only if the ILS has them off. */
  errorDetection: flag().default(true),
  /** The terminal account the gateway logs in to the ILS with. */
  terminal: terminalSection,
  /** Institution id sent in every message (AO), e.g. the Koha branch code or the Evergreen institution. Required with sip2.host. */
  institution: sipText('must be the SIP2 institution id', { allowEmpty: false }).optional().default(UNSET),
  /** Also send the terminal password (AC) in every request; some ILSs check it there. */
  terminalPasswordInMessages: flag().default(false),
  /** The pool of persistent SIP2 connections. */
  pool: poolSection,
  /** Time limits for talking to the ILS. */
  timeouts: timeoutsSection,
  /** The circuit breaker: stop sending to an ILS that keeps failing, and probe it now and then. */
  circuit: circuitSection,
  /** How often one request may be resent after a checksum error (96/97) before it fails. */
  maxResends: integer(0, 10, 'must be a whole number between 0 and 10').default(2),
  /** Entries asked for per list page (BP/BQ). null = the dialect's. */
  pageSize: integer(1, 9999, "must be a whole number between 1 and 9999, or null for the dialect's page size")
    .nullable()
    .default(null),
  /** The most entries read of one list (loans, holds, fines), whatever count the ILS announces; bounds the pages one call sends. */
  maxListEntries: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
    DEFAULT_MAX_LIST_ENTRIES,
  ),
  /** Currency of fees when the ILS sends none (BH): a three-letter ISO 4217 code. */
  currency: z
    .string(must('must be a three-letter ISO 4217 currency code in capitals, e.g. EUR or USD'))
    .regex(/^[A-Z]{3}$/, must('must be a three-letter ISO 4217 currency code in capitals, e.g. EUR or USD'))
    .default('EUR'),
  /**
   * Scheduled maintenance windows of the ILS (nightly backups): inside one,
   * calls that need the ILS get 503 with Retry-After at its end, the pool
   * opens no connections and /readyz says maintenance. Each window: the days
   * it starts on, from and to as local "HH:MM" in an IANA time zone; a window
   * whose end is before its start runs across midnight. In the environment:
   * JSON, e.g. [{"days":["mon"],"from":"02:00","to":"02:30","timeZone":"Europe/Berlin"}].
   */
  maintenance: z.array(maintenanceWindow, must('must be a list of windows ({days, from, to, timeZone})')).default([]),
});

const paiaSection = section({
  /**
   * URI of an item (copy): how item URIs are written and recognised. {barcode}
   * is the item barcode. Required with sip2.host; null (demo mode only): the
   * gateway's own URL (http.publicUrl, or where it listens, with the base
   * path) followed by /item/{barcode}.
   */
  itemUri: uriTemplate('barcode', 'https://lib.example.org/item/{barcode}', 'items').nullable().default(null),
  /** URI of an edition (title), used for title-level requests. {title} is the title identifier. Required with sip2.host; null (demo mode only): the gateway's own URL followed by /title/{title}. */
  editionUri: uriTemplate('title', 'https://lib.example.org/title/{title}', 'editions').nullable().default(null),
  /** URI of a pickup or shelving location, {location} being the SIP2 location code. null = no storage URIs. */
  storageUri: uriTemplate('location', 'https://lib.example.org/location/{location}', 'locations')
    .nullable()
    .default(null),
  /** URI of a patron type, {class} being the SIP2 patron class (PC). null = no patron type in responses. */
  patronTypeUri: uriTemplate('class', 'https://lib.example.org/patron-type/{class}', 'patron types')
    .nullable()
    .default(null),
  /** How patrons appear in URLs: "barcode" as is, or "opaque" (an HMAC of it, so barcodes stay out of URLs and logs). */
  patronId: z.enum(PATRON_ID_MODES, must('must be "barcode" or "opaque"')).default('barcode'),
  /**
   * Key for opaque patron ids, and for the hashes of usernames and patron ids in the state store and the log
   * (whatever patronId is): at least 32 random characters (openssl rand -base64 48). Changing it changes every
   * opaque patron id and starts every lockout count afresh. Secret.
   */
  patronIdSecret: z
    .string(must(`must be a random string of at least ${MIN_PATRON_ID_SECRET_LENGTH} characters, or null`))
    .nullable()
    .default(null),
  /** Most documents in one renew, request or cancel call. */
  maxDocs: integer(1, 1000, 'must be a whole number between 1 and 1000').default(50),
  /**
   * The date sent as the patron's `expires` for an active account (status 0)
   * when the ILS sends no expiry date: FOLIO never does (dialect expiry: null),
   * other ILSs leave the dialect's field empty for accounts that never expire.
   * VuFind's PAIA driver offers a hold form only to a patron with an `expires`
   * after today; 9999-12-31 is what VuFind's own PAIA test patron carries.
   * null (the default): no `expires` is sent then, as PAIA allows.
   */
  expiresWhenUnknown: z
    .string(must('must be a date YYYY-MM-DD such as 9999-12-31, or null'))
    .refine(isIsoDate, must('must be a date YYYY-MM-DD such as 9999-12-31 (a real day), or null'))
    .nullable()
    .default(null),
}).superRefine(
  (paia, ctx) => {
    const secret = paia.patronIdSecret;
    if (paia.patronId !== 'opaque' || (secret !== null && typeof secret !== 'string')) return;
    const fix =
      'generate one with `openssl rand -base64 48` and set it in paia.patronIdSecret or PAIA_PAIA_PATRON_ID_SECRET';
    if (secret === null || secret === '') {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `is required when paia.patronId is "opaque" (at least ${MIN_PATRON_ID_SECRET_LENGTH} characters): ${fix}`,
      });
    } else if (PLACEHOLDER_SECRET.test(secret)) {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `is still the placeholder from the example: ${fix}`,
      });
    } else if (secret.length < MIN_PATRON_ID_SECRET_LENGTH) {
      ctx.addIssue({
        code: 'custom',
        path: ['patronIdSecret'],
        message: `must be at least ${MIN_PATRON_ID_SECRET_LENGTH} characters long when paia.patronId is "opaque": ${fix}`,
      });
    }
  },
  { when: () => true },
);

/**
 * Default of daia.idsPerMinutePerAddress: 6000, three times what a busy
 * discovery server asks from its one address (100 result pages of 20 records
 * a minute, 2000 ids). A discovery system asks DAIA for all its users from
 * its server, and a page it was refused shows no holdings at all, silently
 * (VuFind's DAIA driver, getStatuses: an error is only logged); 1200 refused
 * a VuFind serving 65 pages a minute. The limit is not what protects patrons:
 * daia.poolShare keeps DAIA to its share of the SIP2 connections whatever the
 * number of ids. It only keeps one address from taking all of that share for
 * long, which takes far more than 6000 ids a minute (100 a second).
 */
const DEFAULT_DAIA_IDS_PER_MINUTE = 6000;
/** Default of daia.poolShare: DAIA may hold half of the SIP2 connections, the other half stays free for patrons. */
const DEFAULT_DAIA_POOL_SHARE = 0.5;

const REQUEST_URL_EXAMPLE = 'https://opac.lib.example.org/hold?item={item}';
const DEPARTMENT_ID_EXAMPLE = 'http://lobid.org/organisations/DE-7';
/** VuFind's DAIA driver's default daiaIdPrefix (DAIA.php init()), so its record ids are recognised unconfigured. */
const DEFAULT_RECORD_ID_PREFIX = 'ppn:';
const RECORD_PREFIX_MUST_BE =
  'must be the text VuFind\'s DAIA.ini daiaIdPrefix puts before its record ids, starting with a URI scheme (e.g. "ppn:" or "https://lib.example.org/record/"), or null for edition URIs only';
const HEADERS_MUST_BE =
  'must be a list of request headers, e.g. [{name: Authorization, value: "Basic ..."}, {name: x-okapi-tenant, value: diku}], or [] for none';
/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Request headers of the record lookup (an API key or token): a secret, so
 * every problem is reported at the setting itself, never with a value.
 */
const lookupHeaders = z.unknown().transform((value, ctx) => {
  const hidden = (message: string) => {
    ctx.addIssue({ code: 'custom', message, params: { showValue: false } });
    return z.NEVER;
  };
  if (!Array.isArray(value)) return hidden(HEADERS_MUST_BE);
  const headers: { name: string; value: string }[] = [];
  for (const [index, entry] of value.entries()) {
    const {
      name,
      value: text,
      ...rest
    } = (typeof entry === 'object' && entry !== null ? entry : {}) as Record<string, unknown>;
    if (typeof name !== 'string' || typeof text !== 'string' || Object.keys(rest).length > 0)
      return hidden(`has entry ${index + 1}, which is not {name, value}; ${HEADERS_MUST_BE}`);
    if (!HEADER_NAME.test(name))
      return hidden(`has ${JSON.stringify(name.slice(0, 40))}, which is not an HTTP header name; ${HEADERS_MUST_BE}`);
    if (/[\r\n\0]/.test(text))
      return hidden(`has a value for ${name} that is not one line of text; ${HEADERS_MUST_BE}`);
    headers.push({ name, value: text });
  }
  return headers;
});

/** Records: ids of the discovery system's bibliographic records, turned into item barcodes by a mapping file or an ILS API. */
const recordsSection = section({
  /**
   * Request ids starting with this name records: what VuFind's DAIA.ini
   * daiaIdPrefix puts before its record ids ("ppn:" there too unless set),
   * so the two must be the same text. It must start with a URI scheme: the
   * document id is the id as requested, and DAIA wants a URI there. Edition
   * URIs (paia.editionUri) always name records. null: edition URIs only.
   */
  idPrefix: z
    .string(must(RECORD_PREFIX_MUST_BE))
    .regex(/^[A-Za-z][A-Za-z0-9+.-]*:[^\s|]*$/, must(RECORD_PREFIX_MUST_BE))
    .nullable()
    .default(DEFAULT_RECORD_ID_PREFIX),
  /** Most copies answered per record (the first ones of the file or of the lookup's answer). */
  maxItemsPerRecord: integer(1, 10_000, 'must be a whole number of copies between 1 and 10000').default(
    DEFAULT_MAX_ITEMS_PER_RECORD,
  ),
  /**
   * A mapping file, record id and barcode, as exported from the ILS: CSV
   * (record,barcode per line) or JSON ({"record": ["barcode", ...]} or
   * [{"record": ..., "barcode": ...}]). Re-read when it changes. With
   * http.url too, the file answers the records it lists and the lookup the
   * others. null: no file (demo mode without http.url: the demo library's
   * sip2-simulator/data/demo-records.json).
   */
  file: filePath('must be the path of a CSV or JSON file of record ids and barcodes, or null').nullable().default(null),
  /** How often the mapping file is checked for changes (its size, modification time and inode). */
  fileCheckSeconds: integer(1, 3600, 'must be seconds between 1 and 3600').default(DEFAULT_FILE_CHECK_SECONDS),
  /** An ILS API that lists a record's items, asked per record (for the records a mapping file does not list). */
  http: section({
    /**
     * URL template with {record} (filled in percent-encoded), e.g. Koha's
     * "https://koha.example.org/api/v1/biblios/{record}/items" or FOLIO's
     * "https://folio.example.org/inventory/items?query=instance.id=={record}".
     * null: no lookup.
     */
    url: z
      .string(must('must be an http(s) URL template containing {record}, or null'))
      .superRefine((value, ctx) => {
        const example = 'https://koha.example.org/api/v1/biblios/{record}/items';
        const problem =
          uriTemplateProblem(value, 'record', example) ??
          (/^https?:\/\//i.test(value) ? null : `must be an http:// or https:// URL, e.g. "${example}"`);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .nullable()
      .default(null),
    /** Where the barcodes are in the answer: "[].external_id" (Koha), "items[].barcode" (FOLIO); "[]" an entry of every array. */
    field: z
      .string(must('must be a field path such as "[].external_id" or "items[].barcode"'))
      .superRefine((value, ctx) => {
        const problem = fieldPathProblem(value);
        if (problem)
          ctx.addIssue({
            code: 'custom',
            message: `${problem}; write a field path such as "[].external_id" (Koha) or "items[].barcode" (FOLIO)`,
          });
      })
      .default(HTTP_LOOKUP_DEFAULTS.field),
    /**
     * Request headers, [{name, value}, ...]: e.g. Koha's Authorization (Basic
     * or Bearer), FOLIO's x-okapi-tenant and x-okapi-token. Secret: never
     * shown; best given as JSON in PAIA_DAIA_RECORDS_HTTP_HEADERS or the file
     * PAIA_DAIA_RECORDS_HTTP_HEADERS_FILE names. [] = none.
     */
    headers: lookupHeaders.default([]),
    /** Bound on one lookup (below http.requestTimeoutMs); past it the record is answered without items. */
    timeoutMs: integer(100, 600_000, 'must be milliseconds between 100 and 600000 (e.g. 3000 for 3 s)').default(
      HTTP_LOOKUP_DEFAULTS.timeoutMs,
    ),
    /** How long a record's barcodes are reused before the API is asked again. */
    cacheSeconds: integer(1, 86_400, 'must be seconds between 1 and 86400 (a day)').default(
      HTTP_LOOKUP_DEFAULTS.cacheTtlMs / 1000,
    ),
    /** How long a failed lookup is remembered (the record answered without items meanwhile), so a dead API is not asked by every request. */
    failureCacheSeconds: integer(1, 3600, 'must be seconds between 1 and 3600').default(
      HTTP_LOOKUP_DEFAULTS.failureTtlMs / 1000,
    ),
    /** Most records cached; the least recently used go first. */
    maxEntries: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
      HTTP_LOOKUP_DEFAULTS.maxEntries,
    ),
    /** Lookups running at once, over all requests; more wait (within timeoutMs). */
    maxConcurrent: integer(1, 1000, 'must be a whole number between 1 and 1000').default(
      HTTP_LOOKUP_DEFAULTS.maxConcurrent,
    ),
    /** Largest answer read; a larger one is a failed lookup. */
    maxBodyBytes: integer(1024, 64 * 1024 * 1024, 'must be a size in bytes between 1024 and 67108864').default(
      HTTP_LOOKUP_DEFAULTS.maxBodyBytes,
    ),
  }),
});

const daiaSection = section({
  /** Most document ids answered per DAIA request; the rest goes into a Link rel="next" URL. null: paia.maxDocs. */
  maxIds: integer(1, 1000, 'must be a whole number between 1 and 1000, or null for paia.maxDocs')
    .nullable()
    .default(null),
  /**
   * Document ids one client address may ask for per minute, its requests
   * together (one request with 50 ids counts 50); beyond it 429 with
   * Retry-After. Counted in the state store (shared by every instance with
   * Redis); behind http.trustedProxy per last X-Forwarded-For hop, IPv6 per /64.
   * The default lets a busy discovery server through (why: DEFAULT_DAIA_IDS_PER_MINUTE);
   * an address refused again and again is logged once in a while, naming exemptClients.
   */
  idsPerMinutePerAddress: integer(1, 10_000_000, 'must be a whole number between 1 and 10000000').default(
    DEFAULT_DAIA_IDS_PER_MINUTE,
  ),
  /**
   * Clients not held to idsPerMinutePerAddress: IP addresses and CIDR blocks,
   * e.g. a discovery system that asks on behalf of all its users from one
   * address. They still get only DAIA's share of the pool. [] = none. In the
   * environment: comma-separated.
   */
  exemptClients: clientList().default([]),
  /**
   * Fraction of the SIP2 connections (sip2.pool.max, or fewer when the ILS
   * serves fewer) DAIA's requests may hold at once, at least one: the rest
   * stays free for patrons. 1: DAIA may take them all.
   */
  poolShare: z
    .number(must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .gt(0, must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .max(1, must('must be a fraction between 0 and 1, e.g. 0.5 for half of sip2.pool.max'))
    .default(DEFAULT_DAIA_POOL_SHARE),
  /**
   * URL template of the page where a patron asks for a copy, the `href` of
   * its loan and presentation services: {item} is the item URI, {barcode}
   * the item barcode (both percent-encoded); an http: or https: URL. Given on
   * unavailable services of a copy that comes back (on loan, on the hold
   * shelf, in transit ...) when the ILS takes holds (its 98), and on
   * available ones with shelfRequests. VuFind's DAIA driver offers a recall
   * or a request only where there is one, and follows it only without PAIA.
   * null: this gateway's own DAIA URL for the copy (http.publicUrl, or where
   * it listens, + /daia?id={item}&format=json). A discovery system that uses
   * DAIA alone: the hold page of the library's OPAC.
   */
  requestUrl: z
    .string(must(`must be a URL template containing {item} or {barcode}, e.g. "${REQUEST_URL_EXAMPLE}", or null`))
    .superRefine((value, ctx) => {
      const problem = requestLinkProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `${problem}, e.g. "${REQUEST_URL_EXAMPLE}"` });
    })
    .nullable()
    .default(null),
  /**
   * The library takes requests for copies on the shelf (a closed stack, a
   * storage it fetches from): available services carry requestUrl too, and
   * discovery systems offer a request button there. false: only copies that
   * are not on the shelf can be asked for.
   */
  shelfRequests: flag().default(false),
  /**
   * The library as every copy's department (the location discovery systems
   * show; VuFind: "Unknown" without one). A copy whose 18 names another
   * owner (BG) keeps that owner instead.
   */
  department: section({
    /** The library's name; null: the name the ILS sends in its 98 (AM), else sip2.institution. */
    content: z
      .string(must('must be the name of the library, e.g. "Stadtbibliothek Musterstadt", or null'))
      .trim()
      .min(1, must('must be the name of the library, e.g. "Stadtbibliothek Musterstadt", or null'))
      .max(200, must('must be at most 200 characters long'))
      .nullable()
      .default(null),
    /** The library's URI (e.g. its ISIL as a URI, "http://lobid.org/organisations/DE-7"); null: none. */
    id: z
      .string(must(`must be an absolute URI, e.g. "${DEPARTMENT_ID_EXAMPLE}", or null`))
      .refine((value) => absoluteUri(value), must(`must be an absolute URI, e.g. "${DEPARTMENT_ID_EXAMPLE}", or null`))
      .nullable()
      .default(null),
  }),
  /** DAIA by record: which ids name records, and where their copies' barcodes come from. */
  records: recordsSection,
});

const CLIENT_SCOPES = ['read_patron', 'read_fees', 'read_items', 'write_items'] as const;
const CLIENT_SCOPES_TEXT = `must be a list of scopes among ${CLIENT_SCOPES.join(', ')}`;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** One trusted client of auth.clients (the OAuth client credentials grant). */
const trustedClient = z
  .strictObject(
    {
      /** The OAuth client_id, sent in the HTTP Basic header. */
      id: z
        .string(must('must be the client id, a string'))
        .regex(
          /^[A-Za-z0-9._~-]{1,128}$/,
          must('must be 1 to 128 letters, digits, ".", "_", "~" or "-" (characters HTTP Basic clients send alike)'),
        ),
      /** The secret as a hash (`paia-sip2 hash-secret`): scrypt$N$r$p$salt$hash. */
      secretHash: z
        .string(must('must be a secret hash (make one with `paia-sip2 hash-secret`)'))
        .superRefine((value, ctx) => {
          const problem = secretHashProblem(value);
          if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
        })
        .optional(),
      /** The name of an environment variable holding the secret. */
      secretEnv: z
        .string(must('must be the name of an environment variable, e.g. PAIA_CLIENT_VUFIND_SECRET'))
        .regex(ENV_NAME, must('must be the name of an environment variable, e.g. PAIA_CLIENT_VUFIND_SECRET'))
        .optional(),
      /** A file holding the secret (relative: to the config file's directory). */
      secretFile: z.string(must('must be the path of a file holding the secret')).min(1).optional(),
      /** The scopes this client may obtain for a patron (at most the four core scopes). */
      scopes: z
        .array(z.enum(CLIENT_SCOPES, must(CLIENT_SCOPES_TEXT)), must(CLIENT_SCOPES_TEXT))
        .min(1, must(CLIENT_SCOPES_TEXT))
        .default([...DEFAULT_LOGIN_SCOPES] as (typeof CLIENT_SCOPES)[number][]),
      /** Where the client may log in from: IP addresses and CIDR blocks, at least one. */
      allowedAddresses: clientList().refine((entries) => entries.length > 0, {
        error:
          'must name at least one IP address or CIDR block the client logs in from (["0.0.0.0/0", "::/0"] for any, not recommended)',
      }),
    },
    must(
      'must be a client: id, one of secretHash, secretEnv or secretFile, scopes and allowedAddresses, e.g. {id: vufind, secretEnv: PAIA_CLIENT_VUFIND_SECRET, scopes: [read_patron, read_items], allowedAddresses: ["192.0.2.10"]}',
    ),
  )
  .superRefine((client, ctx) => {
    const sources = (['secretHash', 'secretEnv', 'secretFile'] as const).filter((key) => client[key] !== undefined);
    if (sources.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        message: `must give the secret exactly one way, by secretHash, secretEnv or secretFile (${sources.length === 0 ? 'none is set' : `${sources.join(' and ')} are set`})`,
      });
    }
  });

/** auth.clients: ids unique. */
const trustedClients = z
  .array(
    trustedClient,
    must(
      'must be a list of clients ({id, secretHash | secretEnv | secretFile, scopes, allowedAddresses}), or [] for none',
    ),
  )
  .superRefine((clients, ctx) => {
    const seen = new Set<string>();
    clients.forEach((client, index) => {
      if (seen.has(client.id)) {
        ctx.addIssue({
          code: 'custom',
          path: [index, 'id'],
          message: `names the client ${JSON.stringify(client.id)} a second time; ids must be unique`,
        });
      }
      seen.add(client.id);
    });
  });

/** Default of auth.maxSessionsPerPatron: far above the browser sessions one patron keeps open at once. */
const DEFAULT_MAX_SESSIONS_PER_PATRON = 50;

const authSection = section({
  /** How long an access token is valid after login. */
  tokenLifetimeSeconds: integer(1, 2_592_000, 'must be seconds between 1 and 2592000 (30 days)').default(3600),
  /**
   * Most sessions kept at once; beyond that the least recently used are dropped
   * (and must log in again). Memory store only: Redis's maxmemory bounds its own.
   */
  maxSessions: integer(1, 10_000_000, 'must be a whole number between 1 and 10000000').default(100_000),
  /**
   * Most live sessions of one patron; a further login ends the patron's least recently used session (never the
   * one just used). Sized for clients that never log out: VuFind logs in once per browser session and keeps the
   * token for its whole lifetime, so a patron with a dozen browsers, devices and private windows holds a dozen
   * tokens, all in use; the bound only stops a client that loops logins from growing one patron's sessions.
   */
  maxSessionsPerPatron: integer(1, 10_000, 'must be a whole number between 1 and 10000').default(
    DEFAULT_MAX_SESSIONS_PER_PATRON,
  ),
  /** Requests allowed per access token per minute; beyond it 429 with Retry-After. */
  requestsPerMinute: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
    APP_DEFAULTS.requestsPerMinute,
  ),
  /** true: logout ends every session of the patron, not only the token used for it. */
  logoutAllSessions: flag().default(APP_DEFAULTS.logoutAllSessions),
  /**
   * The login ceiling, all clients together: once this many logins per second went to the ILS, only addresses
   * within their fair share get through (others 503 with Retry-After), so the ILS sees at most twice this (plus
   * allowedClientLimits.loginsPerSecond). Protects the ILS from a distributed guessing run.
   */
  maxLoginsPerSecond: integer(1, 100_000, 'must be a whole number between 1 and 100000').default(
    LOGIN_THROTTLE_DEFAULTS.maxAttemptsPerSecond,
  ),
  /**
   * Clients that may log in: IP addresses and CIDR blocks, IPv4 or IPv6 (behind
   * http.trustedProxy, the last X-Forwarded-For hop). Others get 403. [] = any
   * client. Core methods stay open to every token holder. In the environment: comma-separated.
   */
  allowedClients: clientList().default([]),
  /**
   * Limits of their own for the addresses in auth.allowedClients (a discovery
   * system logging in all its patrons from one address); null: the general ones.
   */
  allowedClientLimits: section({
    /** Failed logins from one such address before its attempts are slowed down. */
    freeFailuresPerAddress: integer(1, 10_000_000, 'must be a whole number between 1 and 10000000, or null')
      .nullable()
      .default(null),
    /** Logins per second always let through for one such address, whatever others send (beyond its fair share of maxLoginsPerSecond). */
    loginsPerSecond: integer(1, 100_000, 'must be a whole number between 1 and 100000, or null')
      .nullable()
      .default(null),
  }),
  /**
   * Brute-force protection: failed logins counted per account (canonical
   * username, and the patron the ILS names); past the free ones each failure
   * doubles a lockout, up to the cap. Failures per client address only slow
   * that address's attempts down (they wait before they are checked): a
   * correct password is never refused because of its address.
   */
  bruteForce: section({
    /** Failed logins of one username before the lockout starts. */
    freeFailuresPerUser: integer(1, 1000, 'must be a whole number between 1 and 1000').default(
      LOGIN_THROTTLE_DEFAULTS.freeAttemptsPerUser,
    ),
    /** Failed logins from one client address before the lockout starts (higher: many patrons share NAT addresses). */
    freeFailuresPerAddress: integer(1, 100_000, 'must be a whole number between 1 and 100000').default(
      LOGIN_THROTTLE_DEFAULTS.freeAttemptsPerAddress,
    ),
    /** First lockout delay, in seconds; it doubles with each further failure. */
    lockoutBaseSeconds: integer(1, 3600, 'must be seconds between 1 and 3600').default(
      LOGIN_THROTTLE_DEFAULTS.baseDelayMs / 1000,
    ),
    /** Longest lockout delay, in seconds. */
    lockoutMaxSeconds: integer(1, 86_400, 'must be seconds between 1 and 86400 (a day)').default(
      LOGIN_THROTTLE_DEFAULTS.maxDelayMs / 1000,
    ),
    /** Longest an attempt from an address past its free failures waits before it is checked, in seconds (0: never). */
    maxSlowdownSeconds: integer(0, 60, 'must be seconds between 0 and 60').default(
      LOGIN_THROTTLE_DEFAULTS.maxSlowdownMs / 1000,
    ),
  }),
  /** Weak passwords: logins with them get no token, and the patron is told to change the password at the library. */
  passwordPolicy: section({
    /** Shortest password accepted (0: no length check). 4 lets 4-digit library PINs through. */
    minLength: integer(0, 128, 'must be a whole number between 0 (no check) and 128').default(
      DEFAULT_PASSWORD_POLICY.minLength,
    ),
    /** Passwords always refused (case is ignored). In the environment: comma-separated. */
    denyList: textList(
      'must be a list of passwords (strings)',
      'must be a list of passwords, e.g. ["password", "123456"], or [] for none',
    ).default([...DEFAULT_PASSWORD_POLICY.denyList]),
  }),
  /**
   * Trusted clients (a discovery system behind single sign-on) that log
   * patrons in without their password: the OAuth client credentials grant,
   * HTTP Basic client authentication and the patron's username or barcode.
   * [] = off. In the environment: PAIA_AUTH_CLIENTS as a JSON list.
   */
  clients: trustedClients.default([]),
});

/** Default of state.dir: relative to the working directory of the gateway (a path set in a file is the file's). */
const DEFAULT_STATE_DIR = '.paia-sip2';
const STATE_DIR_MUST_BE =
  'must be the path of a directory the gateway may write (e.g. "/var/lib/paia-sip2"), or null to keep sessions in memory only';
/** Words that turn state.dir off, as YAML and the environment write them (besides null). */
export const STATE_DIR_OFF: readonly string[] = ['off', 'false'];

/** Default Redis key prefix: every key and channel of the gateway starts with it. */
const DEFAULT_KEY_PREFIX = 'paia-sip2:';

const stateSection = section({
  /**
   * Where sessions, login lockouts and limits live: "memory" (this process
   * only; sessions survive a restart in state.dir, lockouts and limits do
   * not) or "redis" (Redis or Valkey, shared by every instance and worker;
   * everything survives restarts).
   */
  store: z.enum(['memory', 'redis'], must('must be "memory" or "redis"')).default('memory'),
  /**
   * Where the memory store keeps its sessions across restarts: a directory of
   * its own (made with mode 0700 if missing) holding the state file (mode
   * 0600; tokens only as hashes, sessions sealed), written within 2 s of a
   * change (WRITE_INTERVAL_MS in src/state/memory/persistence.ts), at a
   * graceful stop, and before a logout is answered. Relative
   * paths are read from the config file's directory (from the environment:
   * the working directory); the default is `.paia-sip2` in the working
   * directory. One gateway per directory. null (or false, "off", "false"): nothing is
   * kept, a restart logs every patron out. Not used with store "redis".
   */
  dir: z.preprocess(
    (value) => (value === false || STATE_DIR_OFF.includes(value as string) ? null : value),
    z
      .string(must(STATE_DIR_MUST_BE))
      .min(1, must(STATE_DIR_MUST_BE))
      // A line break or other control character in a path is a slip of copy and paste, not a directory name.
      .refine((value) => !/\p{Cc}/u.test(value), { error: `${STATE_DIR_MUST_BE}, without line breaks` })
      .nullable()
      .default(DEFAULT_STATE_DIR),
  ),
  redis: section({
    /** redis://[user:password@]host:port[/db], or rediss:// for TLS. Required with store "redis". Secret (it may carry a password). */
    url: z
      .string(must('must be a redis:// or rediss:// URL, e.g. "redis://127.0.0.1:6379"'))
      .refine(
        (value) => {
          try {
            const url = new URL(value);
            return (url.protocol === 'redis:' || url.protocol === 'rediss:') && url.hostname !== '';
          } catch {
            return false;
          }
        },
        {
          error: 'must be a redis:// or rediss:// URL with a host, e.g. "redis://127.0.0.1:6379"',
          params: { showValue: false },
        },
      )
      .nullable()
      .default(null),
    /** CA certificate(s) (PEM) that signed the Redis server's certificate (rediss:// only); leave out for the system's CAs. */
    tlsCa: filePath('must be the path of a PEM file with the CA certificate(s) that signed the Redis certificate')
      .nullable()
      .default(null),
    /** Prepended to every key and channel: several gateways (or other programs) can share one Redis. */
    keyPrefix: z
      .string(must('must be a short text of letters, digits and _ . : - such as "paia-sip2:"'))
      .regex(/^[A-Za-z0-9_.:-]{0,100}$/, must('must be at most 100 letters, digits and _ . : - such as "paia-sip2:"'))
      .default(DEFAULT_KEY_PREFIX),
    /** How long to wait for Redis at start and on each reconnect. */
    connectTimeoutMs: integer(100, 60_000, 'must be milliseconds between 100 and 60000').default(5000),
    /** How long one store operation may take; beyond it the call gets 503 (never served without its check). */
    commandTimeoutMs: integer(10, 10_000, 'must be milliseconds between 10 and 10000').default(1000),
  }),
}).superRefine(
  (state, ctx) => {
    if (state.store === 'redis' && (state.redis as { url: unknown }).url === null) {
      ctx.addIssue({
        code: 'custom',
        path: ['redis', 'url'],
        message:
          'is required when state.store is "redis": the address of the Redis or Valkey server, e.g. "redis://127.0.0.1:6379" (PAIA_STATE_REDIS_URL)',
      });
    }
  },
  { when: () => true },
);

const cacheSection = section({
  /** Item information (SIP2 17) answers, shared by items and DAIA: fewer round trips when the same items are asked for again. */
  items: section({
    /** false: every item is asked of the ILS each time. */
    enabled: flag().default(true),
    /** How long an answer is used; keep it short, other patrons' loans and returns change items without the gateway knowing. A renew, request or cancel of an item through the gateway drops its entry at once. */
    ttlSeconds: integer(1, 3600, 'must be seconds between 1 and 3600').default(15),
    /** Most items kept; the least recently used go first. */
    maxEntries: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(10_000),
  }),
  /**
   * A patron's account reads (core, items, fees) shared by that patron's calls
   * for a few seconds, whatever token they come with: a discovery system reads
   * the same account three or four times per page view. A renew, request or
   * cancel of the patron through any instance drops them at once; a change made
   * at the circulation desk shows after the window at the latest.
   */
  accounts: section({
    /** false: every call reads the account from the ILS. */
    enabled: flag().default(true),
    /** How long a read is shared, counted from when it was sent to the ILS. */
    windowSeconds: integer(1, 300, 'must be seconds between 1 and 300').default(
      ACCOUNT_WINDOW_DEFAULTS.windowMs / 1000,
    ),
    /** Most patrons whose reads are kept; the least recently read go first. */
    maxPatrons: integer(1, 1_000_000, 'must be a whole number between 1 and 1000000').default(
      ACCOUNT_WINDOW_DEFAULTS.maxPatrons,
    ),
  }),
});

const metricsSection = section({
  /** Serve Prometheus metrics on /metrics (outside the PAIA base paths). */
  enabled: flag().default(true),
  /**
   * Clients that may read /metrics: IP addresses and CIDR blocks (behind
   * http.trustedProxy, the last X-Forwarded-For hop); others get 403.
   * [] = any client. In the environment: comma-separated.
   */
  allowedClients: clientList().default(['127.0.0.1', '::1']),
});

const logSection = section({
  /** Log level: fatal, error, warn, info, debug (traces SIP2, passwords masked), trace or silent. */
  level: z.enum(LOG_LEVELS, must(`must be one of ${LOG_LEVELS.join(', ')}`)).default('info'),
  /** json: one JSON object per line (for log shippers); pretty: one readable line per entry, for a person at a terminal. */
  format: z.enum(LOG_FORMATS, must(`must be one of ${LOG_FORMATS.join(', ')}`)).default('json'),
});

const demoSection = section({
  /** Dialect the embedded simulator speaks (set sip2.dialect to the same). */
  dialect: z.enum(DEMO_DIALECTS, must(`must be one of ${DEMO_DIALECTS.join(', ')}`)).default('generic'),
  /**
   * Wire charset of the embedded simulator and of the gateway towards it.
   * UTF-8, so the demo library's non-ASCII names and titles come through
   * intact; cp850 shows what a 3M-literal ILS does to them.
   */
  charset: z.enum(CHARSETS, must('must be cp850, latin1 or utf-8')).default('utf-8'),
  /** Port of the embedded simulator on 127.0.0.1; 0 picks a free one. Used only while sip2.host is null. */
  sip2Port: integer(0, 65535, 'must be a TCP port between 0 (a free one) and 65535').default(0),
});

/**
 * The demo library's terminal account and institution (sip2-simulator/data/demo.json):
 * used only in demo mode (no sip2.host). Against a real ILS each must be set.
 */
const DEMO_SIP2 = {
  terminal: { user: 'paia', password: 'paia-secret', location: 'MAIN' },
  institution: 'DEMO',
} as const;

/**
 * Settings with a value only in demo mode, and what to put there for a real
 * ILS. With sip2.host set, leaving one out is an error naming it: a real ILS
 * must never get the demo's terminal account or the demo's loopback URIs.
 */
const REAL_ILS_SETTINGS: readonly { path: readonly [string, string, ...string[]]; fix: string }[] = [
  {
    path: ['sip2', 'terminal', 'user'],
    fix: 'the login name of the SIP2 terminal account the ILS has for the gateway (93 CN; in Koha a <login> of SIPconfig.xml), e.g. "paia-gateway" (PAIA_SIP2_TERMINAL_USER)',
  },
  {
    path: ['sip2', 'terminal', 'password'],
    fix: 'the password of that terminal account (93 CO), best given in the environment (PAIA_SIP2_TERMINAL_PASSWORD)',
  },
  {
    path: ['sip2', 'terminal', 'location'],
    fix: 'the location code of the terminal (93 CP), e.g. the branch code the ILS has for the account, or "" to send none (PAIA_SIP2_TERMINAL_LOCATION)',
  },
  {
    path: ['sip2', 'institution'],
    fix: 'the institution id the ILS expects in every message (AO): in Koha the branch code, in Evergreen the institution of SIPconfig.xml (PAIA_SIP2_INSTITUTION)',
  },
  {
    path: ['paia', 'itemUri'],
    fix: 'the URI template of your items, e.g. "https://lib.example.org/item/{barcode}" (PAIA_PAIA_ITEM_URI)',
  },
  {
    path: ['paia', 'editionUri'],
    fix: 'the URI template of your titles, e.g. "https://lib.example.org/title/{title}" (PAIA_PAIA_EDITION_URI)',
  },
];

function valueAt(config: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>(
    (current, key) =>
      typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined,
    config,
  );
}

/** The whole file. */
export const configSchema = z
  .strictObject(
    {
      /** The HTTP(S) side: where PAIA clients connect. */
      http: httpSection,
      /** The SIP2 side: the library system. */
      sip2: sip2Section,
      /** PAIA identifiers and limits. */
      paia: paiaSection,
      /** Anonymous availability (DAIA): its limits per client and its share of the SIP2 pool. */
      daia: daiaSection,
      /** Access tokens and sessions. */
      auth: authSection,
      /** Where sessions, lockouts and limits live (memory or Redis). */
      state: stateSection,
      /** Short-lived caches of ILS answers. */
      cache: cacheSection,
      /** Prometheus metrics. */
      metrics: metricsSection,
      /** Logging. */
      log: logSection,
      /** The embedded SIP2 simulator, used only while sip2.host is null. */
      demo: demoSection,
    },
    must('must be a mapping of sections (http, sip2, paia, daia, auth, state, cache, metrics, log, demo)'),
  )
  .superRefine(
    (config, ctx) => {
      // Sections that did not validate arrive as they were written; only a clear case is reported.
      const workers = (config.http as { workers?: unknown } | undefined)?.workers;
      const store = (config.state as { store?: unknown } | undefined)?.store;
      if (typeof workers === 'number' && workers > 1 && store === 'memory') {
        ctx.addIssue({
          code: 'custom',
          path: ['http', 'workers'],
          message:
            'must be 1 while state.store is "memory": each worker would keep its own sessions and counters, so a token issued by one worker would be unknown to the next; set state.store to "redis" (and state.redis.url) to run several workers',
        });
      }
      // Only a lookup in use is held to the call's bound: a gateway without one must not trip over its default.
      const lookup = (config.daia as { records?: { http?: { url?: unknown; timeoutMs?: unknown } } } | undefined)
        ?.records?.http;
      const lookupMs = typeof lookup?.url === 'string' ? lookup.timeoutMs : undefined;
      const callMs = (config.http as { requestTimeoutMs?: unknown } | undefined)?.requestTimeoutMs;
      if (typeof lookupMs === 'number' && typeof callMs === 'number' && lookupMs >= callMs) {
        ctx.addIssue({
          code: 'custom',
          path: ['daia', 'records', 'http', 'timeoutMs'],
          message: `must be below http.requestTimeoutMs (${callMs}): a lookup that hangs must end in time for its record to be answered without items, not the whole call with 504`,
        });
      }
      const host = (config.sip2 as { host?: unknown } | undefined)?.host;
      if (typeof host === 'string') {
        for (const { path, fix } of REAL_ILS_SETTINGS) {
          const value = valueAt(config, path);
          if (value !== undefined && value !== null) continue;
          ctx.addIssue({
            code: 'custom',
            path: [...path],
            message: `is required because sip2.host is set (a real ILS; the built-in demo values apply only to the embedded simulator): set it to ${fix}`,
          });
        }
      }
    },
    { when: () => true },
  )
  // Demo mode (no sip2.host): the demo library's terminal account and institution.
  .transform((config) => {
    const terminal: { user?: string; password?: string; location?: string } = config.sip2.terminal;
    const institution: string | undefined = config.sip2.institution;
    return {
      ...config,
      sip2: {
        ...config.sip2,
        terminal: {
          user: terminal.user ?? DEMO_SIP2.terminal.user,
          password: terminal.password ?? DEMO_SIP2.terminal.password,
          location: terminal.location ?? DEMO_SIP2.terminal.location,
        },
        institution: institution ?? DEMO_SIP2.institution,
      },
    };
  });

/**
 * The validated configuration: the schema's output, deeply readonly (the
 * loader deep-freezes it). What each setting means is documented on the
 * schema above.
 */
export type Config = DeepReadonly<z.output<typeof configSchema>>;
export type HttpTlsConfig = NonNullable<Config['http']['tls']>;
export type Sip2TlsConfig = NonNullable<Config['sip2']['tls']>;

type DeepReadonly<T> = T extends readonly (infer E)[]
  ? readonly DeepReadonly<E>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

type Assert<T extends true> = T;
type MutuallyAssignable<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time check that the demo offers every built-in dialect
type DemoDialectsAreBuiltIn = Assert<MutuallyAssignable<(typeof DEMO_DIALECTS)[number], DialectName>>;
