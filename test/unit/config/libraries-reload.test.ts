import { describe, expect, it } from 'vitest';
import { ConfigError, reloadConfig } from '../../../src/config/index.js';
import { planReload } from '../../../src/gateway/libraries-reload.js';
import { tempDir } from './helpers.js';

/**
 * The configuration as SIGHUP reads it again (issue 29): a library whose
 * entry is invalid is set aside with its problems, any other problem stops
 * the reload; and what the gateway makes of it (planReload).
 */
const tmp = tempDir();
let counter = 0;
const file = (text: string) => {
  counter += 1;
  return { file: tmp.write(`reload${counter}.yaml`, text), env: {} };
};
const TOP = `sip2:
  host: ils.example.org
  institution: X
  terminal: { user: paia-gateway, password: gateway-secret, location: "" }
paia:
  itemUri: "https://lib.example.org/item/{barcode}"
  editionUri: "https://lib.example.org/title/{title}"
`;
const lib = (id: string, sip2: string) => `  ${id}:\n    sip2: ${sip2}\n`;

describe('reloadConfig', () => {
  it('sets an invalid library aside, naming it, and keeps the valid ones', () => {
    const { config, refused } = reloadConfig(
      file(`${TOP}libraries:\n${lib('DE-A', '{ port: 6001 }')}${lib('DE-B', '{ port: "x" }')}${lib('docs', '{}')}`),
    );
    expect(config.libraries?.map(({ id }) => id)).toEqual(['DE-A']);
    expect(refused.map(({ id }) => id).sort()).toEqual(['DE-B', 'docs']);
    expect(refused.find(({ id }) => id === 'DE-B')?.problems[0]?.path).toBe('libraries[DE-B].sip2.port');
  });

  it('throws as at start for a problem outside a library, or a file that does not parse', () => {
    expect(() => reloadConfig(file(`sip2:\n  port: "x"\nlibraries:\n${lib('DE-A', '{ port: 6001 }')}`))).toThrow(
      ConfigError,
    );
    expect(() => reloadConfig(file('libraries:\n  DE-A: [unclosed\n'))).toThrow(ConfigError);
  });
});

describe('planReload', () => {
  const start = reloadConfig(
    file(
      `${TOP}libraries:\n${lib('DE-A', '{ port: 6001 }')}${lib('DE-B', '{ port: 6002 }')}${lib('DE-C', '{ port: 6003 }')}`,
    ),
  ).config;
  const current = start.libraries ?? [];

  it('adds, replaces, removes, keeps refused and leaves the unchanged alone', () => {
    const next = reloadConfig(
      file(
        `${TOP}libraries:\n${lib('DE-B', '{ port: 6002 }')}${lib('DE-C', '{ port: 7003 }')}${lib('DE-D', '{ port: 6004 }')}${lib('DE-A', '{ port: "x" }')}`,
      ),
    );
    const plan = planReload(
      start,
      current,
      next.config,
      next.refused.map(({ id }) => id),
    );
    expect(plan.added.map(({ id }) => id)).toEqual(['DE-D']);
    expect(plan.replaced.map(({ id }) => id)).toEqual(['DE-C']);
    expect(plan.replaced[0]?.config.sip2.port).toBe(7003);
    expect(plan.unchanged).toEqual(['DE-B']);
    expect(plan.kept).toEqual(['DE-A']);
    expect(plan.removed).toEqual([]);
    expect(plan.notApplied).toEqual([]);
  });

  it("keeps a running library's paia.patronIdSecret until a restart, naming it, and applies the rest", () => {
    const key = (k: string) => `paia: { patronIdSecret: "${k.repeat(40)}" }`;
    const withKey = (k: string, port: number) => `  DE-A:\n    sip2: { port: ${port} }\n    ${key(k)}\n`;
    const running = reloadConfig(file(`${TOP}libraries:\n${withKey('a', 6001)}`)).config;
    const first = running.libraries ?? [];
    const onlyKey = planReload(
      running,
      first,
      reloadConfig(file(`${TOP}libraries:\n${withKey('b', 6001)}`)).config,
      [],
    );
    expect(onlyKey.notApplied).toEqual(['libraries[DE-A].paia.patronIdSecret']);
    expect(onlyKey.unchanged).toEqual(['DE-A']);
    const both = planReload(running, first, reloadConfig(file(`${TOP}libraries:\n${withKey('b', 7001)}`)).config, []);
    expect(both.replaced[0]?.config.sip2.port).toBe(7001);
    expect(both.replaced[0]?.config.paia.patronIdSecret).toBe('a'.repeat(40));
    const added = planReload(running, [], reloadConfig(file(`${TOP}libraries:\n${withKey('b', 6001)}`)).config, []);
    expect(added.added[0]?.config.paia.patronIdSecret).toBe('b'.repeat(40));
  });

  it("names the process's settings that changed and builds new libraries on the running ones", () => {
    const next = reloadConfig(
      file(`${TOP}http:\n  port: 9999\nauth:\n  maxSessions: 7\nlibraries:\n${lib('DE-A', '{ port: 6001 }')}`),
    );
    const plan = planReload(start, current, next.config, []);
    expect(plan.notApplied).toEqual(['http.port', 'auth.maxSessions']);
    expect(plan.unchanged).toEqual(['DE-A']);
    expect(plan.removed).toEqual(['DE-B', 'DE-C']);
    const added = planReload(start, [], next.config, []).added[0];
    expect(added?.config.http.port).toBe(start.http.port);
    expect(added?.config.auth.maxSessions).toBe(start.auth.maxSessions);
  });
});
