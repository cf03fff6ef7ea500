/**
 * The API reference page in a real browser: Debian's chromium driven by
 * playwright-core against the demo gateway (embedded simulator). The page
 * must render every PAIA method, log in as alice through its Authorize
 * dialog (OAuth password flow against /auth/login) and show her loans when
 * GET /core/{patron}/items is called from it. Skipped, with the reason
 * printed, only when chromium is not installed (.ci/run installs it).
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAVE_CHROMIUM, launchChromium, pageProblems, warnWithoutChromium } from '../helpers/chromium.js';
import { type GatewayProcess, startGatewayProcess } from '../helpers/gateway.js';

warnWithoutChromium('docs-browser');

/** Every PAIA method's path as Swagger UI shows it. */
const METHOD_PATHS = [
  'GET /core/{patron}',
  'GET /core/{patron}/items',
  'POST /core/{patron}/renew',
  'POST /core/{patron}/request',
  'POST /core/{patron}/cancel',
  'GET /core/{patron}/fees',
  'POST /auth/login',
  'POST /auth/logout',
  'POST /auth/change',
  'GET /daia',
];

describe.skipIf(!HAVE_CHROMIUM)('/docs in headless chromium', () => {
  let gateway: GatewayProcess;
  let browser: Browser;

  beforeAll(async () => {
    [gateway, browser] = await Promise.all([
      startGatewayProcess({ sip2Port: null, dialect: 'generic' }),
      launchChromium(),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  it('renders every PAIA method, logs in as alice from the Authorize dialog and shows her loans from items', async () => {
    const page = await browser.newPage();
    const problems = pageProblems(page);
    page.setDefaultTimeout(15_000);

    await page.goto(`${gateway.url}/docs`);
    await page.locator('.opblock').first().waitFor();
    const shown = await page
      .locator('.opblock-summary')
      .evaluateAll((blocks) =>
        blocks.map(
          (b) =>
            `${b.querySelector('.opblock-summary-method')?.textContent ?? ''} ${b.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? ''}`,
        ),
      );
    for (const method of METHOD_PATHS) expect(shown, method).toContain(method);

    await page.locator('.auth-wrapper .btn.authorize').click();
    await page.locator('#oauth_username').fill('alice');
    await page.locator('#oauth_password').fill('alice-pass');
    await page.locator('.auth-btn-wrapper .btn.modal-btn.auth.authorize').click();
    // Logged in: the dialog offers Logout instead of Authorize.
    await page.locator('.auth-btn-wrapper button', { hasText: 'Logout' }).waitFor();
    await page.locator('.btn-done, .auth-btn-wrapper button:has-text("Close")').first().click();

    const items = page.locator('#operations-PAIA_core-items');
    await items.locator('.opblock-summary').click();
    await items.locator('tr[data-param-name="patron"] input').fill('alice');
    await items.locator('.btn.execute').click();
    const live = items.locator('.live-responses-table tbody tr.response');
    await live.waitFor();
    const text = (await live.locator('.response-col_description').textContent()) ?? '';
    const status = (await live.locator('.response-col_status').textContent()) ?? '';
    expect(status.trim(), text).toBe('200');
    for (const barcode of ['it-0001', 'it-0002', 'it-0003']) expect(text).toContain(barcode);
    expect(problems.filter((p) => /Content.Security.Policy|Refused/i.test(p))).toEqual([]);
  });
});
