import { z } from 'zod';
import { secretHashProblem } from '../../auth/client-secret.js';
import { LOGIN_THROTTLE_DEFAULTS } from '../../auth/login-throttle.js';
import { DEFAULT_PASSWORD_POLICY } from '../../auth/password-policy.js';
import { DEFAULT_LOGIN_SCOPES } from '../../auth/scopes.js';
import { APP_DEFAULTS } from '../../http/defaults.js';
import { clientList, flag, integer, milliseconds, must, section, textList } from './validators.js';

/** auth: access tokens, sessions, brute-force protection and trusted clients. */

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
  })
  // Not a setting (a file giving `secret` is refused as an unknown key): the secret of secretEnv or secretFile as
  // the loader read it (config/load.ts), so that nothing after it reads the environment or the file again.
  .transform((client): typeof client & { secret?: string | undefined } => client);

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

export const authSection = section({
  /** How long an access token is valid after login. */
  tokenLifetimeMs: milliseconds(1000, 2_592_000_000, 3_600_000).default(3_600_000),
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
    /** First lockout delay; it doubles with each further failure. */
    lockoutBaseMs: milliseconds(1000, 3_600_000, LOGIN_THROTTLE_DEFAULTS.baseDelayMs).default(
      LOGIN_THROTTLE_DEFAULTS.baseDelayMs,
    ),
    /** Longest lockout delay. */
    lockoutMaxMs: milliseconds(1000, 86_400_000, LOGIN_THROTTLE_DEFAULTS.maxDelayMs).default(
      LOGIN_THROTTLE_DEFAULTS.maxDelayMs,
    ),
    /** Longest an attempt from an address past its free failures waits before it is checked (0: never). */
    maxSlowdownMs: milliseconds(0, 60_000, LOGIN_THROTTLE_DEFAULTS.maxSlowdownMs).default(
      LOGIN_THROTTLE_DEFAULTS.maxSlowdownMs,
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
