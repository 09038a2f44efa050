/**
 * The `pulse-safety` command line.
 *
 * `pulse-safety audit <file...> [--catalog auto|<shipped name>|<path>] [--format text|json]`
 * audits recorded transcripts against the rules; `--demo` audits the embedded
 * demo transcript instead. `--catalog auto` (the default) picks the shipped
 * catalog that knows the most tool names of the input. Exit codes: 0 nothing
 * refused (and always for `--demo`), 1 something refused or a run ends with an
 * unverified write, 2 bad input (a message naming the file and the position,
 * never a stack trace); 70 an internal error (a bug: please report it with
 * the input).
 */
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { Command, CommanderError, Option } from 'commander';
import { AUDIT_POLICIES, AuditSummarizer, RunAuditor, type AuditPolicy, type AuditSummary, type RunAudit } from '../audit/audit.js';
import { formatPolicyComparison, formatRunText, formatSummaryText } from '../audit/format.js';
import {
  builtinCatalogs,
  catalogJsonSchema,
  compileCatalog,
  parseCatalog,
  pickCatalog,
  type Catalog,
  type CompiledCatalog,
} from '../classify/catalog/index.js';
import { DEMO_SOURCE, demoRuns } from '../audit/demo.js';
import { CatalogError } from '../errors/index.js';
import { printable } from '../util/printable.js';
import { readTranscriptEvents, type JsonlEvent } from '../audit/transcripts/index.js';
import { registerExportCommand } from '../charts/index.js';
import { registerServeCommand } from './commands/serve.js';
import { registerMcpProxyCommand } from './commands/mcp-proxy.js';
import { TranscriptError } from '../errors/transcript-error.js';

/** The package's version: from the nearest package.json above this module (in `src/` or `dist/src/`). */
function packageVersion(): string {
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      return (JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { version: string }).version;
    } catch {
      if (dir.pathname === '/') return 'unknown';
    }
  }
}

/** Exit codes of `pulse-safety audit`. */
export const EXIT = { clean: 0, refused: 1, badInput: 2 } as const;

/** A problem with the command's input: reported as one line, exit 2. */
class InputError extends Error {}

/**
 * The catalog a `--catalog` value names, validated: a shipped catalog's name,
 * or the path of a JSON catalog file.
 * @throws InputError when the file cannot be read or parsed; CatalogError when it does not validate.
 */
function readCatalog(catalog: string): Catalog {
  if (Object.prototype.hasOwnProperty.call(builtinCatalogs, catalog)) {
    return builtinCatalogs[catalog as keyof typeof builtinCatalogs];
  }
  let text: string;
  try {
    text = readFileSync(catalog, 'utf8');
  } catch (error) {
    throw new InputError(
      `${catalog}: not a shipped catalog (${Object.keys(builtinCatalogs).join(', ')}) and not a readable file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InputError(`${catalog}: not valid JSON (${(error as Error).message})`);
  }
  return parseCatalog(json, catalog);
}

/**
 * `--catalog auto`: the shipped catalog that knows the most of the tool names, with a note for the report, and a warning when it still knows fewer
 * than half of them (the rest are judged as writes).
 */
function autoCatalog(names: Iterable<string>): { catalog: CompiledCatalog; label: string; warning: string | null } {
  const choice = pickCatalog(names);
  const label = `auto: ${choice.name}, knows ${choice.known} of ${choice.total} tool names`;
  const warning =
    choice.total > 0 && choice.known * 2 < choice.total
      ? `warning: catalog '${choice.name}' knows only ${choice.known} of the ${choice.total} tool names in the input; the others are judged as writes, or by the catalog's fallback where it has one (name a catalog with --catalog)`
      : null;
  return { catalog: compileCatalog(builtinCatalogs[choice.name]), label, warning };
}

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
 * Runs the audit and returns the exit code; prints the report to `output`
 * as it goes (run by run; JSON element by element), warnings to `err`.
 * Inputs are read as streams where their format allows
 * (`readTranscriptEvents`); with `--summary-only` no run is kept in memory.
 */
async function runAudit(
  files: string[],
  options: AuditCommandOptions,
  output: ChunkedOutput,
  err: (text: string) => void,
): Promise<number> {
  if (options.demo && files.length > 0) throw new InputError('give either transcript files or --demo, not both');
  if (!options.demo && files.length === 0) throw new InputError('no transcript given: name one or more files, or use --demo');
  if (options.demo && options.catalog !== 'pulse' && options.catalog !== 'auto') {
    throw new InputError(`the demo transcript uses Pulse tool names: --catalog ${options.catalog} does not apply to it`);
  }
  const demo = options.demo === true;
  const sources = demo ? [DEMO_SOURCE] : files;
  let catalog: CompiledCatalog;
  let label = options.catalog;
  if (options.catalog === 'auto') {
    const names = new Set<string>(); // a first pass: the tool names only
    for await (const event of eventsOf(files, demo)) if (event.type === 'step' && event.step.type === 'call') names.add(event.step.name);
    const auto = autoCatalog(names);
    catalog = auto.catalog;
    label = auto.label;
    if (auto.warning !== null) err(`pulse-safety audit: ${printable(auto.warning)}\n`);
  } else {
    catalog = compileCatalog(readCatalog(options.catalog));
  }
  const summaryOnly = options.summaryOnly === true;
  const json = options.format === 'json';
  const strictFailedWrites = options.strictFailedWrites === true;
  const auditOptions = {
    catalog,
    strictFailedWrites,
    policy: options.policy,
    detail: summaryOnly ? 'counts' : json ? 'all' : 'refusals',
  } as const;
  const summarizer = new AuditSummarizer();
  let runs = 0;
  let auditor: RunAuditor | null = null;
  const finishRun = async () => {
    if (auditor === null) return;
    const run = auditor.finish();
    auditor = null;
    summarizer.add(run);
    if (summaryOnly) return;
    if (json) {
      await output.write(runs === 0 ? '\n' : ',\n');
      await writeRunJson(run, output);
    } else {
      await output.write(formatRunText(run));
    }
    runs += 1;
  };

  if (json) {
    const head = JSON.stringify({ catalog: catalog.name, catalogChoice: label, sources });
    await output.write(`${head.slice(0, -1)}${summaryOnly ? '' : ',"runs":['}`);
  } else {
    await output.write(`${printable(`pulse-safety audit of ${sources.join(', ')} (catalog ${label}, policy ${options.policy})`)}\n\n`);
  }
  for await (const event of eventsOf(files, demo)) {
    if (event.type === 'run') {
      await finishRun();
      auditor = new RunAuditor(event, auditOptions);
    } else {
      auditor ??= new RunAuditor({ id: 'run', reward: null }, auditOptions);
      auditor.step(event.step);
    }
  }
  await finishRun();
  const summary = summarizer.summary();
  // --compare-policies: the same input replayed under every policy, counts only.
  const compared: { policy: AuditPolicy; summary: AuditSummary }[] = [];
  if (options.comparePolicies === true) {
    for (const policy of AUDIT_POLICIES) {
      if (policy === options.policy) {
        compared.push({ policy, summary });
        continue;
      }
      const other = new AuditSummarizer();
      let current: RunAuditor | null = null;
      for await (const event of eventsOf(files, demo)) {
        if (event.type === 'run') {
          if (current !== null) other.add(current.finish());
          current = new RunAuditor(event, { catalog, strictFailedWrites, policy, detail: 'counts' });
        } else {
          current ??= new RunAuditor({ id: 'run', reward: null }, { catalog, strictFailedWrites, policy, detail: 'counts' });
          current.step(event.step);
        }
      }
      if (current !== null) other.add(current.finish());
      compared.push({ policy, summary: other.summary() });
    }
  }
  if (json) {
    const policies =
      compared.length === 0 ? '' : `,"policies":${JSON.stringify(Object.fromEntries(compared.map((c) => [c.policy, c.summary])))}`;
    await output.write(
      `${summaryOnly ? '' : '\n]'},"policy":${JSON.stringify(options.policy)},"summary":${JSON.stringify(summary, null, 2)}${policies}}\n`,
    );
  } else {
    await output.write(`${summaryOnly ? '' : '\n'}${formatSummaryText(summary)}`);
    if (compared.length > 0) await output.write(formatPolicyComparison(compared));
  }
  await output.flush();
  if (demo) return EXIT.clean;
  const { blockedCalls, refusedAnswers, runsEndingUnverified } = summary;
  return blockedCalls + refusedAnswers + runsEndingUnverified > 0 ? EXIT.refused : EXIT.clean;
}

/**
 * Builds the `pulse-safety` program. `out` and `err` receive the output
 * (default: stdout and stderr); `setExitCode` receives the exit code.
 */
export function buildProgram(
  io: {
    /** Receives the output; a sink that returns `false` is full until `drain` resolves (as a Node stream's `write`). */
    out?: (text: string) => unknown;
    err?: (text: string) => void;
    setExitCode?: (code: number) => void;
    /** Resolves when `out`'s sink can take more after it answered false; default: stdout's `drain`. */
    drain?: () => Promise<void>;
  } = {},
): Command {
  const out = io.out ?? ((text: string) => process.stdout.write(text));
  const drain = io.drain ?? (io.out === undefined ? () => once(process.stdout, 'drain').then(() => undefined) : undefined);
  const err = io.err ?? ((text: string) => process.stderr.write(text));
  const setExitCode = io.setExitCode ?? ((code: number) => (process.exitCode = code));

  const program = new Command('pulse-safety')
    .version(packageVersion(), '-V, --version', 'print the version')
    .description("A structural safety gate for LLM agents' tool calls: audit transcripts against the rules.")
    .exitOverride()
    .configureOutput({ writeOut: out, writeErr: err });

  program
    .command('audit')
    .description('Audit recorded agent transcripts in shadow mode: what would the gate have refused?')
    .argument(
      '[files...]',
      'transcripts: OpenAI chat, Responses or legacy function-call JSON, tau-bench JSON, Anthropic messages JSON, Claude Code session JSONL, Gemini CLI chat JSON, or pulse-safety JSONL',
    )
    .option(
      '--catalog <name|path>',
      `tool catalog: auto (the shipped catalog that knows the most tool names), ${Object.keys(builtinCatalogs).join(', ')}, or a JSON catalog file`,
      'auto',
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
        .default('full'),
    )
    // --compare-policies replays under every policy: a --policy beside it would choose nothing, so it is a usage error.
    .addOption(
      new Option('--compare-policies', 'replay under every policy and print them side by side (not with --policy)').conflicts('policy'),
    )
    .exitOverride()
    .action(async (files: string[], options: AuditCommandOptions) => {
      try {
        setExitCode(await runAudit(files, options, new ChunkedOutput(out, drain), err));
      } catch (error) {
        if (error instanceof InputError || error instanceof TranscriptError || error instanceof CatalogError) {
          err(`pulse-safety audit: ${printable(error.message)}\n`);
          setExitCode(EXIT.badInput);
          return;
        }
        throw error;
      }
    });

  const catalog = program.command('catalog').description('Work with tool catalogs (classification data)').exitOverride();
  catalog
    .command('schema')
    .description('print the catalog format as a JSON Schema, for editors')
    .exitOverride()
    .action(() => {
      out(JSON.stringify(catalogJsonSchema(), null, 2) + '\n');
    });
  catalog
    .command('check')
    .description("validate a catalog file (or a shipped catalog's name) and say what it lists")
    .argument('<name|path>', 'a shipped catalog or a JSON catalog file')
    .exitOverride()
    .action((file: string) => {
      try {
        const listed = readCatalog(file);
        compileCatalog(listed);
        out(`${file}: catalog '${listed.name}' is valid: ${Object.keys(listed.tools).length} tools\n`);
        setExitCode(EXIT.clean);
      } catch (error) {
        if (error instanceof InputError || error instanceof CatalogError) {
          err(`pulse-safety catalog: ${printable(error.message)}\n`);
          setExitCode(EXIT.badInput);
          return;
        }
        throw error;
      }
    });

  registerExportCommand(program, { out, err, setExitCode });
  registerServeCommand(program, { out, err, setExitCode });
  registerMcpProxyCommand(program, { out, err, setExitCode });
  return program;
}

/** Runs the CLI on `argv` (without node and script); resolves to the exit code. */
export async function main(argv: string[], io: Parameters<typeof buildProgram>[0] = {}): Promise<number> {
  let code = 0;
  const program = buildProgram({ ...io, setExitCode: (c) => (code = c) });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version exit 0; usage errors exit 2, as bad input.
      return error.exitCode === 0 ? 0 : EXIT.badInput;
    }
    throw error;
  }
  return code;
}
