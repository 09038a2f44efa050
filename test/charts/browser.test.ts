/**
 * The exported Mermaid chart (src/charts/mermaid.ts `toMermaid`) rendered by
 * Mermaid's own library in the project's Chromium (Debian's, through
 * playwright-core; never a downloaded browser): each state's box is titled
 * with its name (RESOLVING, READING, WRITING, VERIFYING), not with its first
 * description line, and refusing transitions carry their ✗ mark.
 *
 * Without /usr/bin/chromium the tests are skipped, except under CI=true,
 * where a missing browser fails.
 */
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { safetyMachine } from '../../machines/safety.machine.js';
import { SAFETY_STATES } from '../../machines/safety.types.js';
import { chartOf, REFUSAL_MARK, toMermaid } from '../../src/charts/index.js';
import { browserMissing, launchBrowser } from '../support/browser.js';

/** Mermaid's browser bundle, from the dev dependency. */
const MERMAID_SCRIPT = fileURLToPath(new URL('../../node_modules/mermaid/dist/mermaid.min.js', import.meta.url));

/** Under CI a missing browser is a failure, not a reason to skip. */
const inCi = process.env['CI'] === 'true';

describe.runIf(browserMissing !== null && inCi)('the Mermaid render under CI', () => {
  it('has a browser to render in', () => {
    expect(browserMissing).toBeNull();
  });
});

/** One state box of the rendered diagram: its Mermaid node id, its title, and the lines below it. */
interface RenderedState {
  id: string;
  title: string;
  lines: string[];
}

describe.skipIf(browserMissing !== null)("the Mermaid chart rendered by Mermaid's library", () => {
  let browser: Browser;
  let page: Page;
  let states: RenderedState[];
  let errors: string[];

  beforeAll(async () => {
    browser = await launchBrowser();
    page = await browser.newPage();
    errors = [];
    page.on('pageerror', (error) => errors.push(error.message));
    await page.setContent('<!doctype html><html><body><div id="chart"></div></body></html>');
    await page.addScriptTag({ path: MERMAID_SCRIPT });
    states = await page.evaluate(async (text) => {
      const mermaid = (
        window as unknown as { mermaid: { initialize(c: object): void; render(id: string, t: string): Promise<{ svg: string }> } }
      ).mermaid;
      mermaid.initialize({ startOnLoad: false, securityLevel: 'strict' });
      const { svg } = await mermaid.render('safety-chart', text);
      document.getElementById('chart')!.innerHTML = svg;
      // A state box with descriptions: a `.label` group whose first label is the title, the others the lines below it.
      return Array.from(document.querySelectorAll('#chart g.node')).flatMap((node) => {
        const labels = Array.from(node.querySelectorAll(':scope > g.label > foreignObject, :scope > g.label > text'));
        if (labels.length === 0) return [];
        // HTML labels break lines with <br>: read them as the browser lays them out (innerText).
        const texts = labels.map((label) => {
          const html = label.querySelector('div') as HTMLElement | null;
          return (html ? html.innerText : (label.textContent ?? '')).trim();
        });
        const [title, ...rest] = texts;
        return [{ id: node.id, title: title!, lines: rest.flatMap((text) => text.split('\n').map((line: string) => line.trim())) }];
      });
    }, toMermaid(safetyMachine));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('renders without errors', () => {
    expect(errors).toEqual([]);
    expect(states.length).toBeGreaterThanOrEqual(SAFETY_STATES.length);
  });

  it.each([...SAFETY_STATES])('titles the box of %s with its name', (name) => {
    const titled = states.filter((state) => state.title === name);
    expect(titled, states.map((s) => s.title).join(' | ')).toHaveLength(1);
  });

  it.each([...SAFETY_STATES])("shows %s's description below its title, not as the title", (name) => {
    const description = safetyMachine.getStateNodeById(`safety.${name}`).description!;
    const box = states.find((state) => state.title === name)!;
    expect(box.lines.join('\n')).toContain(description);
    expect(states.map((state) => state.title)).not.toContain(description);
  });

  it('shows each refusing transition that stays in its state marked ✗ in its box', () => {
    const refusing = chartOf(safetyMachine).transitions.filter((t) => t.refuses && t.targets.length === 0);
    expect(refusing.length).toBeGreaterThan(0);
    for (const t of refusing) {
      const box = states.find((state) => state.title === t.source.slice('safety.'.length))!;
      const head = `${REFUSAL_MARK} ${t.event}${t.guard ? ` [${t.guard}]` : ''} — `;
      expect(
        box.lines.some((line) => line.startsWith(head)),
        `${t.id} in ${box.lines.join('\n')}`,
      ).toBe(true);
    }
  });
});
