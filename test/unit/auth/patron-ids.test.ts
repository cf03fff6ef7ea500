import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PatronIds } from '../../../src/auth/patron-ids.js';

const SECRET = 'a-server-secret-of-some-length';

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
});
