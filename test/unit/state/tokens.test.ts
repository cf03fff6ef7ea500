import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashToken, newToken, TOKEN_LENGTH } from '../../../src/state/tokens.js';

describe('tokens', () => {
  it('are 256-bit base64url strings, all different', () => {
    const tokens = new Set(Array.from({ length: 1000 }, () => newToken()));
    expect(tokens.size).toBe(1000);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(Buffer.from(token, 'base64url')).toHaveLength(32);
    }
    expect(TOKEN_LENGTH).toBe(43);
  });

  it('are hashed with SHA-256 for storage', () => {
    const token = newToken();
    expect(hashToken(token)).toBe(createHash('sha256').update(token).digest('base64url'));
    expect(hashToken(token)).not.toContain(token);
  });
});
