/**
 * Live inspection in a real browser (Debian chromium via playwright-core): a
 * separate Node process runs examples/live-inspect.ts, which streams its
 * session guard's actor with `@statelyai/inspect`'s WebSocket inspector; the
 * page lists the session and follows its state, step by step.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { initialSafetyContext } from '../../machines/safety.machine.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, isHighlighted, launchBrowser, openVisualizer, screenshot, waitForState } from '../support/browser.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REGISTER_TS = fileURLToPath(new URL('../support/ts-register.mjs', import.meta.url));

let server: VisualizerServer;
let browser: Browser;
let page: Page;
let app: ChildProcessWithoutNullStreams | undefined;
let appOutput = '';

beforeAll(async () => {
  if (browserMissing) return;
  server = await startVisualizer({ port: 0 });
  browser = await launchBrowser();
  ({ page } = await openVisualizer(browser, `${server.url}?mode=live`));
});
afterAll(async () => {
  if (app && app.exitCode === null) app.kill('SIGTERM');
  await browser?.close();
  await server?.close();
});

/** The application: the example, in manual mode, streaming to our server. */
function startApplication(): ChildProcessWithoutNullStreams {
  const child = spawn(process.execPath, ['--import', REGISTER_TS, 'examples/live-inspect.ts', '--url', server.inspectUrl, '--manual'], {
    cwd: ROOT,
  });
  child.stdout.on('data', (data: Buffer) => (appOutput += data.toString()));
  child.stderr.on('data', (data: Buffer) => (appOutput += data.toString()));
  return child;
}

/** Sends the application one step and waits until the page has logged one more event. */
async function step(): Promise<void> {
  const before = await page.locator('#log li').count();
  app!.stdin.write('\n');
  await page.waitForFunction((n) => document.querySelectorAll('#log li').length > n, before);
}

describe.skipIf(browserMissing !== null)('live inspection in a browser', () => {
  it('lists a session streamed from a Node process and follows its state', async () => {
    app = startApplication();
    await page.waitForSelector('#live-sessions button[aria-pressed="true"]', { timeout: 20_000 }).catch((error: Error) => {
      throw new Error(`${error.message}\napplication output:\n${appOutput}`);
    });
    expect(await page.innerText('#live-sessions')).toMatch(/^safety · x:0 · inspector \d+ · RESOLVING/);
    await waitForState(page, 'RESOLVING');

    // Each step of the example's scripted session and the state after it.
    const expected: string[] = [
      'RESOLVING', // check a resolve
      'READING', // it succeeds
      'WRITING', // check a write
      'VERIFYING', // it succeeds
      'VERIFYING', // final answer: refused
      'VERIFYING', // a second write: blocked
      'VERIFYING', // check a read
      'READING', // it succeeds, and verification completes (by the guard's event, or by the machine itself)
      'READING', // final answer: allowed
    ];
    for (const [index, state] of expected.entries()) {
      await step();
      await waitForState(page, state);
      expect(await isHighlighted(page, `safety.${state}`)).toBe(true);
      if (index === 4) await screenshot(page, 'live-refused-answer');
    }
    const log = await page.$$eval('#log li', (items) => items.map((item) => item.className));
    expect(log.filter((c) => c === 'blocked')).toHaveLength(2);
    expect(await page.innerText('#log li:first-child')).toContain('answer.requested');
    expect(await page.innerText('#log li:first-child .badge')).toBe('allowed');
  });
});

describe.skipIf(browserMissing !== null)('live session labels in a browser (issue 12 item 8)', () => {
  it('lists two actors that stream the same session id through one inspector as two sessions, each with its label and a note', async () => {
    const socket = new WebSocket(server.inspectUrl);
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    const announce = (name: string) =>
      socket.send(
        JSON.stringify({
          type: '@xstate.actor',
          sessionId: 'x:0',
          name,
          definition: JSON.stringify({ id: 'safety' }),
          snapshot: { status: 'active', value: 'RESOLVING', context: initialSafetyContext() },
        }),
      );
    announce('billing-agent');
    announce('support-agent');
    await page.waitForFunction(() => document.querySelectorAll('#live-sessions button').length >= 3);
    const labels = await page.$$eval('#live-sessions button', (buttons) => buttons.map((b) => b.textContent ?? ''));
    expect(labels.filter((l) => /^(billing|support)-agent \(safety\) · x:0 · inspector \d+/.test(l))).toHaveLength(2);
    expect(labels.some((l) => /^support-agent \(safety\) · x:0 · inspector \d+ · actor 2 · RESOLVING/.test(l))).toBe(true);
    expect(await page.locator('#live-sessions .collision').count()).toBe(2);
    await screenshot(page, 'live-two-actors-one-inspector');
    socket.close();
  });
});
