/**
 * The simulator's traffic page in a real browser: Debian's chromium driven by
 * playwright-core, as /docs is (docs-browser.test.ts). A simulator with its
 * control endpoint, a terminal that logs in, asks for a patron's information
 * and sends one 99 the conformance check faults, and the page must show the
 * login with its password masked, the 63 and 64 decoded field by field with
 * the catalogue's names, the deviation marked, and its switches must change
 * the simulator. Skipped, with the reason printed, only when chromium is not
 * installed (.ci/run installs it).
 */
import { request as httpRequest } from 'node:http';
import type { Browser, Locator } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../sip2-simulator/src/server.js';
import { startSimulator } from '../../sip2-simulator/src/server.js';
import { HAVE_CHROMIUM, launchChromium, pageProblems, warnWithoutChromium } from '../helpers/chromium.js';
import { TextSip2Client, text } from '../helpers/sip2-text-client.js';

warnWithoutChromium('traffic-page');

/** A message's decoded fields as the page shows them: id, name and value of each, in order, joined by spaces. */
const fieldsOf = async (message: Locator) => (await message.locator('.fields > span').allTextContents()).join(' ');

describe.skipIf(!HAVE_CHROMIUM)('the traffic page in headless chromium', () => {
  let sim: RunningSimulator;
  let browser: Browser;
  let client: TextSip2Client;
  let control: string;

  beforeAll(async () => {
    [sim, browser] = await Promise.all([
      startSimulator({ port: 0, controlPort: 0, logLevel: 'silent' }),
      launchChromium(),
    ]);
    control = `http://127.0.0.1:${sim.controlPort}`;
    client = await TextSip2Client.connect(sim.port);
  });
  afterAll(async () => {
    client?.close();
    await browser?.close();
    await sim?.stop();
  });

  it('serves the page under a strict CSP, from its own origin only', async () => {
    for (const path of ['/', '/page.js', '/page.css']) {
      const response = await fetch(`${control}${path}`, { signal: AbortSignal.timeout(5000) });
      expect(response.status, path).toBe(200);
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("style-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    }
    const html = await (await fetch(`${control}/`, { signal: AbortSignal.timeout(5000) })).text();
    expect(html).not.toMatch(/<script>|<style>| style=|https?:\/\//);
  });

  it('shows the login (password masked), the 63 and 64 field by field, and a marked deviation', async () => {
    expect((await client.send(text.login())).fixed).toBe('1');
    const answer = await client.send(text.patronInformation('alice', 'charged'));
    expect(answer.code).toBe('64');
    // Status code 7: the 3M text allows 0, 1 and 2 only. Answered all the same (not strict).
    expect((await client.send(text.scStatus().replace(/^990/, '997'))).code).toBe('98');
    const [connection] = sim.traffic.snapshot().connections;

    const page = await browser.newPage();
    const problems = pageProblems(page);
    page.setDefaultTimeout(10_000);
    await page.goto(`${control}/`);

    const shown = page.locator(`.connection[data-id="${connection!.id}"]`);
    await shown.locator('.message').nth(5).waitFor();
    await expect(shown.locator('h2').textContent()).resolves.toContain('logged in as paia');
    const messages = shown.locator('.message');
    const login = messages.nth(0);
    await expect(login.locator('.code').textContent()).resolves.toBe('93 Login');
    await expect(login.locator('.raw').textContent()).resolves.toMatch(/^9300CNpaia\|CO\*\*\*\|CPMAIN\|/);
    const loginFields = await fieldsOf(login);
    expect(loginFields).toMatch(/CN\s+loginUserId\s+paia/);
    expect(loginFields).toMatch(/CO\s+loginPassword\s+\*\*\*/);
    expect(await page.content()).not.toContain('paia-secret');

    await expect(messages.nth(2).locator('.code').textContent()).resolves.toBe('63 Patron Information');
    expect(await fieldsOf(messages.nth(2))).toMatch(/AA\s+patronIdentifier\s+alice/);
    const response = messages.nth(3);
    await expect(response.locator('.code').textContent()).resolves.toBe('64 Patron Information Response');
    const responseFields = await fieldsOf(response);
    expect(responseFields).toMatch(/^\s*patronStatus\b/m);
    expect(responseFields).toMatch(/chargedItemsCount\s+\d{4}/);
    expect(responseFields).toMatch(/AE\s+personalName\s+\S+/);
    expect(responseFields).toMatch(/AU\s+chargedItems\s+it-0001/);

    const marked = shown.locator('.message.deviation');
    await expect(marked.count()).resolves.toBe(1);
    await expect(marked.locator('.code').textContent()).resolves.toBe('99 SC Status');
    await expect(marked.locator('.deviations').textContent()).resolves.toMatch(
      /fixed-value \(Field Definitions, status code\): .+/,
    );
    expect(problems).toEqual([]);
    await page.close();
  });

  it("its switches change the simulator: latency, a patron's block and its lifting", async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(`${control}/`);
    await page.locator('#latency').fill('7');
    await page.locator('#latency-form button').click();
    await page.locator('#result', { hasText: 'latency: done' }).waitFor();
    const state = (await (await fetch(`${control}/state`, { signal: AbortSignal.timeout(5000) })).json()) as {
      faults: { latencyMs: number };
    };
    expect(state.faults.latencyMs).toBe(7);
    await page.locator('#clear-faults').click();
    await page.locator('#result', { hasText: 'clear faults: done' }).waitFor();

    await page.locator('#patron').fill('alice');
    await page.locator('#block').click();
    await page.locator('#result', { hasText: 'block: done' }).waitFor();
    // 24 Patron Status: the first flag is "charge privileges denied".
    expect((await client.send(text.patronStatus('alice'))).fixed[0]).toBe('Y');
    await page.locator('#enable').click();
    await page.locator('#result', { hasText: 'enable: done' }).waitFor();
    expect((await client.send(text.patronStatus('alice'))).fixed[0]).toBe(' ');
    await page.close();
  });

  it('answers a loopback host only, and takes changes from a browser only from a loopback origin', async () => {
    const ask = (method: string, path: string, headers: Record<string, string>, body?: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: '127.0.0.1', port: sim.controlPort, method, path, headers, timeout: 5000 },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on('timeout', () => request.destroy(new Error('control endpoint: no answer within 5 s')));
        request.on('error', reject);
        request.end(body);
      });
    const own = `127.0.0.1:${sim.controlPort}`;
    // DNS rebinding: a name of the attacker's that resolves to 127.0.0.1.
    expect(await ask('GET', '/traffic', { host: `rebound.example:${sim.controlPort}` })).toBe(403);
    expect(await ask('GET', '/traffic', { host: `localhost:${sim.controlPort}` })).toBe(200);
    // A page elsewhere posting plain text, which needs no preflight.
    const block = JSON.stringify({ patron: 'alice' });
    const fromElsewhere = { host: own, origin: 'https://elsewhere.example', 'content-type': 'text/plain' };
    expect(await ask('POST', '/desk/block', fromElsewhere, block)).toBe(403);
    expect(await ask('POST', '/conformance/reset', fromElsewhere)).toBe(403);
    expect((await client.send(text.patronStatus('alice'))).fixed[0]).toBe(' ');
    // curl and scripts send no Origin; the page sends its own.
    expect(await ask('POST', '/conformance/reset', { host: own })).toBe(200);
    expect(await ask('POST', '/conformance/reset', { host: own, origin: `http://${own}` })).toBe(200);
  });
});
