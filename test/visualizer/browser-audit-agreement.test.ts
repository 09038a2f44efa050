/**
 * The visualizer and `pulse-safety audit` agree (issue 27 item 1): every
 * incident transcript (test/fixtures/incidents/), the agents' own logs of
 * test/fixtures/native/ (Claude Code, Gemini CLI, Codex, OpenAI) and the
 * tau-bench runs are opened in the page as a user opens them (the file
 * picker; an incident's catalog file through the catalog picker), and the
 * refusals the page shows, call by call (run, step, tool, rule), must be
 * those of the command line's JSON report for the same file and the same
 * catalog choice (`auto` by default), with the same catalog chosen and the
 * same warning. One browser, one server, one page for every file.
 */
import { existsSync, readdirSync } from 'node:fs';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditReport } from '../../src/audit/audit.js';
import { main } from '../../src/cli/main.js';
import { MAX_REPLAY_PAGE } from '../../src/visualizer/bounds.js';
import { startVisualizer, type VisualizerServer } from '../../src/visualizer/server.js';
import { browserMissing, launchBrowser, openVisualizer } from '../support/browser.js';

const INCIDENTS = fileURLToPath(new URL('../fixtures/incidents/', import.meta.url));
const NATIVE = fileURLToPath(new URL('../fixtures/native/', import.meta.url));
const TAU_BENCH = fileURLToPath(new URL('../../../shared/data/tau-bench/gpt-4o-airline.json', import.meta.url));
const tauBenchMissing = existsSync(TAU_BENCH) ? null : `tau-bench agreement skipped: ${TAU_BENCH} is absent`;
if (tauBenchMissing) console.warn(tauBenchMissing);

/** The incident transcripts (every file of the folder but the catalogs), then the agents' own logs, each named by its folder. */
const transcripts = Object.entries({ incidents: INCIDENTS, native: NATIVE }).flatMap(([folder, dir]) =>
  readdirSync(dir)
    .filter((name) => !name.endsWith('.catalog.json'))
    .sort()
    .map((name): [name: string, file: string] => [`${folder}/${name}`, `${dir}${name}`]),
);

/** The incidents audited with a catalog of their own as well, and strict failed writes where it matters (as test/suites/incidents.test.ts audits them). */
const WITH_CATALOG_FILE: [transcript: string, catalog: string, strictFailedWrites: boolean][] = [
  ['07-calendar-parallel-creates.json', 'calendar.catalog.json', false],
  ['08-mcp-drop-table.jsonl', 'database.catalog.json', false],
  ['09-copilot-failed-push.json', 'copilot.catalog.json', false],
  ['09-copilot-failed-push.json', 'copilot.catalog.json', true],
  ['10b-legacy-function-call-drop.json', 'sql.catalog.json', false],
];

/** A refusal as both sides name it: run index, step index, subject, tool (empty for an answer), rule. */
type Row = string;

const row = (run: number, step: number, subject: string, tool: string | null, rule: string): Row =>
  `run ${run} step ${step} ${subject} ${tool ?? ''} ${rule}`;

interface CliAudit {
  report: AuditReport & { catalog: string; catalogChoice: string };
  refusals: Row[];
  /** The warning `auto` printed (a catalog that knows fewer than half the tool names), or ''. */
  warning: string;
}

/** The JSON report of `pulse-safety audit --format json <file> [flags]`, as the command line prints it. */
async function cliAudit(file: string, ...flags: string[]): Promise<CliAudit> {
  let out = '';
  let err = '';
  const code = await main(['audit', file, '--format', 'json', ...flags], {
    out: (text) => (out += text),
    err: (text) => (err += text),
  });
  expect(code, err).not.toBe(2);
  const report = JSON.parse(out) as CliAudit['report'];
  const refusals = report.runs.flatMap((run, index) =>
    run.refusals.map((refusal) => row(index, refusal.index, refusal.subject, refusal.tool, refusal.rule)),
  );
  const warning = /^pulse-safety audit: (warning: .*)$/m.exec(err)?.[1] ?? '';
  return { report, refusals, warning };
}

interface PageAudit {
  refusals: Row[];
  count: string;
  choice: string;
  warning: string;
  /** Each run's option in the run picker. */
  runs: string[];
  /** The steps of the first run's first page marked refused on the timeline. */
  timelineRefused: number[];
}

let server: VisualizerServer;
let browser: Browser;
let page: Page;
/** Transcripts opened so far: the next one opened is replay `r<opened + 1>`. */
let opened = 0;

beforeAll(async () => {
  if (browserMissing) return;
  server = await startVisualizer({ port: 0 });
  browser = await launchBrowser();
  ({ page } = await openVisualizer(browser, `${server.url}?mode=replay`));
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

/** Chooses a catalog file in the page's catalog picker; resolves once the transcript shown is replayed under it. */
async function chooseCatalogFile(file: string): Promise<void> {
  const before = await page.$$eval('#replay-catalog option', (options) => options.length);
  await page.setInputFiles('#replay-catalog-file', file);
  await page.waitForFunction((n) => document.querySelectorAll('#replay-catalog option').length > n, before);
  const id = await page.inputValue('#replay-catalog');
  await page.waitForFunction((wanted) => document.getElementById('timeline')!.dataset.run?.endsWith(`/${wanted}`), id);
}

/** Opens a transcript file in the page with the file picker, and reads what the page shows of the audit's refusals. */
async function pageAudit(file: string): Promise<PageAudit> {
  const id = `r${++opened}`;
  await page.setInputFiles('#replay-file', file);
  await page.waitForFunction((wanted) => document.getElementById('timeline')!.dataset.run?.includes(`/${wanted}/0/`), id, {
    timeout: 30_000,
  });
  expect(await page.innerText('#replay-error')).toBe('');
  const refusals = await page.$$eval('#replay-refusal-list li', (items) =>
    items.map((item) => {
      const data = (item as HTMLElement).dataset;
      return `run ${data.run} step ${data.step} ${data.subject} ${data.tool} ${data.rule}`;
    }),
  );
  return {
    refusals,
    count: await page.innerText('#replay-refusal-count'),
    choice: await page.innerText('#replay-catalog-choice'),
    warning: (await page.textContent('#replay-warning')) ?? '',
    runs: await page.$$eval('#replay-run option', (options) => options.map((option) => option.textContent ?? '')),
    timelineRefused: await page.$$eval('#timeline li.refused', (items) => items.map((item) => Number((item as HTMLElement).dataset.step))),
  };
}

/** Expects the page to show exactly the command line's refusals, run by run and call by call. */
function expectAgreement(shown: PageAudit, cli: CliAudit, choice: string, strictFailedWrites = false): void {
  expect(shown.refusals).toEqual(cli.refusals);
  const total = cli.report.summary.blockedCalls + cli.report.summary.refusedAnswers;
  expect(shown.count).toMatch(total === 0 ? /refuses nothing/ : new RegExp(`^The audit refuses ${total} in this transcript`));
  expect(shown.choice).toMatch(
    new RegExp(
      `^Catalog ${choice.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, policy full${strictFailedWrites ? ', strict failed writes' : ''}$`,
    ),
  );
  expect(shown.warning).toBe(cli.warning);
  expect(shown.runs).toHaveLength(cli.report.runs.length);
  cli.report.runs.forEach((run, index) =>
    expect(shown.runs[index]).toMatch(new RegExp(` · ${run.blockedCalls + run.refusedAnswers} refused$`)),
  );
  // The first run's timeline (its first page) comes from the replay of that run alone: the same refusals.
  expect(shown.timelineRefused).toEqual(
    cli.report.runs[0]!.refusals.map((refusal) => refusal.index).filter((index) => index < MAX_REPLAY_PAGE),
  );
}

describe.skipIf(browserMissing !== null)('the page and `pulse-safety audit` refuse the same calls', () => {
  it.each(transcripts)('%s, catalog auto (the default of both)', async (_name, file) => {
    const cli = await cliAudit(file);
    expect(await page.inputValue('#replay-catalog')).toBe('auto');
    expectAgreement(await pageAudit(file), cli, cli.report.catalogChoice);
  });

  it.skipIf(tauBenchMissing !== null)('every run of the tau-bench file, catalog auto', { timeout: 60_000 }, async () => {
    const cli = await cliAudit(TAU_BENCH);
    expect(cli.report.runs.length).toBeGreaterThan(100);
    expect(cli.refusals.length).toBeGreaterThan(0);
    expectAgreement(await pageAudit(TAU_BENCH), cli, cli.report.catalogChoice);
  });

  it.each(WITH_CATALOG_FILE)('%s with --catalog %s (strict failed writes: %s), chosen in the page', async (name, catalogName, strict) => {
    const file = `${INCIDENTS}${name}`;
    const catalogFile = `${INCIDENTS}${catalogName}`;
    const cli = await cliAudit(file, '--catalog', catalogFile, ...(strict ? ['--strict-failed-writes'] : []));
    await chooseCatalogFile(catalogFile);
    if (strict) {
      await page.check('#replay-strict');
      await page.waitForFunction(() => document.getElementById('timeline')!.dataset.run?.startsWith('full/true/'));
    }
    expectAgreement(await pageAudit(file), cli, basename(catalogFile), strict);
    if (strict) {
      await page.uncheck('#replay-strict');
      await page.waitForFunction(() => document.getElementById('timeline')!.dataset.run?.startsWith('full/false/'));
    }
    await page.selectOption('#replay-catalog', 'auto');
    await page.waitForFunction(() => document.getElementById('timeline')!.dataset.run?.endsWith('/auto'));
  });

  it('refuses something in the incidents under their own catalogs, so agreeing there is no agreement on nothing', async () => {
    const refused = await Promise.all(
      WITH_CATALOG_FILE.filter(([name]) => name !== '09-copilot-failed-push.json').map(
        async ([name, catalog]) => (await cliAudit(`${INCIDENTS}${name}`, '--catalog', `${INCIDENTS}${catalog}`)).refusals.length,
      ),
    );
    expect(refused.every((count) => count > 0)).toBe(true);
    expect(
      (await cliAudit(`${INCIDENTS}09-copilot-failed-push.json`, '--catalog', `${INCIDENTS}copilot.catalog.json`, '--strict-failed-writes'))
        .refusals.length,
    ).toBeGreaterThan(0);
  });
});
