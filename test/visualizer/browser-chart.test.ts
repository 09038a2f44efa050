/**
 * The chart's zoom and pan in a real browser (Debian chromium via
 * playwright-core), on a 1600 px wide window (issue 12 item 8): in fit mode
 * the whole chart shows and its text is small; the zoom buttons, the
 * keyboard and Ctrl with the mouse wheel make it legible, and a zoomed chart
 * pans with the arrow keys and by dragging.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, launchBrowser, openVisualizer, screenshot } from '../support/browser.js';

/** Text this size or larger, in CSS pixels as rendered, reads comfortably. */
const LEGIBLE_PX = 12;

let server: VisualizerServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  if (browserMissing) return;
  server = await startVisualizer({ port: 0, log: () => {} });
  browser = await launchBrowser();
  ({ page } = await openVisualizer(browser, server.url, { width: 1600, height: 1000 }));
  await page.waitForSelector('#chart svg');
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});
beforeEach(async () => {
  if (browserMissing) return;
  await page.click('#zoom-fit');
});

/** The median rendered size of the chart's text, CSS px: its font size times the scale it is drawn at. */
function medianTextPx(): Promise<number> {
  return page.evaluate(() => {
    const sizes = Array.from(document.querySelectorAll<SVGTextElement>('#chart svg text')).map((text) => {
      const matrix = text.getScreenCTM()!;
      return parseFloat(getComputedStyle(text).fontSize) * Math.hypot(matrix.a, matrix.b);
    });
    sizes.sort((a, b) => a - b);
    return sizes[sizes.length >> 1]!;
  });
}

const zoomLevel = () => page.innerText('#zoom-level');

describe.skipIf(browserMissing !== null)('the chart zooms and pans', () => {
  it(`makes the chart text at least ${LEGIBLE_PX} px with the zoom buttons, from fit mode where it is smaller`, async () => {
    const fit = await medianTextPx();
    for (let i = 0; i < 5 && (await zoomLevel()) !== '100 %'; i++) await page.click('#zoom-in');
    expect(await zoomLevel()).toBe('100 %');
    const zoomed = await medianTextPx();
    await screenshot(page, 'chart-zoomed-100');
    expect({ fit: fit < LEGIBLE_PX, zoomed: zoomed >= LEGIBLE_PX }).toEqual({ fit: true, zoomed: true });
  });

  it('zooms with the keyboard on the focused chart: + in, − out, 0 back to fit', async () => {
    await page.focus('#chart');
    await page.keyboard.press('+');
    const once = await zoomLevel();
    await page.keyboard.press('+');
    const twice = await zoomLevel();
    await page.keyboard.press('-');
    const back = await zoomLevel();
    await page.keyboard.press('0');
    // The levels depend on the chart's size (the first one above the fit scale): one level in, one more, one back, fit.
    const percent = (level: string) => Number.parseInt(level, 10);
    expect(once).toMatch(/^\d+ %$/);
    expect(percent(twice)).toBeGreaterThan(percent(once));
    expect([back, await zoomLevel()]).toEqual([once, 'fit']);
  });

  it('zooms in with Ctrl and the mouse wheel over the chart', async () => {
    const box = (await page.locator('#chart').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 100);
    await page.keyboard.down('Control');
    await page.mouse.wheel(0, -100);
    await page.keyboard.up('Control');
    await page.waitForFunction(() => document.getElementById('zoom-level')!.textContent !== 'fit');
    const wheeled = await zoomLevel();
    // The same level the zoom-in button gives from fit.
    await page.click('#zoom-fit');
    await page.click('#zoom-in');
    expect(wheeled).toBe(await zoomLevel());
  });

  it('pans a zoomed chart with the arrow keys', async () => {
    await page.click('#zoom-in');
    await page.click('#zoom-in');
    await page.evaluate(() => (document.getElementById('chart')!.scrollLeft = 0));
    await page.focus('#chart');
    for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.getElementById('chart')!.scrollLeft > 0);
    expect(await page.evaluate(() => document.getElementById('chart')!.scrollLeft)).toBeGreaterThan(0);
  });

  it('pans a zoomed chart by dragging it', async () => {
    await page.click('#zoom-in');
    await page.click('#zoom-in');
    await page.evaluate(() => (document.getElementById('chart')!.scrollLeft = 0));
    const box = (await page.locator('#chart').boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + 100);
    // Where the drag starts (read after the pointer is over the chart: a loaded machine may still be laying it out).
    const start = await page.evaluate(() => document.getElementById('chart')!.scrollLeft);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width / 2 - 300, box.y + 100, { steps: 5 });
    await page.mouse.up();
    expect(await page.evaluate(() => document.getElementById('chart')!.scrollLeft)).toBe(start + 300);
  });
});
