import { describe, expect, it } from 'vitest';
import {
  allowedScopes,
  coreVisibleScopes,
  DEFAULT_LOGIN_SCOPES,
  formatScopes,
  grantScopes,
  METHOD_SCOPE,
  parseScopeParameter,
  READ_ONLY_SCOPES,
  SCOPES,
} from '../../../src/auth/scopes.js';

describe('scopes', () => {
  it('knows the five scopes and the scope of each method', () => {
    expect(SCOPES).toEqual(['read_patron', 'read_fees', 'read_items', 'write_items', 'change_password']);
    expect(METHOD_SCOPE).toMatchObject({
      patron: 'read_patron',
      items: 'read_items',
      renew: 'write_items',
      request: 'write_items',
      cancel: 'write_items',
      fees: 'read_fees',
      change: 'change_password',
      login: null,
      logout: null,
    });
  });

  it('grants the four core scopes by default and read scopes to inactive accounts, never change_password', () => {
    expect(formatScopes(DEFAULT_LOGIN_SCOPES)).toBe('read_patron read_fees read_items write_items');
    expect(formatScopes(READ_ONLY_SCOPES)).toBe('read_patron read_fees read_items');
    expect(allowedScopes(0)).toEqual(DEFAULT_LOGIN_SCOPES);
    for (const state of [1, 2, 3, 4]) expect(allowedScopes(state)).toEqual(READ_ONLY_SCOPES);
    for (const state of [0, 1, 2, 3, 4]) expect(allowedScopes(state)).not.toContain('change_password');
  });

  it('grants requested ∩ allowed in canonical order', () => {
    expect(grantScopes(undefined, DEFAULT_LOGIN_SCOPES)).toEqual([...DEFAULT_LOGIN_SCOPES]);
    const vufind = parseScopeParameter('read_patron read_fees read_items write_items change_password');
    expect(grantScopes(vufind, DEFAULT_LOGIN_SCOPES)).toEqual([...DEFAULT_LOGIN_SCOPES]);
    expect(grantScopes(['write_items', 'read_patron', 'bogus'], DEFAULT_LOGIN_SCOPES)).toEqual([
      'read_patron',
      'write_items',
    ]);
    expect(grantScopes(['write_items'], READ_ONLY_SCOPES)).toEqual([]);
  });

  it('parses the scope parameter; blank means not given', () => {
    expect(parseScopeParameter(undefined)).toBeUndefined();
    expect(parseScopeParameter('')).toBeUndefined();
    expect(parseScopeParameter('   ')).toBeUndefined();
    expect(parseScopeParameter(' read_items  read_items read_fees')).toEqual(['read_items', 'read_fees']);
  });

  it('hides change_password from core scope headers', () => {
    expect(coreVisibleScopes(['read_patron', 'change_password'])).toEqual(['read_patron']);
  });
});
