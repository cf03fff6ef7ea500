import { z } from 'zod';
import { APP_DEFAULTS, DEFAULT_CORS_ORIGINS } from '../../http/defaults.js';
import { filePath, flag, host, hostProblem, integer, must, section, textList } from './validators.js';

/** http: where PAIA clients connect, and the HTTP server's own limits. */

/** http.readyWhen: with several libraries, /readyz is 200 when every library is ready, or when any is. */
const READY_WHEN = ['every-library', 'any-library'] as const;

/** Most worker processes (http.workers): far beyond the cores of any host the gateway runs on. */
const MAX_WORKERS = 64;

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

const httpTls = z.strictObject(
  {
    /** The PEM certificate (with intermediate certificates) the gateway presents to clients. */
    cert: filePath('must be the path of the PEM certificate file (with its chain) the gateway presents'),
    /** The certificate's PEM private key. */
    key: filePath('must be the path of the PEM private key file of http.tls.cert'),
  },
  must('must be a section with "cert" and "key" (PEM file paths), or null to serve plain HTTP'),
);

export const httpSection = section({
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
  /**
   * With several libraries (libraries): when /readyz answers 200. "every-library": only when every
   * library can serve (a load balancer then takes the whole gateway out while one library's ILS is down
   * or in maintenance); "any-library": when at least one can (the others' calls answer 503 meanwhile).
   * Without libraries it changes nothing.
   */
  readyWhen: z.enum(READY_WHEN, must(`must be one of ${READY_WHEN.join(', ')}`)).default('every-library'),
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
