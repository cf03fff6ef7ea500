import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MIN_PATRON_ID_SECRET_LENGTH, PatronIds } from '../../../src/auth/patron-ids.js';
import { configSchema } from '../../../src/config/index.js';

const SECRET = 'a-server-secret-of-some-length-0123456789';

describe('PatronIds', () => {
  it('barcode mode uses the barcode itself', () => {
    expect(new PatronIds('barcode').fromBarcode('1001')).toBe('1001');
    expect(new PatronIds('barcode', null).fromBarcode('Émile/2')).toBe('Émile/2');
  });

  it('opaque mode is HMAC-SHA256(secret, barcode) in base64url, stable and secret-dependent', () => {
    const ids = new PatronIds('opaque', SECRET);
    const id = ids.fromBarcode('1001');
    expect(id).toBe(createHmac('sha256', SECRET).update('1001').digest('base64url'));
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(id).not.toContain('1001');
    expect(ids.fromBarcode('1001')).toBe(id);
    expect(ids.fromBarcode('1002')).not.toBe(id);
    expect(new PatronIds('opaque', `${SECRET}!`).fromBarcode('1001')).not.toBe(id);
  });

  it('opaque mode refuses a missing or short secret', () => {
    expect(() => new PatronIds('opaque')).toThrow(/secret/);
    expect(() => new PatronIds('opaque', 'short')).toThrow(/secret/);
    expect(() => new PatronIds('bogus' as never)).toThrow(/mode/);
  });

  it('opaque mode takes a secret of 32 characters, not one of 31, as the configuration does', () => {
    expect(MIN_PATRON_ID_SECRET_LENGTH).toBe(32);
    expect(() => new PatronIds('opaque', 'k'.repeat(31))).toThrow(
      'opaque patron ids need a secret of at least 32 characters',
    );
    expect(new PatronIds('opaque', 'k'.repeat(32)).fromBarcode('1001')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const accepts = (secret: string) =>
      configSchema.safeParse({ paia: { patronId: 'opaque', patronIdSecret: secret } }).success;
    expect(accepts('k'.repeat(31))).toBe(false);
    expect(accepts('k'.repeat(32))).toBe(true);
  });
});
