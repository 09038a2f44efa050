/**
 * Transcript replay in a real browser (Debian chromium via playwright-core):
 * the embedded demo and opened files, stepped and played, with the audit's
 * refusals marked on the timeline.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditRun } from '../../src/audit/audit.js';
import { demoRuns } from '../../src/audit/demo.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, isHighlighted, launchBrowser, openVisualizer, screenshot, waitForState } from '../support/browser.js';

const TAU_BENCH = fileURLToPath(new URL('../../../shared/data/tau-bench/gpt-4o-airline.json', import.meta.url));
const tauBenchMissing = existsSync(TAU_BENCH) ? null : `tau-bench replay skipped: ${TAU_BENCH} is absent`;
if (tauBenchMissing) console.warn(tauBenchMissing);

let server: VisualizerServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (browserMissing) return;
  server = await startVisualizer({ port: 0 });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
beforeEach(async () => {
  if (browserMissing) return;
  ({ page } = await openVisualizer(browser, server.url));
  await page.click('#tab-replay');
});

async function loadDemo(): Promise<void> {
  await page.click('#replay-demo');
  await page.waitForSelector('#timeline li');
}

async function position(): Promise<string> {
  return page.innerText('#replay-position');
}

describe.skipIf(browserMissing !== null)('replay in a browser', () => {
  it('plays the embedded transcript to its end with the refusals the audit reports', async () => {
    const audit = auditRun(demoRuns()[0]!);
    await loadDemo();
    await page.selectOption('#replay-speed', '100');
    await page.click('#replay-play');
    await page.waitForFunction(() => document.getElementById('replay-position')!.textContent!.endsWith('(end)'), undefined, {
      timeout: 25_000,
    });
    const refused = await page.$$eval('#timeline li.refused', (items) => items.map((item) => Number((item as HTMLElement).dataset.step)));
    expect(refused).toEqual(audit.refusals.map((r) => r.index));
    expect(await page.locator('#log li.blocked').count()).toBe(audit.refusals.length);
    expect(await page.innerText('#current-state')).toBe(audit.finalState);
    expect(await position()).toBe(`Step ${audit.findings.length} of ${audit.findings.length} (end)`);
    expect(await page.getAttribute('#replay-play', 'aria-pressed')).toBe('false');
    await screenshot(page, 'replay-demo-end', true);
  });

  it("steps forward and back through the audit's states", async () => {
    const findings = auditRun(demoRuns()[0]!).findings;
    await loadDemo();
    for (let i = 0; i < 4; i++) await page.click('#replay-forward');
    await waitForState(page, findings[3]!.stateAfter);
    expect(await isHighlighted(page, `safety.${findings[3]!.stateAfter}`)).toBe(true);
    await page.click('#replay-back');
    await waitForState(page, findings[2]!.stateAfter);
    expect(await position()).toBe(`Step 3 of ${findings.length}`);
  });

  it("shows a refused step's reason and tool result in the event log", async () => {
    const first = auditRun(demoRuns()[0]!).refusals[0]!;
    await loadDemo();
    await page.click(`#timeline button[data-step="${first.index}"]`);
    await page.waitForFunction((n) => document.getElementById('replay-position')!.textContent!.startsWith(`Step ${n} `), first.index + 1);
    const entry = page.locator('#log li').first();
    expect(await entry.innerText()).toContain(first.reason);
    expect(await entry.getAttribute('class')).toContain('blocked');
  });

  it('moves along the timeline with the arrow keys', async () => {
    await loadDemo();
    await page.focus('#timeline button[data-step="0"]');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-step') === '1');
    expect(await position()).toMatch(/^Step 2 of /);
  });

  it('reports a file it cannot read, naming it', async () => {
    await page.setInputFiles('#replay-file', {
      name: 'broken.json',
      mimeType: 'application/json',
      buffer: Buffer.from('{ "messages": [ oops'),
    });
    await page.waitForFunction(() => document.getElementById('replay-error')!.textContent !== '');
    expect(await page.innerText('#replay-error')).toMatch(/^broken\.json: line 1, column \d+/);
  });

  it.skipIf(tauBenchMissing !== null)('offers each tau-bench run with its reward, and replays the chosen one', async () => {
    await page.selectOption('#replay-catalog', 'tau-airline');
    await page.setInputFiles('#replay-file', TAU_BENCH);
    await page.waitForSelector('#replay-run option', { state: 'attached', timeout: 25_000 });
    const options = await page.$$eval('#replay-run option', (items) => items.map((item) => item.textContent ?? ''));
    expect(options).toHaveLength(200);
    for (const option of options) expect(option).toMatch(/ · reward [01] · \d+ steps · \d+ refused$/);
    await page.selectOption('#replay-run', '5');
    await page.waitForFunction(() => document.getElementById('timeline')!.dataset.run?.endsWith('/5/tau-airline'));
    await page.click('#replay-last');
    await page.waitForFunction(() => document.getElementById('replay-position')!.textContent!.endsWith('(end)'));
    await screenshot(page, 'replay-tau-bench');
  });

  it('pages a long run: stepping past the steps it holds fetches the next ones (issue 14 item 9)', async () => {
    const text = Array.from({ length: 450 }, (_, i) => JSON.stringify({ type: 'call', id: `c${i}`, name: 'pulse_query' })).join('\n');
    await page.setInputFiles('#replay-file', { name: 'long.jsonl', mimeType: 'application/json', buffer: Buffer.from(text) });
    await page.waitForSelector('#timeline li');
    const heldSteps = () =>
      page.$$eval('#timeline button[data-step]', (buttons) => buttons.map((b) => Number((b as HTMLElement).dataset.step)));
    expect((await heldSteps()).length).toBeLessThan(450);
    await page.click('#replay-last');
    await page.waitForFunction(() => document.getElementById('replay-position')!.textContent === 'Step 450 of 450 (end)');
    expect(await heldSteps()).toContain(449);
    expect(await page.innerText('#timeline-page')).toMatch(/^Showing steps 401 to 450 of 450/);
    await page.click('#replay-first');
    await page.click('#replay-forward');
    await page.waitForFunction(() => document.getElementById('replay-position')!.textContent === 'Step 1 of 450');
    expect(await heldSteps()).toContain(0);
  });
});
