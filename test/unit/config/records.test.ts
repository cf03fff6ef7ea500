/**
 * The daia.records settings: what a sysadmin gets told when the mapping
 * file, the lookup URL, its field path, its (secret) headers or the record
 * prefix are wrong, before the gateway starts.
 */
import { describe, expect, it } from 'vitest';
import { describeConfig, loadConfig } from '../../../src/config/index.js';
import { configError, ILS_ACCOUNT_ENV, problemAt, tempDir } from './helpers.js';

const tmp = tempDir();
const KOHA = 'https://koha.example.org/api/v1/biblios/{record}/items';

describe('daia.records', () => {
  it('a mapping file that does not exist is a start-up problem naming the setting and the file', () => {
    const missing = `${tmp.dir}/records.csv`;
    expect(problemAt({ env: { PAIA_DAIA_RECORDS_FILE: missing } }, 'daia.records.file')).toBe(
      `cannot read ${missing}: no such file; set it to the CSV or JSON file of record ids and barcodes exported from the ILS, or to null for no mapping (absolute path, or relative to the working directory) (from PAIA_DAIA_RECORDS_FILE)`,
    );
  });

  it('a mapping file none of which can serve is one too; one with broken lines loads (the gateway names them)', () => {
    const broken = tmp.write('broken.json', '{"1234": ["it-1"]');
    expect(problemAt({ env: { PAIA_DAIA_RECORDS_FILE: broken } }, 'daia.records.file')).toMatch(
      new RegExp(`^the record mapping ${broken} is not valid JSON: .* \\(from PAIA_DAIA_RECORDS_FILE\\)$`),
    );
    const partly = tmp.write('partly.csv', '1234,it-1\nbroken line\n');
    expect(loadConfig({ env: { PAIA_DAIA_RECORDS_FILE: partly } }).daia.records.file).toBe(partly);
  });

  it('the lookup URL must be an http(s) template with {record}; the field path must be one', () => {
    expect(
      problemAt({ env: { PAIA_DAIA_RECORDS_HTTP_URL: 'https://koha.example.org/items' } }, 'daia.records.http.url'),
    ).toMatch(/must contain \{record\} exactly once/);
    expect(
      problemAt({ env: { PAIA_DAIA_RECORDS_HTTP_URL: 'ftp://koha.example.org/{record}' } }, 'daia.records.http.url'),
    ).toMatch(/must be an http:\/\/ or https:\/\/ URL/);
    expect(problemAt({ env: { PAIA_DAIA_RECORDS_HTTP_FIELD: 'items..barcode' } }, 'daia.records.http.field')).toMatch(
      /write a field path such as "\[\]\.external_id"/,
    );
  });

  it('headers are a secret: from JSON in the environment or a file, never shown when wrong', () => {
    const headers = [{ name: 'Authorization', value: 'Basic c3ZjOnRvcC1zZWNyZXQ=' }];
    expect(
      loadConfig({ env: { PAIA_DAIA_RECORDS_HTTP_HEADERS: JSON.stringify(headers) } }).daia.records.http.headers,
    ).toEqual(headers);
    const file = tmp.write('headers.json', `${JSON.stringify(headers)}\n`);
    expect(loadConfig({ env: { PAIA_DAIA_RECORDS_HTTP_HEADERS_FILE: file } }).daia.records.http.headers).toEqual(
      headers,
    );
    const bad = configError({
      env: {
        PAIA_DAIA_RECORDS_HTTP_HEADERS: JSON.stringify([{ name: 'Bad Name', value: 'Basic c3ZjOnRvcC1zZWNyZXQ=' }]),
      },
    });
    expect(bad.message).toMatch(/daia\.records\.http\.headers: has "Bad Name", which is not an HTTP header name/);
    expect(bad.message).not.toContain('c3ZjOnRvcC1zZWNyZXQ');
    const twoLines = configError({
      env: {
        PAIA_DAIA_RECORDS_HTTP_HEADERS: JSON.stringify([{ name: 'x-okapi-token', value: 'top-secret\nInjected: 1' }]),
      },
    });
    expect(twoLines.message).toMatch(/has a value for x-okapi-token that is not one line of text/);
    expect(twoLines.message).not.toContain('top-secret');
  });

  it('the lookup must end before the call does', () => {
    const url = 'https://koha.example.org/api/v1/biblios/{record}/items';
    expect(
      problemAt(
        {
          env: {
            PAIA_DAIA_RECORDS_HTTP_URL: url,
            PAIA_DAIA_RECORDS_HTTP_TIMEOUT_MS: '30000',
            PAIA_HTTP_REQUEST_TIMEOUT_MS: '30000',
          },
        },
        'daia.records.http.timeoutMs',
      ),
    ).toMatch(/must be below http\.requestTimeoutMs \(30000\)/);
  });

  it('a gateway without a lookup is not held to its timeout: a short http.requestTimeoutMs starts with the defaults', () => {
    expect(loadConfig({ env: { PAIA_HTTP_REQUEST_TIMEOUT_MS: '3000' } }).http.requestTimeoutMs).toBe(3000);
  });

  it("the record prefix starts with a URI scheme (the document id must be a URI), as VuFind's daiaIdPrefix does", () => {
    expect(
      loadConfig({ env: { PAIA_DAIA_RECORDS_ID_PREFIX: 'https://lib.example.org/record/' } }).daia.records.idPrefix,
    ).toBe('https://lib.example.org/record/');
    expect(loadConfig({ env: { PAIA_DAIA_RECORDS_ID_PREFIX: 'null' } }).daia.records.idPrefix).toBeNull();
    expect(problemAt({ env: { PAIA_DAIA_RECORDS_ID_PREFIX: 'ppn' } }, 'daia.records.idPrefix')).toMatch(
      /starting with a URI scheme/,
    );
  });

  it('the summary names the sources, of a lookup only its origin (its query may hold an API key)', () => {
    const config = loadConfig({
      env: { ...ILS_ACCOUNT_ENV, PAIA_SIP2_HOST: 'ils.example.org', PAIA_DAIA_RECORDS_HTTP_URL: `${KOHA}?key=s3cr3t` },
    });
    const text = JSON.stringify(describeConfig(config));
    expect(text).toContain('from a lookup at https://koha.example.org');
    expect(text).not.toContain('s3cr3t');
    expect(describeConfig(loadConfig({ env: {} })).daia).toMatchObject({
      records: 'edition URIs and "ppn:" ids, from the demo mapping',
    });
  });
});
