/**
 * The visualizer page's playground in a real browser (Debian chromium via
 * playwright-core): every control drives the real session guard on the
 * server, and the page shows the decision, the state and the chart.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import {
  browserMissing,
  isHighlighted,
  launchBrowser,
  newestLogEntry,
  openVisualizer,
  screenshot,
  waitForState,
  type VisualizerPage,
} from '../support/browser.js';

let server: VisualizerServer;
let browser: Browser;
let view: VisualizerPage;
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
  view = await openVisualizer(browser, server.url);
  page = view.page;
});

/** Fills in the catalog's example call of a kind and checks it; resolves when the log shows the decision. */
async function checkExample(kind: 'resolve' | 'read' | 'write' | 'user_input'): Promise<void> {
  const entries = await page.locator('#log li').count();
  await page.click(`#examples button[data-kind="${kind}"]`);
  await page.click('#call-check');
  await page.waitForFunction((n) => document.querySelectorAll('#log li').length > n, entries);
}

/** Records the outcome of the newest call in flight. */
async function recordNewest(outcome: 'success' | 'error'): Promise<void> {
  const entries = await page.locator('#log li').count();
  await page.locator(`#in-flight-controls li button[data-outcome="${outcome}"]`).last().click();
  await page.waitForFunction((n) => document.querySelectorAll('#log li').length > n, entries);
}

async function click(id: string): Promise<void> {
  const entries = await page.locator('#log li').count();
  await page.click(`#${id}`);
  await page.waitForFunction((n) => document.querySelectorAll('#log li').length > n, entries);
}

/** Resolve, then a write that succeeds: the session ends in VERIFYING. */
async function writeOnTarget(): Promise<void> {
  await checkExample('resolve');
  await recordNewest('success');
  await checkExample('write');
  await recordNewest('success');
  await waitForState(page, 'VERIFYING');
}

describe.skipIf(browserMissing !== null)('the playground in a browser', () => {
  it('shows a write in RESOLVING as blocked with FSM_BLOCKED, and the state stays RESOLVING', async () => {
    await checkExample('write');
    const entry = await newestLogEntry(page);
    expect(entry.blocked).toBe(true);
    expect(entry.text).toContain('blocked FSM_BLOCKED');
    expect(entry.text).toContain('RESOLVING → RESOLVING');
    await page.locator('#log li').first().locator('summary').click();
    expect(JSON.parse(await page.locator('#log li').first().locator('pre').innerText())).toMatchObject({
      ok: false,
      error: { code: 'FSM_BLOCKED', state: 'RESOLVING', tool: 'pulse_control', kind: 'write' },
    });
    expect(await page.innerText('#current-state')).toBe('RESOLVING');
    expect(await isHighlighted(page, 'safety.RESOLVING')).toBe(true);
    await screenshot(page, 'playground-blocked-write');
  });

  it('highlights READING once a resolve succeeds', async () => {
    await checkExample('resolve');
    await recordNewest('success');
    await waitForState(page, 'READING');
    expect(await isHighlighted(page, 'safety.READING')).toBe(true);
    expect(await isHighlighted(page, 'safety.RESOLVING')).toBe(false);
  });

  it('takes a write through WRITING to VERIFYING', async () => {
    await checkExample('resolve');
    await recordNewest('success');
    await checkExample('write');
    await waitForState(page, 'WRITING');
    expect(await isHighlighted(page, 'safety.WRITING')).toBe(true);
    await screenshot(page, 'playground-writing');
    await recordNewest('success');
    await waitForState(page, 'VERIFYING');
    expect(await isHighlighted(page, 'safety.VERIFYING')).toBe(true);
  });

  it('refuses the final answer about an unverified write', async () => {
    await writeOnTarget();
    await click('btn-answer');
    const entry = await newestLogEntry(page);
    expect(entry.blocked).toBe(true);
    expect(entry.text).toContain('final answer');
    expect(entry.text).toContain('needs verification evidence before responding about its result');
    expect(await page.innerText('#current-state')).toBe('VERIFYING');
    await screenshot(page, 'playground-answer-refused', true);
  });

  it('allows the final answer once a read has verified the write', async () => {
    await writeOnTarget();
    await click('btn-answer');
    await checkExample('read');
    await recordNewest('success');
    await click('btn-answer');
    expect((await newestLogEntry(page)).allowed).toBe(true);
    expect(await page.innerText('#current-state')).toBe('READING');
  });

  it('returns to RESOLVING on reset', async () => {
    await writeOnTarget();
    await click('btn-reset');
    await waitForState(page, 'RESOLVING');
    expect(await isHighlighted(page, 'safety.RESOLVING')).toBe(true);
    expect(await page.innerText('[data-key="wroteThisEpisode"]')).toBe('false');
  });

  it('returns VERIFYING to READING on reset keeping progress, keeping the last write', async () => {
    await writeOnTarget();
    await click('btn-reset-keep');
    await waitForState(page, 'READING');
    expect(await page.innerText('[data-key="lastWriteTool"]')).toBe('pulse_control');
  });

  it('shows a pending recovery counting down, kept for ten minutes after its block and gone after', async () => {
    await checkExample('write');
    expect(await page.innerText('#recoveries tbody tr .expires')).toBe('10 min 00 s');
    await click('btn-clock');
    expect(await page.innerText('#recoveries tbody tr .expires')).toBe('0 min 00 s');
    await click('btn-clock');
    expect(await page.isVisible('#recoveries-empty')).toBe(true);
    expect(await page.locator('#recoveries tbody tr').count()).toBe(0);
  });

  it('marks on the chart the transitions enabled now', async () => {
    const enabled = (id: string) => page.evaluate((t) => document.getElementById(t)?.classList.contains('enabled') ?? false, id);
    expect(await enabled('t:safety.RESOLVING:tool.succeeded:2')).toBe(false);
    await checkExample('resolve');
    expect(await enabled('t:safety.RESOLVING:tool.succeeded:2')).toBe(true);
    expect(await page.innerText('#enabled-list')).toContain('RESOLVING → READING: tool.succeeded [isDiscoveryOutcome]');
  });

  it('classifies a call with the chosen catalog', async () => {
    await page.selectOption('#call-catalog', 'tau-airline');
    await page.fill('#call-name', 'get_user_details');
    await page.fill('#call-args', '{"user_id":"mia_li_3668"}');
    await page.click('#call-check');
    await page.waitForSelector('#log li');
    expect((await newestLogEntry(page)).text).toContain('(resolve, targets user_id=mia_li_3668, catalog tau-airline)');
  });

  it("makes a new session's default catalog the call form's", async () => {
    await page.click('#panel-playground details summary');
    await page.selectOption('#new-catalog', 'claude-code');
    await page.click('#btn-new');
    await page.waitForFunction(() => (document.getElementById('call-catalog') as HTMLSelectElement).value === 'claude-code');
    expect(await page.getAttribute('#examples button[data-kind="read"]', 'title')).toMatch(/^\S+ /);
    await page.fill('#call-name', 'Bash');
    await page.fill('#call-args', '{"command":"rm -rf ~/projects/old"}');
    await page.click('#call-check');
    await page.waitForSelector('#log li');
    const entry = await newestLogEntry(page);
    expect(entry.text).toContain('catalog claude-code');
    expect(entry.text).toContain('no-target');
  });

  it('says so when the arguments are not JSON, and sends nothing', async () => {
    await page.fill('#call-name', 'pulse_query');
    await page.fill('#call-args', '{ nope');
    await page.click('#call-check');
    expect(await page.innerText('#call-error')).toMatch(/^The arguments are not valid JSON/);
    expect(await page.locator('#log li').count()).toBe(0);
  });

  it('can be driven from the keyboard alone', async () => {
    const tabTo = async (selector: string) => {
      for (let i = 0; i < 60; i++) {
        if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
        await page.keyboard.press('Tab');
      }
      throw new Error(`Tab never reached ${selector}`);
    };
    await tabTo('#examples button[data-kind="resolve"]');
    await page.keyboard.press('Enter');
    await tabTo('#call-check');
    await page.keyboard.press('Enter');
    await page.waitForSelector('#in-flight-controls button[data-outcome="success"]');
    await tabTo('#in-flight-controls button[data-outcome="success"]');
    await page.keyboard.press('Enter');
    await waitForState(page, 'READING');
    await page.focus('#tab-playground');
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('tab-replay');
    expect(await page.isVisible('#panel-replay')).toBe(true);
  });

  it('gives every control an accessible name', async () => {
    const unnamed = await page.evaluate(() =>
      Array.from(document.querySelectorAll<HTMLElement>('button, input, select, textarea'))
        .filter((element) => {
          if (element instanceof HTMLButtonElement) return (element.getAttribute('aria-label') ?? element.textContent ?? '').trim() === '';
          const labelled = (element as HTMLInputElement).labels?.length ?? 0;
          return labelled === 0 && !element.getAttribute('aria-label');
        })
        .map((element) => element.outerHTML.slice(0, 80)),
    );
    expect(unnamed).toEqual([]);
  });

  it('fits a narrow window in one column', async () => {
    await page.setViewportSize({ width: 390, height: 840 });
    await checkExample('resolve');
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    const [chart, controls] = await Promise.all([page.locator('#chart-section').boundingBox(), page.locator('#controls').boundingBox()]);
    expect(controls!.y).toBeGreaterThan(chart!.y + chart!.height - 1);
    await screenshot(page, 'playground-narrow');
  });

  it('loads nothing from another origin', async () => {
    await writeOnTarget();
    await page.click('#tab-replay');
    await page.click('#replay-demo');
    await page.waitForSelector('#timeline li');
    expect(view.foreignRequests).toEqual([]);
    expect(view.errors).toEqual([]);
  });
});
