import { describe, expect, it } from 'vitest';
import { fakeDaia, makeApp } from './helpers.js';

const daia = fakeDaia(2);

/** The URL of a response's Link rel="next" header. */
function nextLink(response: Response): URL {
  const match = /^<([^>]+)>; rel="next"$/.exec(response.headers.get('link') ?? '');
  expect(match, response.headers.get('link') ?? '(no Link header)').not.toBeNull();
  return new URL(match![1]!);
}

describe('DAIA next links', () => {
  it('without http.publicUrl, the link is the request URL with the remaining ids', async () => {
    const { app } = makeApp({ basePath: '/paia', daia });
    const link = nextLink(await app.request('http://127.0.0.1:8080/paia/daia?format=json&id=a|b|c|d'));
    expect(link.origin).toBe('http://127.0.0.1:8080');
    expect(link.pathname).toBe('/paia/daia');
    expect(link.searchParams.get('id')).toBe('c|d');
    expect(link.searchParams.get('format')).toBe('json');
  });

  it('with http.publicUrl, the link starts with it, not with the address a proxy forwarded to', async () => {
    const { app } = makeApp({ basePath: '/paia', publicUrl: 'https://lib.example.org/services/paia/', daia });
    const link = nextLink(await app.request('http://127.0.0.1:8080/paia/daia?format=json&id=a|b|c&callback=cb'));
    expect(link.href.startsWith('https://lib.example.org/services/paia/daia?')).toBe(true);
    expect(link.port).toBe('');
    expect(link.searchParams.get('id')).toBe('c');
    expect(link.searchParams.get('callback')).toBe('cb');
  });

  it('with an http.publicUrl at the root of its host, the link is {publicUrl}/daia', async () => {
    const { app } = makeApp({ publicUrl: 'https://daia.example.org', daia });
    const link = nextLink(await app.request('http://127.0.0.1:8080/daia?format=json&id=a|b|c'));
    expect(link.origin + link.pathname).toBe('https://daia.example.org/daia');
    expect(link.searchParams.get('id')).toBe('c');
  });

  it('refuses to start with an http.publicUrl that is not a URL', () => {
    expect(() => makeApp({ publicUrl: 'lib.example.org/paia', daia })).toThrow();
  });
});
