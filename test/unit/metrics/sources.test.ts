/**
 * What the metrics read from elsewhere: rejected logins counted by the
 * login throttle (LoginAttempt.failed()), through the real login route.
 */
import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { MemoryStore } from '../../../src/state/memory/index.js';
import { jsonPost, makeApp } from '../http/helpers.js';

/** A fresh in-process state store for one throttle. */
const memoryStore = () => new MemoryStore({ maxSessions: 100, maxSessionsPerPatron: 10 });

describe('LoginThrottle.stats().failed', () => {
  it('counts failed() once per attempt, and never succeeded() or undo()', async () => {
    const throttle = new LoginThrottle(memoryStore());
    const attempt = async (user: string) => {
      const gate = await throttle.begin(user, '192.0.2.1');
      if (!gate.allowed) throw new Error('refused');
      return gate.attempt;
    };
    const wrong = await attempt('a');
    await wrong.failed(undefined);
    await wrong.failed(undefined);
    await wrong.undo(); // settled already: still one failure
    await (await attempt('b')).succeeded('b');
    await (await attempt('c')).undo();
    const late = await attempt('d');
    await late.succeeded('d');
    await late.failed(undefined);
    expect(throttle.stats()).toMatchObject({ failed: 1, lockouts: 0 });
  });

  it('failed() counts the attempt towards a lockout', async () => {
    const throttle = new LoginThrottle(memoryStore(), { freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    for (let i = 0; i < 2; i++) {
      const gate = await throttle.begin('eve');
      if (!gate.allowed) throw new Error('refused too early');
      await gate.attempt.failed(undefined);
    }
    expect((await throttle.begin('eve')).allowed).toBe(false);
    expect(throttle.stats()).toMatchObject({ failed: 2, refused: 1, lockouts: 1 });
  });

  it('the login route reports wrong credentials, but not weak passwords, bad requests or good logins', async () => {
    const throttle = new LoginThrottle(memoryStore(), {
      freeAttemptsPerUser: 1000,
      freeAttemptsPerAddress: 1000,
      maxAttemptsPerSecond: 10_000,
    });
    const t = makeApp({ loginThrottle: throttle });
    const post = (body: unknown) => t.app.request('/auth/login', jsonPost(body));
    expect((await post({ username: 'alice', password: 'wrong-pass', grant_type: 'password' })).status).toBe(403);
    expect((await post({ username: 'nobody', password: 'some-pass', grant_type: 'password' })).status).toBe(403);
    expect((await post({ username: 'alice', password: '1234', grant_type: 'password' })).status).toBe(403); // weak: never asked
    expect((await post({ username: 'alice', grant_type: 'password' })).status).not.toBe(200); // malformed
    expect((await post({ username: 'alice', password: 'alice-pass', grant_type: 'password' })).status).toBe(200);
    expect(throttle.stats().failed).toBe(2);
  });
});
