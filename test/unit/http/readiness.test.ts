import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { mountHealth, type ReadinessState } from '../../../src/http/routes/health.js';

const READY: ReadinessState = { shuttingDown: false, loggedIn: true, connections: 2, online: true };
const DOWN: ReadinessState = {
  shuttingDown: false,
  loggedIn: false,
  sip2Problem: 'connection refused',
  connections: 0,
  online: null,
};

/** /readyz of several libraries, with each library's state as `states` says at the moment of the call. */
function gateway(states: () => Record<string, ReadinessState>, anyLibrary?: boolean) {
  const logged: { level: string; msg: string; fields: Record<string, unknown> }[] = [];
  const log = (level: string) => (fields: Record<string, unknown>, msg: string) => logged.push({ level, msg, fields });
  const logger = { info: log('info'), warn: log('warn') } as never;
  const app = new Hono();
  mountHealth(app, {
    readiness: () => Object.entries(states()).map(([id, state]) => ({ id, state })),
    anyLibrary,
    logger,
  });
  const readyz = async () => {
    const response = await app.request('/readyz');
    return { status: response.status, body: (await response.json()) as { status: string; reasons?: string[] } };
  };
  return { readyz, logged };
}

describe('/readyz of several libraries', () => {
  it('is 503 while one library cannot serve (http.readyWhen every-library), naming it', async () => {
    const { readyz } = gateway(() => ({ 'DE-A': READY, 'DE-B': DOWN }));
    expect(await readyz()).toMatchObject({
      status: 503,
      body: { status: 'not ready', reasons: ['DE-B: no logged-in SIP2 connection: connection refused'] },
    });
  });

  it('is 200 while at least one library can serve with any-library, the others still named; 503 when none can', async () => {
    let b = DOWN;
    let a = READY;
    const { readyz } = gateway(() => ({ 'DE-A': a, 'DE-B': b }), true);
    expect(await readyz()).toMatchObject({
      status: 200,
      body: { status: 'ready', reasons: ['DE-B: no logged-in SIP2 connection: connection refused'] },
    });
    b = READY;
    expect(await readyz()).toEqual({ status: 200, body: expect.not.objectContaining({ reasons: expect.anything() }) });
    a = DOWN;
    b = DOWN;
    expect((await readyz()).status).toBe(503);
  });

  it("logs each change of a library's readiness once, not only the first", async () => {
    let b = READY;
    let c = READY;
    const { readyz, logged } = gateway(() => ({ 'DE-A': READY, 'DE-B': b, 'DE-C': c }));
    await readyz();
    b = DOWN;
    await readyz();
    await readyz();
    c = DOWN;
    await readyz();
    b = READY;
    c = READY;
    await readyz();
    expect(logged.map(({ level, fields }) => [level, fields.libraries])).toEqual([
      ['info', { 'DE-A': 'ready', 'DE-B': 'ready', 'DE-C': 'ready' }],
      ['warn', { 'DE-A': 'ready', 'DE-B': 'not ready', 'DE-C': 'ready' }],
      ['warn', { 'DE-A': 'ready', 'DE-B': 'not ready', 'DE-C': 'not ready' }],
      ['info', { 'DE-A': 'ready', 'DE-B': 'ready', 'DE-C': 'ready' }],
    ]);
  });
});
