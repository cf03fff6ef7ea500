import { z } from 'zod';
import {
  BUILTIN_DIALECTS_TEXT,
  CHARSETS,
  DEFAULT_CIRCUIT_OPTIONS,
  DEFAULT_MAX_LIST_ENTRIES,
  isTimeZone,
  minutesOf,
  POOL_DEFAULTS,
  WEEKDAYS,
} from '../../sip2/index.js';
import {
  filePath,
  flag,
  host,
  integer,
  milliseconds,
  must,
  PLACEHOLDER_SECRET,
  port,
  secret,
  section,
  sipText,
  UNSET,
} from './validators.js';

/** sip2: the library system, its connections and how it fills SIP2. */

const DIALECT_MUST_BE = `must be a dialect name (${BUILTIN_DIALECTS_TEXT}) or the path of a dialect YAML file`;

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
  password: secret(
    sipText('must be the SIP2 terminal password', { allowEmpty: true })
      .refine((value) => !PLACEHOLDER_SECRET.test(value), {
        error: 'is still the placeholder from the example: set the password of the SIP2 terminal account',
      })
      .optional()
      .default(UNSET),
  ),
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
  keepaliveMs: milliseconds(1000, 86_400_000, 20_000, 'off').default(POOL_DEFAULTS.keepaliveIntervalMs),
  /** Replace connections older than this. 0 = never. */
  maxLifetimeMs: milliseconds(1000, 604_800_000, 3_600_000, 'never').default(POOL_DEFAULTS.maxLifetimeMs),
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

export const sip2Section = section({
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
  /** How the ILS fills SIP2: a built-in dialect (config/dialects/: generic, koha ...) or the path of a dialect YAML file. */
  dialect: z.string(must(DIALECT_MUST_BE)).min(1, must(DIALECT_MUST_BE)).default('generic'),
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
