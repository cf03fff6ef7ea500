import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ClientAllowlist } from './client-allowlist.js';
import {
  checkCost,
  hashVerifier,
  parseSecretHash,
  plainVerifier,
  type ScryptHash,
  type SecretVerifier,
  scryptHash,
} from './client-secret.js';
import type { Scope } from './scopes.js';

/**
 * The trusted clients of auth.clients (a discovery system behind single
 * sign-on): each may log patrons in without their password, through the
 * OAuth client credentials grant, from its own addresses and with at most
 * its own scopes.
 */

/** One entry of auth.clients as the configuration gives it (exactly one secret source is set). */
export interface ClientSettings {
  readonly id: string;
  readonly secretHash?: string | undefined;
  readonly secretEnv?: string | undefined;
  readonly secretFile?: string | undefined;
  /** The secret of secretEnv or secretFile, as the configuration loader read it (plainSecretOf). */
  readonly secret?: string | undefined;
  readonly scopes: readonly Scope[];
  readonly allowedAddresses: readonly string[];
}

/** Shortest secret taken from the environment or a file: a client secret is generated, never typed. */
export const MIN_PLAIN_SECRET_LENGTH = 16;

export interface TrustedClient {
  readonly id: string;
  readonly scopes: readonly Scope[];
  readonly addresses: ClientAllowlist;
  readonly verify: SecretVerifier;
}

export class TrustedClients {
  readonly #byId: ReadonlyMap<string, TrustedClient>;
  /**
   * What a secret is checked against when there is no client to check it
   * against (an unknown id, or a client called from outside its addresses):
   * a check that fails and takes as long as a real one, so that the time of
   * the answer does not tell which ids exist.
   */
  readonly checkWithoutClient: SecretVerifier;

  constructor(clients: readonly TrustedClient[], checkWithoutClient?: SecretVerifier) {
    this.#byId = new Map(clients.map((client) => [client.id, client]));
    this.checkWithoutClient = checkWithoutClient ?? plainVerifier(randomBytes(32).toString('base64url'));
  }

  /**
   * From the loaded configuration: the secrets of secretEnv and secretFile are
   * the ones the loader read (`secret`); nothing is read here. Throws, naming
   * the client, when one is missing (the loader reports that before, at start).
   *
   * Every check takes about as long: when any client has a secretHash, the
   * plain secrets are hashed here with the parameters of the costliest one,
   * and so is the check without a client; with plain secrets only, all of
   * them are compared by SHA-256. (A secretHash cheaper than another's stays
   * cheaper: the loader warns about that.)
   */
  static async fromSettings(settings: readonly ClientSettings[]): Promise<TrustedClients> {
    const hashes = new Map<string, ScryptHash>();
    for (const entry of settings) {
      if (entry.secretHash === undefined) continue;
      const parsed = parseSecretHash(entry.secretHash);
      if (typeof parsed === 'string')
        throw new Error(`auth.clients: client ${JSON.stringify(entry.id)}: secretHash ${parsed}`);
      hashes.set(entry.id, parsed);
    }
    const costliest = [...hashes.values()].reduce<ScryptHash | null>(
      (most, hash) => (most === null || checkCost(hash) > checkCost(most) ? hash : most),
      null,
    );
    const verifierOf = async (secret: string): Promise<SecretVerifier> =>
      costliest === null ? plainVerifier(secret) : hashVerifier(await scryptHash(secret, costliest));
    const clients = await Promise.all(
      settings.map(async (entry) => {
        const hash = hashes.get(entry.id);
        return {
          id: entry.id,
          scopes: entry.scopes,
          addresses: new ClientAllowlist(entry.allowedAddresses),
          verify: hash !== undefined ? hashVerifier(hash) : await verifierOf(plainSecretOrThrow(entry)),
        };
      }),
    );
    return new TrustedClients(clients, await verifierOf(randomBytes(32).toString('base64url')));
  }

  get size(): number {
    return this.#byId.size;
  }

  find(id: string): TrustedClient | undefined {
    return this.#byId.get(id);
  }
}

/** The secret of a client given by secretEnv or secretFile, or what is wrong with it; undefined for secretHash. */
export function plainSecretOf(
  entry: Pick<ClientSettings, 'secretEnv' | 'secretFile'>,
  env: NodeJS.ProcessEnv,
): { secret: string } | { problem: string } | undefined {
  let secret: string;
  if (entry.secretEnv !== undefined) {
    const value = env[entry.secretEnv];
    if (value === undefined || value === '') return { problem: `names ${entry.secretEnv}, which is not set` };
    secret = value;
  } else if (entry.secretFile !== undefined) {
    try {
      // One final line break is the file's, not the secret's.
      secret = readFileSync(entry.secretFile, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      return { problem: `cannot read ${entry.secretFile}: ${(error as Error).message}` };
    }
  } else {
    return undefined;
  }
  if (secret.length < MIN_PLAIN_SECRET_LENGTH) {
    return {
      problem: `gives a secret shorter than ${MIN_PLAIN_SECRET_LENGTH} characters; generate one, e.g. with \`openssl rand -base64 32\``,
    };
  }
  return { secret };
}

function plainSecretOrThrow(entry: ClientSettings): string {
  if (entry.secret !== undefined) return entry.secret;
  const source = entry.secretEnv !== undefined ? 'secretEnv' : entry.secretFile !== undefined ? 'secretFile' : null;
  throw new Error(
    `auth.clients: client ${JSON.stringify(entry.id)} has no secret${source === null ? '' : ` (its ${source} was not read: load the configuration with loadConfig)`}`,
  );
}

/**
 * The client id and secret of an HTTP Basic Authorization header, each
 * form-urlencoded before it was put there (RFC 6749, 2.3.1); null when the
 * header is missing or not Basic credentials. `secretAsSent`: the secret
 * undecoded, when that differs, for clients that send it as it is (VuFind's
 * PAIA driver does); client ids are made of characters form encoding keeps.
 */
export function basicCredentials(
  header: string | undefined,
): { id: string; secret: string; secretAsSent?: string } | null {
  const match = /^Basic[ \t]+([A-Za-z0-9+/]+=*)[ \t]*$/i.exec(header ?? '');
  if (match === null) return null;
  const decoded = Buffer.from(match[1] as string, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return null;
  const id = decoded.slice(0, colon);
  const sent = decoded.slice(colon + 1);
  let secret: string | undefined;
  try {
    secret = formDecode(sent);
  } catch {
    secret = undefined;
  }
  if (secret === undefined) return { id, secret: sent };
  return secret === sent ? { id, secret } : { id, secret, secretAsSent: sent };
}

function formDecode(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, ' '));
}
