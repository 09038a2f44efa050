/**
 * The visualizer's defences as a browser meets them (Debian chromium via
 * playwright-core): a page served on another localhost port cannot stream
 * to `/inspect`, and a streamed machine too large to chart is shown as such
 * on the page rather than laid out.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { MAX_CHART_STATES } from '../../src/visualizer/bounds.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, launchBrowser, openVisualizer } from '../support/browser.js';

let server: VisualizerServer;
let browser: Browser;
let other: Server;

/** Another local web application: one page that tries to stream a session to the visualizer. */
function otherSite(inspectUrl: string): Promise<Server> {
  const page = `<!doctype html><title>pending</title><script>
    const socket = new WebSocket(${JSON.stringify(inspectUrl)});
    socket.onopen = () => {
      socket.send(JSON.stringify({ type: '@xstate.actor', sessionId: 'from-other-site', snapshot: { value: 'x' } }));
      document.title = 'open';
    };
    socket.onerror = () => { document.title = 'refused'; };
  </script>`;
  return new Promise((resolve) => {
    const site = createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
      res.end(page);
    });
    site.listen(0, '127.0.0.1', () => resolve(site));
  });
}

beforeAll(async () => {
  if (browserMissing) return;
  server = await startVisualizer({ port: 0, log: () => {} });
  browser = await launchBrowser();
  other = await otherSite(server.inspectUrl);
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((resolve) => (other ? other.close(resolve) : resolve(undefined)));
});

describe.skipIf(browserMissing !== null)('the visualizer against a browser', () => {
  it('refuses a page on another localhost port that tries to stream to /inspect', async () => {
    const page = await browser.newPage();
    await page.goto(`http://localhost:${(other.address() as AddressInfo).port}/`);
    await page.waitForFunction(() => document.title !== 'pending');
    expect(await page.title()).toBe('refused');
    expect(server.stats().liveSessions).toBe(0);
    await page.close();
  });

  it('shows a streamed machine too large to chart as such, with its state', async () => {
    const states = Object.fromEntries(
      Array.from({ length: MAX_CHART_STATES + 1 }, (_, i) => [`s${i}`, { on: { next: `s${(i + 1) % (MAX_CHART_STATES + 1)}` } }]),
    );
    const socket = new WebSocket(server.inspectUrl);
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(
      JSON.stringify({
        type: '@xstate.actor',
        sessionId: 'x:0',
        definition: JSON.stringify({ id: 'big', initial: 's0', states }),
        snapshot: { status: 'active', value: 's0' },
      }),
    );
    const { page, errors } = await openVisualizer(browser, `${server.url}?mode=live`);
    await page.waitForFunction(() => document.getElementById('chart')?.textContent?.includes('too large to chart'));
    expect(await page.innerText('#chart')).toBe(
      `The chart of big cannot be drawn: the machine 'big' is too large to chart: more than ${MAX_CHART_STATES} states`,
    );
    expect(await page.innerText('#current-state')).toBe('s0');
    expect(errors).toEqual([]);
    socket.close();
    await page.close();
  });
});
