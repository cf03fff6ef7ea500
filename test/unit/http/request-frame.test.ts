/**
 * The request frame (request-steps): its parts in order, the finishes of the
 * layers that started in reverse order, each seeing the response the client
 * gets, errors included, as one middleware per part would.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { type RequestLayer, requestFrame } from '../../../src/http/middleware/request-steps/index.js';

function app(refuseAt: string | null, handler: () => Response | never) {
  const seen: string[] = [];
  const layer = (name: string): RequestLayer => ({
    start: () => {
      seen.push(`start ${name}`);
      if (refuseAt === name) throw new Error(`refused by ${name}`);
    },
    finish: (c) => void seen.push(`finish ${name} ${c.res.status}`),
  });
  const hono = new Hono();
  hono.use(
    requestFrame(
      [
        layer('outer'),
        () => {
          seen.push('step');
          if (refuseAt === 'step') throw new Error('refused by step');
        },
        layer('inner'),
      ],
      (error, c) => {
        seen.push(`onError ${error.message}`);
        return c.json({ error: error.message }, 418);
      },
    ),
  );
  hono.get('/', handler);
  return { hono, seen };
}

describe('requestFrame', () => {
  it('starts the parts in order and finishes the layers in reverse, after the response', async () => {
    const { hono, seen } = app(null, () => new Response('ok', { status: 201 }));
    expect((await hono.request('/')).status).toBe(201);
    expect(seen).toEqual(['start outer', 'step', 'start inner', 'finish inner 201', 'finish outer 201']);
  });

  it('renders a refusal by a part with onError and finishes only the layers that started', async () => {
    const { hono, seen } = app('step', () => new Response('never'));
    expect((await hono.request('/')).status).toBe(418);
    expect(seen).toEqual(['start outer', 'step', 'onError refused by step', 'finish outer 418']);
  });

  it('lets the finishes see the error response of a handler, a non-Error thrown wrapped into an Error', async () => {
    const { hono, seen } = app(null, () => {
      throw 'a string';
    });
    const response = await hono.request('/');
    expect(response.status).toBe(418);
    expect(await response.json()).toEqual({ error: 'non-Error value thrown: string' });
    expect(seen.slice(-2)).toEqual(['finish inner 418', 'finish outer 418']);
  });
});
