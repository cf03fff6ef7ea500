/**
 * PAIA scopes: which scope each method checks, what a login grants.
 *
 * `change_password` exists in the protocol but is never granted here: the
 * password cannot be changed over SIP2, so the change method always answers
 * 501 not_implemented.
 */

export const SCOPES = ['read_patron', 'read_fees', 'read_items', 'write_items', 'change_password'] as const;
export type Scope = (typeof SCOPES)[number];

/** The PAIA methods this server knows, core and auth. */
export type PaiaMethod = 'patron' | 'items' | 'renew' | 'request' | 'cancel' | 'fees' | 'login' | 'logout' | 'change';

/** The scope each method checks; null for methods that need none (login) or only a valid token (logout). */
export const METHOD_SCOPE: Readonly<Record<PaiaMethod, Scope | null>> = {
  patron: 'read_patron',
  items: 'read_items',
  renew: 'write_items',
  request: 'write_items',
  cancel: 'write_items',
  fees: 'read_fees',
  login: null,
  logout: null,
  change: 'change_password',
};

/** Granted when a login names no scope (spec: the four core scopes). */
export const DEFAULT_LOGIN_SCOPES: readonly Scope[] = ['read_patron', 'read_fees', 'read_items', 'write_items'];

/** Granted at most to an account whose state is not 0 (expired, blocked, fees). */
export const READ_ONLY_SCOPES: readonly Scope[] = ['read_patron', 'read_fees', 'read_items'];

/**
 * The scopes a login may grant, given the account state the ILS reported:
 * the four core scopes for an active account (state 0), the read scopes
 * otherwise. Never change_password.
 */
export function allowedScopes(accountState: number): readonly Scope[] {
  return accountState === 0 ? DEFAULT_LOGIN_SCOPES : READ_ONLY_SCOPES;
}

/**
 * Splits an OAuth scope parameter (space-separated). Undefined, empty or
 * blank means "not given".
 */
export function parseScopeParameter(value: string | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const names = value.split(/[ \t]+/).filter((name) => name.length > 0);
  return names.length === 0 ? undefined : [...new Set(names)];
}

/**
 * requested ∩ allowed, in canonical order. Unknown and non-grantable scopes
 * (change_password) are dropped silently, as OAuth allows. With nothing
 * requested the allowed set is granted.
 */
export function grantScopes(requested: readonly string[] | undefined, allowed: readonly Scope[]): Scope[] {
  if (requested === undefined) return [...allowed];
  return allowed.filter((scope) => requested.includes(scope));
}

/** Space-separated, as in the login response and the X-OAuth-Scopes header. */
export function formatScopes(scopes: readonly string[]): string {
  return scopes.join(' ');
}

/** What a core response lists in X-OAuth-Scopes: never change_password. */
export function coreVisibleScopes(scopes: readonly string[]): readonly string[] {
  // Every core response lists them: the scopes themselves when there is nothing to leave out (never granted today).
  return scopes.includes('change_password') ? scopes.filter((scope) => scope !== 'change_password') : scopes;
}
