/**
 * The browser the visualizer tests drive: Debian's chromium through
 * playwright-core (never a downloaded browser), headless, no network of its
 * own. Screenshots go to test-output/visualizer/ (gitignored).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`; .ci/run installs it). */
export const CHROMIUM = '/usr/bin/chromium';

/** Why the browser tests are skipped, or null when they can run. */
export const browserMissing: string | null = existsSync(CHROMIUM)
  ? null
  : `browser tests skipped: ${CHROMIUM} is missing (apt-get install -y --no-install-recommends chromium)`;
if (browserMissing) console.warn(browserMissing);

/** Where screenshots are saved. */
export const OUTPUT_DIR = fileURLToPath(new URL('../../test-output/visualizer/', import.meta.url));

/** Launches chromium headless, without background networking, component updates or first-run work. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

/** A page of the visualizer with what it asked of other origins and the errors it threw. */
export interface VisualizerPage {
  page: Page;
  /** URLs requested outside the visualizer's origin (must stay empty). */
  foreignRequests: string[];
  /** Uncaught errors in the page. */
  errors: string[];
}

/**
 * Opens the visualizer at `url` (the server's URL plus an optional query) in
 * a fresh context and waits until the page has started.
 */
export async function openVisualizer(
  browser: Browser,
  url: string,
  viewport: { width: number; height: number } = { width: 1400, height: 1000 },
): Promise<VisualizerPage> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const origin = new URL(url).origin;
  const foreignRequests: string[] = [];
  const errors: string[] = [];
  page.on('request', (request) => {
    const requested = new URL(request.url());
    if (requested.origin !== origin && requested.protocol !== 'data:') foreignRequests.push(request.url());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(url);
  await page.waitForSelector('body[data-ready="true"]');
  return { page, foreignRequests, errors };
}

/** Saves a screenshot as test-output/visualizer/<name>.png. */
export async function screenshot(page: Page, name: string, fullPage = false): Promise<void> {
  mkdirSync(OUTPUT_DIR, { recursive: true });
  await page.screenshot({ path: `${OUTPUT_DIR}${name}.png`, fullPage });
}

/** Waits until the page shows this state as the current one. */
export async function waitForState(page: Page, state: string): Promise<void> {
  await page.waitForFunction((expected) => document.body.dataset.state === expected, state);
}

/** Whether the chart marks this state as the current one. */
export function isHighlighted(page: Page, stateId: string): Promise<boolean> {
  return page.evaluate((id) => document.getElementById(`state:${id}`)?.classList.contains('current') ?? false, stateId);
}

/** The newest event log entry: its text and whether it is a refusal. */
export async function newestLogEntry(page: Page): Promise<{ text: string; blocked: boolean; allowed: boolean }> {
  const entry = page.locator('#log li').first();
  const classes = (await entry.getAttribute('class')) ?? '';
  return { text: await entry.innerText(), blocked: classes.includes('blocked'), allowed: classes.includes('allowed') };
}
