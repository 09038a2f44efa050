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
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { auditRuns, formatAuditText, type AuditReport } from './audit.js';
import {
  builtinCatalogs,
  catalogJsonSchema,
  compileCatalog,
  parseCatalog,
  pickCatalog,
  type Catalog,
  type CompiledCatalog,
} from './classifier.js';
import { DEMO_SOURCE, demoRuns } from './demo.js';
import { CatalogError } from './errors.js';
import { printable } from './text.js';
import { readTranscript, TranscriptError, type TranscriptRun } from './transcripts.js';
import { registerExportCommand } from './export.js';
import { registerServeCommand } from './visualizer/command.js';

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
 * `--catalog auto`: the shipped catalog that knows the most tool names of the
 * runs, with a note for the report, and a warning when it still knows fewer
 * than half of them (the rest are judged as writes).
 */
function autoCatalog(runs: readonly TranscriptRun[]): { catalog: CompiledCatalog; label: string; warning: string | null } {
  const names = runs.flatMap((run) => run.steps.flatMap((step) => (step.type === 'call' ? [step.name] : [])));
  const choice = pickCatalog(names);
  const label = `auto: ${choice.name}, knows ${choice.known} of ${choice.total} tool names`;
  const warning =
    choice.total > 0 && choice.known * 2 < choice.total
      ? `warning: catalog '${choice.name}' knows only ${choice.known} of the ${choice.total} tool names in the input; the others are judged as writes (name a catalog with --catalog)`
      : null;
  return { catalog: compileCatalog(builtinCatalogs[choice.name]), label, warning };
}

function readFile(path: string): TranscriptRun[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new InputError(`${path}: cannot read the file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  return readTranscript(text, path);
}

interface AuditCommandOptions {
  catalog: string;
  format: 'text' | 'json';
  demo?: boolean;
  summaryOnly?: boolean;
  strictFailedWrites?: boolean;
}

/** Runs the audit and returns the exit code; prints the report to `out`, warnings to `err`. */
function runAudit(files: string[], options: AuditCommandOptions, out: (text: string) => void, err: (text: string) => void): number {
  if (options.demo && files.length > 0) throw new InputError('give either transcript files or --demo, not both');
  if (!options.demo && files.length === 0) throw new InputError('no transcript given: name one or more files, or use --demo');
  if (options.demo && options.catalog !== 'pulse' && options.catalog !== 'auto') {
    throw new InputError(`the demo transcript uses Pulse tool names: --catalog ${options.catalog} does not apply to it`);
  }
  const sources = options.demo ? [DEMO_SOURCE] : files;
  const runs = options.demo ? demoRuns() : files.flatMap((file) => readFile(file));
  let catalog: CompiledCatalog;
  let label = options.catalog;
  if (options.catalog === 'auto') {
    const auto = autoCatalog(runs);
    catalog = auto.catalog;
    label = auto.label;
    if (auto.warning !== null) err(`pulse-safety audit: ${printable(auto.warning)}\n`);
  } else {
    catalog = compileCatalog(readCatalog(options.catalog));
  }
  const report: AuditReport = auditRuns(runs, { catalog, strictFailedWrites: options.strictFailedWrites === true });
  if (options.format === 'json') {
    const body = options.summaryOnly ? { summary: report.summary } : report;
    out(JSON.stringify({ catalog: catalog.name, catalogChoice: label, sources, ...body }, null, 2) + '\n');
  } else {
    out(
      formatAuditText(report, {
        title: `pulse-safety audit of ${sources.join(', ')} (catalog ${label})`,
        summaryOnly: options.summaryOnly === true,
      }),
    );
  }
  if (options.demo) return EXIT.clean;
  const { blockedCalls, refusedAnswers, runsEndingUnverified } = report.summary;
  return blockedCalls + refusedAnswers + runsEndingUnverified > 0 ? EXIT.refused : EXIT.clean;
}

/**
 * Builds the `pulse-safety` program. `out` and `err` receive the output
 * (default: stdout and stderr); `setExitCode` receives the exit code.
 */
export function buildProgram(io: { out?: (text: string) => void; err?: (text: string) => void; setExitCode?: (code: number) => void } = {}): Command {
  const out = io.out ?? ((text: string) => process.stdout.write(text));
  const err = io.err ?? ((text: string) => process.stderr.write(text));
  const setExitCode = io.setExitCode ?? ((code: number) => (process.exitCode = code));

  const program = new Command('pulse-safety')
    .version(packageVersion(), '-V, --version', 'print the version')
    .description('A structural safety gate for LLM agents\' tool calls: audit transcripts against the rules.')
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
    .exitOverride()
    .action((files: string[], options: AuditCommandOptions) => {
      try {
        setExitCode(runAudit(files, options, out, err));
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
    .action(() => out(JSON.stringify(catalogJsonSchema(), null, 2) + '\n'));
  catalog
    .command('check')
    .description('validate a catalog file (or a shipped catalog\'s name) and say what it lists')
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
