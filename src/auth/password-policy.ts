/**
 * Weak passwords (the spec: an auth server MUST follow measures against weak
 * passwords, "including blocking accounts with weak passwords"). The gateway
 * cannot see or change passwords in the ILS; it refuses to issue tokens for
 * logins with a password that is too short or on a deny list, telling the
 * patron to change it at the library.
 */
export interface PasswordPolicyOptions {
  /** Shortest password accepted; 0 switches the length check off. */
  minLength: number;
  /** Passwords refused whatever their length; compared ignoring case, after NFC normalisation and trimming. */
  denyList: readonly string[];
}

/** Common passwords and PINs, refused by default (short on purpose: each one is a guess an attacker tries first). */
export const DEFAULT_DENY_LIST: readonly string[] = [
  'password',
  'passwort',
  '123456',
  '12345678',
  '123456789',
  '12345',
  '1234',
  '0000',
  '1111',
  '111111',
  'qwerty',
  'qwertz',
  'abc123',
  'letmein',
  'iloveyou',
  'admin',
  'welcome',
];

/** The policy when none is given; the configuration's auth.passwordPolicy defaults to it. 4 lets 4-digit library PINs through. */
export const DEFAULT_PASSWORD_POLICY: Readonly<PasswordPolicyOptions> = Object.freeze({
  minLength: 4,
  denyList: DEFAULT_DENY_LIST,
});

/** The message a patron gets: it never says whether the password was right. */
export const WEAK_PASSWORD_MESSAGE =
  'login refused: this password is too weak to be used here; please change your password at your library (at the desk or in the catalogue) and log in with the new one';

export class PasswordPolicy {
  readonly #minLength: number;
  readonly #denied: ReadonlySet<string>;

  constructor(options: PasswordPolicyOptions) {
    if (!Number.isInteger(options.minLength) || options.minLength < 0)
      throw new Error(`minLength must be a whole number >= 0, got ${options.minLength}`);
    this.#minLength = options.minLength;
    this.#denied = new Set(options.denyList.map(normalize).filter((entry) => entry !== ''));
  }

  /** Why a password is weak ("too short", "too common"), or null when the policy accepts it. For tests and logs; never shown verbatim to clients. */
  weakness(password: string): 'too short' | 'too common' | null {
    // Length in code points, so that "émile" is 5 whatever its encoding.
    if ([...password.normalize('NFC')].length < this.#minLength) return 'too short';
    if (this.#denied.has(normalize(password))) return 'too common';
    return null;
  }
}

function normalize(value: string): string {
  return value.normalize('NFC').trim().toLowerCase();
}
