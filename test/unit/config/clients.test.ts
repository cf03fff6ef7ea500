import { describe, expect, it } from 'vitest';
import { hashSecret } from '../../../src/auth/client-secret.js';
import { loadConfig } from '../../../src/config/index.js';
import { problemAt, problemLines, tempDir } from './helpers.js';

const tmp = tempDir();
const HASH = await hashSecret('hashed-client-secret-1', 1024);
tmp.write('secrets/vufind.txt', 'file-client-secret-123\n');

/** A config file with these auth.clients lines (YAML, indented under clients:). */
const withClients = (name: string, lines: string) => tmp.write(name, `auth:\n  clients:\n${lines}`);

describe('auth.clients', () => {
  it('is off by default: no clients', () => {
    expect(loadConfig({ env: {} }).auth.clients).toEqual([]);
  });

  it('loads clients with their secret as a hash, from the environment or from a file relative to the config file', () => {
    const file = withClients(
      'good.yaml',
      [
        `    - id: hashed`,
        `      secretHash: "${HASH}"`,
        `      scopes: [read_patron, read_items]`,
        `      allowedAddresses: ["192.0.2.10", "2001:db8::/32"]`,
        `    - id: from-env`,
        `      secretEnv: VUFIND_SECRET`,
        `      allowedAddresses: ["10.0.0.0/8"]`,
        `    - id: from-file`,
        `      secretFile: secrets/vufind.txt`,
        `      allowedAddresses: ["10.0.0.1"]`,
        '',
      ].join('\n'),
    );
    const { clients } = loadConfig({ file, env: { VUFIND_SECRET: 'env-client-secret-123' } }).auth;
    expect(clients.map((client) => client.id)).toEqual(['hashed', 'from-env', 'from-file']);
    expect(clients[0]?.scopes).toEqual(['read_patron', 'read_items']);
    // Without scopes: the four core scopes.
    expect(clients[1]?.scopes).toEqual(['read_patron', 'read_fees', 'read_items', 'write_items']);
    expect(clients[2]?.secretFile).toBe(`${tmp.dir}/secrets/vufind.txt`);
  });

  it('can be given by PAIA_AUTH_CLIENTS as a JSON list', () => {
    const clients = [{ id: 'vufind', secretHash: HASH, allowedAddresses: ['192.0.2.10'] }];
    expect(loadConfig({ env: { PAIA_AUTH_CLIENTS: JSON.stringify(clients) } }).auth.clients[0]?.id).toBe('vufind');
  });

  it.each([
    [
      'no secret',
      '    - id: a\n      allowedAddresses: ["192.0.2.1"]\n',
      'auth.clients.0',
      /exactly one way, by secretHash, secretEnv or secretFile \(none is set\)/,
    ],
    [
      'two secrets',
      `    - id: a\n      secretHash: "${HASH}"\n      secretEnv: X_SECRET\n      allowedAddresses: ["192.0.2.1"]\n`,
      'auth.clients.0',
      /secretHash and secretEnv are set/,
    ],
    [
      'a hash of another kind',
      '    - id: a\n      secretHash: "$2b$10$abcdefghijklmnop"\n      allowedAddresses: ["192.0.2.1"]\n',
      'auth.clients.0.secretHash',
      /paia-sip2 hash-secret/,
    ],
    [
      'change_password among its scopes',
      `    - id: a\n      secretHash: "${HASH}"\n      scopes: [read_patron, change_password]\n      allowedAddresses: ["192.0.2.1"]\n`,
      'auth.clients.0.scopes.1',
      /read_patron, read_fees, read_items, write_items/,
    ],
    [
      'no allowed address',
      `    - id: a\n      secretHash: "${HASH}"\n      allowedAddresses: []\n`,
      'auth.clients.0.allowedAddresses',
      /at least one IP address or CIDR block/,
    ],
    [
      'an address that is none',
      `    - id: a\n      secretHash: "${HASH}"\n      allowedAddresses: ["vufind.example.org"]\n`,
      'auth.clients.0.allowedAddresses',
      /not an IP address or CIDR block/,
    ],
    [
      'a space in its id',
      `    - id: my client\n      secretHash: "${HASH}"\n      allowedAddresses: ["192.0.2.1"]\n`,
      'auth.clients.0.id',
      /letters, digits, ".", "_", "~" or "-"/,
    ],
    [
      'a misspelt key',
      `    - id: a\n      secret: hunter2hunter2hunter2\n      secretHash: "${HASH}"\n      allowedAddresses: ["192.0.2.1"]\n`,
      'auth.clients.0.secret',
      /^is not a known setting \(the settings in auth\.clients\.0 are id, secretHash, secretEnv, secretFile, scopes, allowedAddresses;/,
    ],
  ])('refuses a client with %s, naming the client and field', (name, lines, path, why) => {
    const file = withClients(`${name.replace(/\W+/g, '-')}.yaml`, lines);
    expect(problemAt({ file, env: {} }, path)).toMatch(why);
  });

  it('refuses the same id twice', () => {
    const entry = `      secretHash: "${HASH}"\n      allowedAddresses: ["192.0.2.1"]\n`;
    const file = withClients('twice.yaml', `    - id: a\n${entry}    - id: a\n${entry}`);
    expect(problemAt({ file, env: {} }, 'auth.clients.1.id')).toMatch(/names the client "a" a second time/);
  });

  it('refuses at start a secretEnv that is not set and a secretFile that cannot be read, without showing any secret', () => {
    const file = withClients(
      'missing.yaml',
      [
        `    - id: env`,
        `      secretEnv: NOT_SET_SECRET`,
        `      allowedAddresses: ["192.0.2.1"]`,
        `    - id: file`,
        `      secretFile: secrets/none.txt`,
        `      allowedAddresses: ["192.0.2.1"]`,
        `    - id: short`,
        `      secretEnv: SHORT_SECRET`,
        `      allowedAddresses: ["192.0.2.1"]`,
        '',
      ].join('\n'),
    );
    const lines = problemLines({ file, env: { SHORT_SECRET: 'tiny-pw' } });
    expect(lines).toEqual([
      expect.stringMatching(/^auth\.clients\.0\.secretEnv: names NOT_SET_SECRET, which is not set \(client "env"\)/),
      expect.stringMatching(/^auth\.clients\.1\.secretFile: cannot read .*secrets\/none\.txt: .*\(client "file"\)/),
      expect.stringMatching(/^auth\.clients\.2\.secretEnv: gives a secret shorter than 16 characters/),
    ]);
    expect(lines.join('\n')).not.toContain('tiny-pw');
  });
});
