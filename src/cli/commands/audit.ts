/**
 * `pulse-safety audit`: recorded transcripts replayed against the rules in
 * shadow mode.
 *
 * `pulse-safety audit <file...> [--catalog auto|<shipped name>|<path>] [--format text|json]`
 * audits recorded transcripts against the rules; `--demo` audits the embedded
 * demo transcript instead. `--catalog auto` (the default) picks the catalog of
 * the agent whose log format the input is in, else the shipped catalog that
 * knows the most tool names of the input. Exit codes: 0 nothing
 * refused (and always for `--demo`), 1 something refused or a run ends with an
 * unverified write, 2 bad input (a message naming the file and the position,
 * never a stack trace).
 *
 * The report is written as it is made (run by run; JSON element by element),
 * and the inputs are read as streams where their format allows, so a
 * transcript of a million steps never sits in memory whole.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { Option, type Command } from 'commander';
import {
  AUDIT_POLICIES,
  AuditSummarizer,
  DEFAULT_AUDIT_POLICY,
  RunAuditor,
  type AuditDetail,
  type AuditOptions,
  type AuditPolicy,
  type AuditSummary,
  type RunAudit,
} from '../../audit/audit.js';
import { formatAuditHeader, formatPolicyComparison, formatRunText, formatSummaryText } from '../../audit/format.js';
import { builtinCatalogs, compileCatalog, type CompiledCatalog } from '../../classify/catalog/index.js';
import { AUTO_CATALOG, autoCatalog } from '../../audit/catalog-choice.js';
import { DEMO_SOURCE, demoRuns } from '../../audit/demo.js';
import { CatalogError } from '../../errors/index.js';
import { TranscriptError } from '../../errors/transcript-error.js';
import { printable } from '../../util/printable.js';
import { readTranscriptEvents, TRANSCRIPT_FORMATS, type JsonlEvent } from '../../audit/transcripts/index.js';
import { EXIT, InputError, readCatalog, withDefaults, type CommandIo } from '../io.js';

interface AuditCommandOptions {
  policy: AuditPolicy;
  comparePolicies?: boolean;
  catalog: string;
  format: 'text' | 'json';
  demo?: boolean;
  summaryOnly?: boolean;
  strictFailedWrites?: boolean;
}

/**
 * Text written out in chunks of about 64 KiB, waiting for the sink to drain
 * when it says it is full (a pipe to a slow reader), so a long report never
 * piles up in memory.
 */
class ChunkedOutput {
  private chunks: string[] = [];
  private size = 0;

  constructor(
    private readonly out: (text: string) => unknown,
    private readonly drain: (() => Promise<void>) | undefined,
  ) {}

  async write(text: string): Promise<void> {
    this.chunks.push(text);
    this.size += text.length;
    if (this.size >= 65_536) await this.flush();
  }

  async flush(): Promise<void> {
    if (this.size === 0) return;
    const text = this.chunks.join('');
    this.chunks = [];
    this.size = 0;
    if (this.out(text) === false && this.drain) await this.drain();
  }
}

/** The runs of the inputs as events, one file after another (the demo's from memory). */
async function* eventsOf(files: readonly string[], demo: boolean): AsyncGenerator<JsonlEvent> {
  if (demo) {
    for (const run of demoRuns()) {
      yield { type: 'run', id: run.id, reward: run.reward };
      for (const step of run.steps) yield { type: 'step', step };
    }
    return;
  }
  for (const file of files) {
    try {
      accessSync(file, constants.R_OK);
    } catch (error) {
      throw new InputError(`${file}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    if (!statSync(file).isFile())
      throw new InputError(`${file}: not a file (a transcript is one file; name the files of a folder one by one)`);
    yield* readTranscriptEvents(file);
  }
}

/** What one replay of the inputs is audited with. */
type ReplayOptions = AuditOptions & { detail: AuditDetail };

/**
 * Replays the events run by run, handing each finished run to `onRun` in
 * input order. Steps before the first `run` event belong to a run named
 * `run` without a reward (a transcript that does not split its runs).
 */
async function auditEachRun(
  events: AsyncIterable<JsonlEvent>,
  options: ReplayOptions,
  onRun: (run: RunAudit) => Promise<void> | void,
): Promise<void> {
  let auditor: RunAuditor | null = null;
  for await (const event of events) {
    if (event.type === 'run') {
      if (auditor !== null) await onRun(auditor.finish());
      auditor = new RunAuditor(event, options);
    } else {
      auditor ??= new RunAuditor({ id: 'run', reward: null }, options);
      auditor.step(event.step);
    }
  }
  if (auditor !== null) await onRun(auditor.finish());
}

/** One run's audit as JSON, written element by element (a run of a million steps is never one string). */
async function writeRunJson(run: RunAudit, output: ChunkedOutput): Promise<void> {
  const { refusals, findings, ...head } = run;
  await output.write(`${JSON.stringify(head).slice(0, -1)},"refusals":[`);
  for (let i = 0; i < refusals.length; i++) await output.write(`${i === 0 ? '' : ','}\n${JSON.stringify(refusals[i])}`);
  await output.write('],"findings":[');
  for (let i = 0; i < findings.length; i++) await output.write(`${i === 0 ? '' : ','}\n${JSON.stringify(findings[i])}`);
  await output.write(']}');
}

/**
 * The audit's report as text or JSON, written as it is made: the head, each
 * run (none with `--summary-only`), then the summary and the policies
 * compared.
 */
class AuditReport {
  private runs = 0;
  private readonly json: boolean;
  private readonly summaryOnly: boolean;

  constructor(
    private readonly options: AuditCommandOptions,
    private readonly output: ChunkedOutput,
  ) {
    this.json = options.format === 'json';
    this.summaryOnly = options.summaryOnly === true;
  }

  /** The catalog used, how it was chosen (`label`), and the sources audited. */
  async head(catalog: string, label: string, sources: readonly string[]): Promise<void> {
    if (this.json) {
      const head = JSON.stringify({ catalog, catalogChoice: label, sources });
      await this.output.write(`${head.slice(0, -1)}${this.summaryOnly ? '' : ',"runs":['}`);
    } else {
      await this.output.write(
        `${printable(`pulse-safety audit of ${sources.join(', ')} (catalog ${label}, policy ${this.options.policy})`)}\n\n${formatAuditHeader()}\n`,
      );
    }
  }

  async run(run: RunAudit): Promise<void> {
    if (this.summaryOnly) return;
    if (this.json) {
      await this.output.write(this.runs === 0 ? '\n' : ',\n');
      await writeRunJson(run, this.output);
    } else {
      await this.output.write(formatRunText(run));
    }
    this.runs += 1;
  }

  /** The summary, and with `--compare-policies` each policy's (`compared`, empty without it); then flushes. */
  async end(summary: AuditSummary, compared: readonly { policy: AuditPolicy; summary: AuditSummary }[]): Promise<void> {
    if (this.json) {
      const policies =
        compared.length === 0 ? '' : `,"policies":${JSON.stringify(Object.fromEntries(compared.map((c) => [c.policy, c.summary])))}`;
      await this.output.write(
        `${this.summaryOnly ? '' : '\n]'},"policy":${JSON.stringify(this.options.policy)},"summary":${JSON.stringify(summary, null, 2)}${policies}}\n`,
      );
    } else {
      await this.output.write(`${this.summaryOnly ? '' : '\n'}${formatSummaryText(summary)}`);
      if (compared.length > 0) await this.output.write(formatPolicyComparison(compared));
    }
    await this.output.flush();
  }
}

/** @throws InputError when the files and `--demo` do not go together, or `--catalog` does not apply to the demo. */
function checkInputs(files: readonly string[], options: AuditCommandOptions): void {
  if (options.demo && files.length > 0) throw new InputError('give either transcript files or --demo, not both');
  if (!options.demo && files.length === 0) throw new InputError('no transcript given: name one or more files, or use --demo');
  if (options.demo && options.catalog !== 'pulse' && options.catalog !== 'auto') {
    throw new InputError(`the demo transcript uses Pulse tool names: --catalog ${options.catalog} does not apply to it`);
  }
}

/**
 * The catalog the audit classifies with and its label in the report: the
 * one `--catalog` names, or with `auto` the catalog of the input's log
 * format when every run's reader named the same one, else the best shipped
 * one for the tool names of the input (a first pass over it, the names and
 * formats only; its warning to `err`).
 */
async function chooseCatalog(
  files: readonly string[],
  options: AuditCommandOptions,
  err: (text: string) => void,
): Promise<{ catalog: CompiledCatalog; label: string }> {
  if (options.catalog !== AUTO_CATALOG) return { catalog: compileCatalog(readCatalog(options.catalog)), label: options.catalog };
  const names = new Set<string>();
  const formats = new Set<string | undefined>();
  for await (const event of eventsOf(files, options.demo === true)) {
    if (event.type === 'run') formats.add(event.catalog);
    else if (event.step.type === 'call') names.add(event.step.name);
  }
  const auto = autoCatalog(names, formats);
  if (auto.warning !== null) err(`pulse-safety audit: ${printable(auto.warning)}\n`);
  return { catalog: auto.catalog, label: auto.label };
}

/**
 * `--compare-policies`: the same input replayed under every policy, counts
 * only; the policy already replayed keeps its `summary`.
 */
async function comparePolicies(
  files: readonly string[],
  options: AuditCommandOptions,
  base: { catalog: CompiledCatalog; strictFailedWrites: boolean; summary: AuditSummary },
): Promise<{ policy: AuditPolicy; summary: AuditSummary }[]> {
  const compared: { policy: AuditPolicy; summary: AuditSummary }[] = [];
  for (const policy of AUDIT_POLICIES) {
    if (policy === options.policy) {
      compared.push({ policy, summary: base.summary });
      continue;
    }
    const other = new AuditSummarizer();
    const replay: ReplayOptions = { catalog: base.catalog, strictFailedWrites: base.strictFailedWrites, policy, detail: 'counts' };
    await auditEachRun(eventsOf(files, options.demo === true), replay, (run) => other.add(run));
    compared.push({ policy, summary: other.summary() });
  }
  return compared;
}

/**
 * Runs the audit and returns the exit code; prints the report to `output`
 * as it goes (run by run; JSON element by element), warnings to `err`.
 * Inputs are read as streams where their format allows
 * (`readTranscriptEvents`); with `--summary-only` no run is kept in memory.
 * @throws InputError, TranscriptError or CatalogError on bad input.
 */
async function runAudit(
  files: string[],
  options: AuditCommandOptions,
  output: ChunkedOutput,
  err: (text: string) => void,
): Promise<number> {
  checkInputs(files, options);
  const demo = options.demo === true;
  const { catalog, label } = await chooseCatalog(files, options, err);
  const summaryOnly = options.summaryOnly === true;
  const strictFailedWrites = options.strictFailedWrites === true;
  const detail = summaryOnly ? 'counts' : options.format === 'json' ? 'all' : 'refusals';
  const summarizer = new AuditSummarizer();
  const report = new AuditReport(options, output);
  await report.head(catalog.name, label, demo ? [DEMO_SOURCE] : files);
  await auditEachRun(eventsOf(files, demo), { catalog, strictFailedWrites, policy: options.policy, detail }, async (run) => {
    summarizer.add(run);
    await report.run(run);
  });
  const summary = summarizer.summary();
  const compared = options.comparePolicies === true ? await comparePolicies(files, options, { catalog, strictFailedWrites, summary }) : [];
  await report.end(summary, compared);
  if (demo) return EXIT.clean;
  const { blockedCalls, refusedAnswers, runsEndingUnverified } = summary;
  return blockedCalls + refusedAnswers + runsEndingUnverified > 0 ? EXIT.refused : EXIT.clean;
}

/**
 * Adds `audit` to a commander program. Bad input (InputError,
 * TranscriptError, CatalogError) is one line on `err` and exit 2; anything
 * else is rethrown (an internal error).
 */
export function registerAuditCommand(program: Command, io: CommandIo = {}): Command {
  const sink = withDefaults(io);
  program
    .command('audit')
    .description('Audit recorded agent transcripts in shadow mode: what would the gate have refused?')
    .argument('[files...]', `transcripts: ${TRANSCRIPT_FORMATS.join(', ')}`)
    .option(
      '--catalog <name|path>',
      `tool catalog: ${AUTO_CATALOG} (the catalog of the log's agent, else the shipped catalog that knows the most tool names), ${Object.keys(builtinCatalogs).join(', ')}, or a JSON catalog file`,
      AUTO_CATALOG,
    )
    .addOption(new Option('--format <format>', 'output format').choices(['text', 'json']).default('text'))
    .option('--demo', 'audit the embedded demo transcript (exits 0 even with refusals)')
    .option('--summary-only', 'print only the summary (JSON: leave out the runs)')
    .option('--strict-failed-writes', 'treat a failed write as needing verification (it may have applied)')
    .addOption(
      new Option(
        '--policy <policy>',
        'rules to replay with: spec (session-wide), targets (target-aware), full (targets and self-verifying writes)',
      )
        .choices([...AUDIT_POLICIES])
        .default(DEFAULT_AUDIT_POLICY),
    )
    // --compare-policies replays under every policy: a --policy beside it would choose nothing, so it is a usage error.
    .addOption(
      new Option('--compare-policies', 'replay under every policy and print them side by side (not with --policy)').conflicts('policy'),
    )
    .exitOverride()
    .action(async (files: string[], options: AuditCommandOptions) => {
      try {
        sink.setExitCode(await runAudit(files, options, new ChunkedOutput(sink.out, sink.drain), sink.err));
      } catch (error) {
        if (error instanceof InputError || error instanceof TranscriptError || error instanceof CatalogError) {
          sink.err(`pulse-safety audit: ${printable(error.message)}\n`);
          sink.setExitCode(EXIT.badInput);
          return;
        }
        throw error;
      }
    });
  return program;
}
