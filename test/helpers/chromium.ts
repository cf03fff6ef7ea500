import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

/**
 * Debian's chromium for the browser tests (the API reference page, the
 * simulator's traffic page), driven by playwright-core: where it is, whether
 * it is installed (.ci/run installs it; a test without it is skipped and says
 * why), how it is launched, and the errors a page reports.
 */

const CHROMIUM = '/usr/bin/chromium';
export const HAVE_CHROMIUM = existsSync(CHROMIUM);

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Warns that `test` is skipped when chromium is missing. */
export function warnWithoutChromium(test: string): void {
  if (!HAVE_CHROMIUM) console.warn(`${test}: skipped, ${CHROMIUM} is missing (apt-get install chromium)`);
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: 30_000 });
}

/** The console errors and uncaught exceptions of a page, as they come. */
export function pageProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return problems;
}
