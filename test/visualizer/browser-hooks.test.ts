/**
 * `pulse-safety serve --hooks` in a real browser (Debian chromium via
 * playwright-core): Claude Code hook payloads are answered by the hook
 * (`runHook`, the code `pulse-safety hook claude-code` runs), which keeps
 * the session in a real state directory; the visualizer watching that
 * directory lists the session, and the page follows it through the chart as
 * the hooks change it, and shows it unreadable when its file is corrupt.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHookSessions } from '../../src/hooks/session-file.js';
import { runHook } from '../../src/hooks/run.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, isHighlighted, launchBrowser, openVisualizer, screenshot, waitForState } from '../support/browser.js';

const SESSION = 'edcf5abf-5a0c-46b1-86f1-8dec536746d6';

let dir: string;
let server: VisualizerServer;
let browser: Browser;
let page: Page;
let pageErrors: string[] = [];

beforeAll(async () => {
  if (browserMissing) return;
  dir = mkdtempSync(join(tmpdir(), 'pulse-hooks-browser-'));
  server = await startVisualizer({ port: 0, hooks: { directory: dir } });
  browser = await launchBrowser();
  const opened = await openVisualizer(browser, `${server.url}?mode=live`);
  page = opened.page;
  pageErrors = opened.errors;
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** One Claude Code hook event answered by the hook, keeping the session in `dir`; returns what the hook printed. */
async function hook(event: string, fields: Record<string, unknown> = {}): Promise<string> {
  const payload = {
    session_id: SESSION,
    transcript_path: `/home/u/.claude/projects/-work-proj/${SESSION}.jsonl`,
    cwd: '/home/dev/proj',
    permission_mode: 'acceptEdits',
    hook_event_name: event,
    ...fields,
  };
  const output = await runHook('claude-code', JSON.stringify(payload), { stateDir: dir, env: {} });
  expect(output.exitCode).toBe(0);
  return output.stdout;
}

/** A Bash call run through its PreToolUse and, when allowed, its PostToolUse hook; returns the PreToolUse answer. */
async function bash(id: string, command: string): Promise<string> {
  const call = { tool_name: 'Bash', tool_input: { command }, tool_use_id: id };
  const answer = await hook('PreToolUse', call);
  if (!answer.includes('"deny"')) {
    await hook('PostToolUse', { ...call, tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false } });
  }
  return answer;
}

/** The text of the newest log entry once it has this label. */
async function newestEntry(label: string): Promise<{ text: string; classes: string }> {
  await page.waitForFunction((expected) => document.querySelector('#log li:first-child .label')?.textContent === expected, label);
  const entry = page.locator('#log li').first();
  return { text: await entry.innerText(), classes: (await entry.getAttribute('class')) ?? '' };
}

if (browserMissing !== null && process.env.CI === 'true') {
  it('runs the hook sessions browser test', () => {
    throw new Error(browserMissing!);
  });
}

describe.skipIf(browserMissing !== null)('hook sessions in a browser (serve --hooks)', () => {
  it('lists a Claude Code session from the state directory and follows it through the chart as its hooks run', async () => {
    expect(await page.isVisible('#hooks-directory')).toBe(true);
    expect(await page.innerText('#hooks-path')).toBe(dir);

    await hook('SessionStart', { source: 'startup' });
    const button = page.locator('#live-sessions button[data-hook="readable"]');
    await button.waitFor();
    expect(await button.innerText()).toBe(`claude-code hook · ${SESSION} · /home/dev/proj · RESOLVING · 0 decisions`);
    expect(await button.getAttribute('aria-pressed')).toBe('true');
    await waitForState(page, 'RESOLVING');
    expect(await isHighlighted(page, 'safety.RESOLVING')).toBe(true);
    expect(await page.innerText('[data-hook="host"]')).toBe('claude-code');
    expect(await page.innerText('[data-hook="cwd"]')).toBe('/home/dev/proj');

    // The first call: rm -rf ~/x before anything was read is refused.
    expect(await bash('toolu_01', 'rm -rf ~/x')).toContain('FSM_BLOCKED');
    const refused = await newestEntry('PreToolUse Bash → deny');
    expect(refused.classes).toBe('blocked');
    expect(refused.text).toContain('FSM_BLOCKED');

    // ls ~ reads the home folder: READING.
    await bash('toolu_02', 'ls ~');
    await waitForState(page, 'READING');
    expect(await isHighlighted(page, 'safety.READING')).toBe(true);
    await newestEntry('PostToolUse Bash → continue');

    // The write admitted, its outcome not yet recorded: WRITING, the call waiting for its outcome.
    const write = { tool_name: 'Bash', tool_input: { command: 'rm -rf ~/x' }, tool_use_id: 'toolu_03' };
    expect(await hook('PreToolUse', write)).not.toContain('"deny"');
    await waitForState(page, 'WRITING');
    expect(await isHighlighted(page, 'safety.WRITING')).toBe(true);
    expect(await page.innerText('#hook-calls')).toMatch(/^Bash \(write\) · /);

    await hook('PostToolUse', { ...write, tool_response: { stdout: '', stderr: '', interrupted: false, isImage: false } });
    await waitForState(page, 'VERIFYING');
    expect(await isHighlighted(page, 'safety.VERIFYING')).toBe(true);
    expect(await page.isVisible('#hook-calls-none')).toBe(true);

    // The agent may not stop before a verifying read.
    expect(await hook('Stop', { stop_hook_active: false })).toContain('"block"');
    const stop = await newestEntry('Stop → block-stop');
    expect(stop.classes).toBe('blocked');
    expect(await page.innerText('[data-hook="stop-blocks"]')).toBe('1');
    await screenshot(page, 'hooks-claude-code-stop-refused');

    // A corrupt file: shown as such, with its code, still naming its session.
    const [entry] = await readHookSessions(dir);
    writeFileSync(entry!.path, '{"version":1,');
    const unreadable = page.locator('#live-sessions button[data-hook="unreadable"]');
    await unreadable.waitFor();
    expect(await unreadable.innerText()).toBe(
      `claude-code hook · ${SESSION} · /home/dev/proj · unreadable (HOOK_STATE_UNREADABLE) · 0 decisions`,
    );
    expect(await page.innerText('#hook-unreadable')).toMatch(/^This session file cannot be read \(HOOK_STATE_UNREADABLE\): /);
    await screenshot(page, 'hooks-unreadable');

    // The file removed: the session leaves the list.
    rmSync(entry!.path);
    await page.locator('#live-sessions button[data-hook]').waitFor({ state: 'detached' });
    expect(await page.isVisible('#live-empty')).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
