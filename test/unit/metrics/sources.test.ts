/**
 * What the metrics read from elsewhere: rejected logins counted by the
 * login throttle (LoginAttempt.failed()), through the real login route.
 */
import { describe, expect, it } from 'vitest';
import { LoginThrottle } from '../../../src/auth/login-throttle.js';
import { jsonPost, makeApp } from '../http/helpers.js';

describe('LoginThrottle.stats().failed', () => {
  it('counts failed() once per attempt, and never succeeded() or undo()', () => {
    const throttle = new LoginThrottle();
    const attempt = (user: string) => {
      const gate = throttle.begin(user, '192.0.2.1');
      if (!gate.allowed) throw new Error('refused');
      return gate.attempt;
    };
    const wrong = attempt('a');
    wrong.failed();
    wrong.failed();
    wrong.undo(); // settled already: still one failure
    attempt('b').succeeded();
    attempt('c').undo();
    const late = attempt('d');
    late.succeeded();
    late.failed();
    expect(throttle.stats()).toMatchObject({ failed: 1, lockouts: 0 });
  });

  it('failed() keeps the attempt counted towards a lockout (as an unsettled one)', () => {
    const throttle = new LoginThrottle({ freeAttemptsPerUser: 2, baseDelayMs: 60_000 });
    for (let i = 0; i < 2; i++) {
      const gate = throttle.begin('eve');
      if (!gate.allowed) throw new Error('refused too early');
      gate.attempt.failed();
    }
    expect(throttle.begin('eve').allowed).toBe(false);
    expect(throttle.stats()).toMatchObject({ failed: 2, refused: 1, lockouts: 1 });
  });

  it('the login route reports wrong credentials, but not weak passwords, bad requests or good logins', async () => {
    const throttle = new LoginThrottle({
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
