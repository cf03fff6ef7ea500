import { resolve } from 'node:path';
import { ClientAllowlist } from '../../auth/client-allowlist.js';
import { ClientCredentialsLogin } from '../../auth/client-login.js';
import { LoginService } from '../../auth/login.js';
import { LoginThrottle, type LoginThrottleOptions } from '../../auth/login-throttle.js';
import { PasswordPolicy, type PasswordPolicyOptions } from '../../auth/password-policy.js';
import { type PatronIdMode, PatronIds } from '../../auth/patron-ids.js';
import { TokenRateLimit } from '../../auth/token-rate-limit.js';
import { type ClientSettings, TrustedClients } from '../../auth/trusted-clients.js';
import type { Backend } from '../../backend/types.js';
import { type Config, sentinelAddresses } from '../../config/index.js';
import type { Logger } from '../../log.js';
import { createStateStore, type StateStore, type StateStoreSettings } from '../../state/index.js';

/**
 * The state and auth side: the state store (sessions, counters, lockouts,
 * invalidations between instances) and the logins over it, from their
 * options (stateOptions reads the configuration once).
 */

/** Logins: brute-force protection, scopes, patron ids, trusted clients. */
export interface AuthOptions {
  /** auth.requestsPerMinute per token. */
  requestsPerMinute: number;
  /** auth.allowedClients: who may log in at all. */
  allowedClients: readonly string[];
  /** The login throttle's settings; trusted addresses are those of allowedClients. */
  throttle: Omit<LoginThrottleOptions, 'trusted'> & {
    trusted: { freeAttemptsPerAddress: number | undefined; attemptsPerSecond: number | undefined };
  };
  patronId: PatronIdMode;
  patronIdSecret: string | null;
  passwordPolicy: PasswordPolicyOptions;
  tokenLifetimeMs: number;
  /** auth.clients, with the secrets the configuration loader read; [] turns the client credentials grant off. */
  clients: readonly ClientSettings[];
}

export interface StateOptions {
  store: StateStoreSettings;
  auth: AuthOptions;
}

export function stateOptions(config: Config): StateOptions {
  const { auth, paia } = config;
  return {
    store: stateStoreSettings(config),
    auth: {
      requestsPerMinute: auth.requestsPerMinute,
      allowedClients: auth.allowedClients,
      throttle: {
        freeAttemptsPerUser: auth.bruteForce.freeFailuresPerUser,
        freeAttemptsPerAddress: auth.bruteForce.freeFailuresPerAddress,
        baseDelayMs: auth.bruteForce.lockoutBaseMs,
        maxDelayMs: auth.bruteForce.lockoutMaxMs,
        maxSlowdownMs: auth.bruteForce.maxSlowdownMs,
        maxAttemptsPerSecond: auth.maxLoginsPerSecond,
        // No login outlives its call's deadline: an attempt in flight stops counting then, even if its process died.
        attemptTtlMs: config.http.requestTimeoutMs,
        // Usernames and barcodes in the store and the log as keyed hashes: the same key on every instance.
        keySecret: paia.patronIdSecret,
        trusted: {
          freeAttemptsPerAddress: auth.allowedClientLimits.freeFailuresPerAddress ?? undefined,
          attemptsPerSecond: auth.allowedClientLimits.loginsPerSecond ?? undefined,
        },
      },
      patronId: paia.patronId,
      patronIdSecret: paia.patronIdSecret,
      passwordPolicy: auth.passwordPolicy,
      tokenLifetimeMs: auth.tokenLifetimeMs,
      clients: auth.clients,
    },
  };
}

/** The state store's settings: state.*, the session bounds, and the key of the hashes in its key names. */
export function stateStoreSettings(config: Config): StateStoreSettings {
  const { dir, redis } = config.state;
  const { sentinels, sentinelMaster, sentinelPassword, tls, ...rest } = redis;
  return {
    ...config.state,
    redis: {
      ...rest,
      // The schema has checked both: sentinels come with their master's name, and each is host:port.
      sentinel:
        sentinels.length === 0 || sentinelMaster === null
          ? null
          : {
              sentinels: sentinelAddresses(sentinels),
              masterName: sentinelMaster,
              password: sentinelPassword,
              tls,
            },
    },
    // Still relative only when it is the default: the working directory's, where `npm start` runs.
    dir: dir === null ? null : resolve(dir),
    maxSessions: config.auth.maxSessions,
    maxSessionsPerPatron: config.auth.maxSessionsPerPatron,
    keySecret: config.paia.patronIdSecret,
  };
}

/**
 * The state store, connected before the gateway takes calls. A Redis that
 * does not answer is not fatal: the gateway starts, says why in the log and
 * in /readyz, answers calls that need it with 503, and is ready as soon as
 * the store comes back (ioredis keeps reconnecting).
 */
export async function openStore(settings: StateStoreSettings, logger: Logger): Promise<StateStore> {
  const store = await createStateStore(settings, logger.child({ component: 'state' }));
  if (store.kind === 'redis') {
    try {
      await store.ready(settings.redis.connectTimeoutMs);
    } catch (error) {
      const check =
        settings.redis.sentinel === null
          ? 'that Redis runs and that state.redis.url (host, port, password, rediss:// for TLS) is right'
          : 'that the sentinels run and name a master under state.redis.sentinelMaster, that the master runs, and that state.redis.sentinels, password, sentinelPassword and tls are right';
      logger.error(
        { component: 'state', error: (error as Error).message, problem: store.health().problem },
        `the Redis state store does not answer: logins and calls with a token get 503 until it does. Check ${check}`,
      );
    }
  }
  return store;
}

/** The logins over the store and the backend. */
export interface AuthParts {
  readonly rateLimit: TokenRateLimit;
  readonly allowedClients: ClientAllowlist;
  readonly loginThrottle: LoginThrottle;
  readonly login: LoginService;
  /** The client credentials grant; undefined unless auth.clients names a client. */
  readonly clientLogin: ClientCredentialsLogin | undefined;
}

export async function authParts(options: AuthOptions, store: StateStore, backend: Backend): Promise<AuthParts> {
  const { sessions } = store;
  const rateLimit = new TokenRateLimit(store, options.requestsPerMinute);
  const allowedClients = new ClientAllowlist(options.allowedClients);
  const loginThrottle = new LoginThrottle(store, {
    ...options.throttle,
    // Own limits only for addresses the sysadmin named; an empty allowlist names none.
    trusted: {
      includes: (address) => !allowedClients.open && allowedClients.allows(address),
      ...options.throttle.trusted,
    },
  });
  const patronIds = new PatronIds(options.patronId, options.patronIdSecret);
  const login = new LoginService({
    backend,
    sessions,
    patronIds,
    throttle: loginThrottle,
    passwordPolicy: new PasswordPolicy(options.passwordPolicy),
    allowedClients,
    tokenLifetimeMs: options.tokenLifetimeMs,
  });
  // Off unless auth.clients names a client; their secrets are the ones the configuration loader read and checked.
  const clientLogin =
    options.clients.length === 0
      ? undefined
      : new ClientCredentialsLogin({
          clients: await TrustedClients.fromSettings(options.clients),
          backend,
          sessions,
          patronIds,
          throttle: loginThrottle,
          tokenLifetimeMs: options.tokenLifetimeMs,
        });
  return {
    rateLimit,
    allowedClients,
    loginThrottle,
    login,
    clientLogin,
  };
}
