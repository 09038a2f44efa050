/**
 * Shell commands classified by parsing them, never by matching text
 * (DESIGN.md §5.5), with their path targets (§5.1, §5.2) and whether they are
 * destructive (§5.6).
 *
 * A command (a shell script string, or an argv array as Codex sends:
 * `["bash", "-lc", "ls"]`) is parsed with tree-sitter-bash, run through
 * web-tree-sitter (WebAssembly, no native build). Why this parser: it is the
 * maintained bash grammar of the tree-sitter project (editors and GitHub use
 * it), it is error-tolerant and marks what it cannot parse with ERROR and
 * MISSING nodes (we treat any of them as "does not parse", so a write), and it
 * yields a full syntax tree of lists, pipelines, subshells, `{ }` groups,
 * `$(...)` and backticks (also inside strings), process substitution,
 * here-documents, control flow, function definitions and quoting. A short
 * command parses in tens of microseconds. A command parser of our own would
 * be the kind of code the project should not own; shell-quote and similar
 * tokenizers do not see the structure (substitutions inside strings,
 * here-documents, compound commands).
 *
 * Every simple command in the tree is judged against a command table (data,
 * `src/catalogs/shell-commands.json`, validated by `shellTableSchema`); the
 * whole command is as bad as its worst part. Decisions, most of them
 * conservative (a `write` where a read could be argued):
 *
 * - A command not in the table, a command run by a path outside the table's
 *   `trustedDirectories` (`./x.sh`), a command whose name is only known when
 *   it runs (`$CMD`, `"$(which x)"`), a call of a function the script defines
 *   (the definition's body is judged too, as if it were called), and an
 *   unknown subcommand are writes. Interpreters (`python`, `node`), build and
 *   test runners (`make`, `npm test`, `pytest`) run project code: writes.
 * - `bash -c`/`sh -c`/`zsh -c` strings and `eval` are parsed again, at most
 *   `MAX_SHELL_NESTING` deep (zsh with the bash grammar: zsh-only syntax
 *   such as glob qualifiers does not parse, so it is a write). Wrappers
 *   (`env`, `sudo`, `timeout`, `nice`, `xargs`, `find -exec`, ...) are looked
 *   through to the command they run. `xargs` appends arguments only known when
 *   it runs: the command it runs stays a read only if no argument can make it
 *   write (`xargs cat`, not `xargs sed`).
 * - A word only known when the command runs (`$X`, `$(...)`, an unquoted glob
 *   or brace expansion at the start of a word) may be an option: for a command
 *   whose options can make it write, that is a write (and destructive when one
 *   of its options is). Dynamic path operands are dropped from the targets.
 * - Output redirection to a file (`>`, `>>`, `>|`, `&>`, `>& file`) is a
 *   write with the file as target; to one of the table's `nullDevices`
 *   (`/dev/null`, ...) or to a descriptor (`2>&1`) it is not. Here-documents
 *   and here-strings are input; an input redirection's file is a read target.
 *   Redirections are not destructive (a `>` that truncates is a plain write).
 * - An assignment (`X=1`, `export X=1`, `local`, `unset`), `cd` and the other
 *   shell-internal commands are reads without targets: they change nothing
 *   outside the shell. An assignment to a variable in the table's `variables`
 *   (`PATH`, `LD_PRELOAD`, `GIT_*`, pagers, ...: what changes which program
 *   runs or what it runs) is a write unless the value is listed as safe
 *   (`PAGER=cat`). That list is a deny list and cannot be complete.
 * - `cd` is followed: a later relative path is resolved against the new
 *   directory when `cd` succeeded (`cd d && rm x`), against both the old and
 *   the new one when it may have failed (`cd d; rm x`), and kept as written
 *   (relative) when the directory cannot be known (`cd "$X"`, `cd -`, a loop
 *   that changes directory, `eval`). `CDPATH` is not modelled.
 * - A command's targets are its path operands, the values of its path and
 *   directory options (`git -C d`), a default path for commands that list
 *   the working directory (`ls`, `find`), and redirection files. The call's
 *   targets are those of its parts of the worst kind: `cat a > b` is a write
 *   of `b`, not of `a`.
 * - `curl` without data, upload, output file or a non-GET method is a read
 *   (a network GET); `-X DELETE` is destructive. `wget` saves a file: write.
 *   `terraform plan` is a read (it can run external data sources of the
 *   configuration). `git fetch` writes (refs). `rm` without `-r`/`-f` is a
 *   write, not destructive (DESIGN.md §5.6 names recursive or forced removal).
 * - Bad input (not a string or an array of strings, longer than
 *   `MAX_SHELL_COMMAND_BYTES`, a NUL character, a lone surrogate, nesting
 *   deeper than `MAX_SHELL_NODE_DEPTH`, a command that does not parse) is a
 *   write without targets. Nothing here throws.
 *
 * Spec: DESIGN.md §5.1, §5.2, §5.5, §5.6.
 */
import { createRequire } from 'node:module';
import { posix } from 'node:path';
import { Language, Parser, Query, type Node as SyntaxNode } from 'web-tree-sitter';
import { z } from 'zod';
import { type Classification, failClosed, normalizeTargets, pathTarget, worstOf } from '../classification.js';
import { foldedTarget, UNKNOWN_PLACE } from '../../../machines/safety.targets.js';
import { CatalogError } from '../../errors/index.js';
import shellCommandsJson from '../../catalogs/shell-commands.json' with { type: 'json' };
import { deepestIssue } from '../../util/zod-issues.js';
import { deepFreeze } from '../../util/deep-freeze.js';

// ---------------------------------------------------------------------------
// The command table: schema
// ---------------------------------------------------------------------------

/** The longest command (UTF-8 bytes) that is parsed; a longer one is a write without parsing. */
export const MAX_SHELL_COMMAND_BYTES = 65_536;

/** The most words an argv array may have. */
export const MAX_SHELL_ARGV_WORDS = 4_096;

/** How deep `bash -c '...'` and `eval` strings are parsed again; deeper is a write. */
export const MAX_SHELL_NESTING = 8;

/** How deep the syntax tree is followed (nested substitutions, groups, control flow); deeper is a write. */
export const MAX_SHELL_NODE_DEPTH = 150;

/** The most statements and words judged for one call (bash -c strings included); more is a write, so the work stays bounded. */
export const MAX_SHELL_WORK = 10_000;

/** How many classifications the memo keeps (least recently used dropped first). */
export const SHELL_MEMO_SIZE = 1_024;

/** Commands longer than this (characters) are not kept in the memo. */
const MEMO_MAX_KEY = 8_192;

const optionName = z.string().regex(/^--?[^\s=-][^\s=]*$/, "must be an option: '-x', '--long' or '-long' (no spaces, no '=')");
const optionList = z.array(optionName);
const dryRunOption = z
  .string()
  .regex(/^--?[^\s=-][^\s=]*(=\S*)?$/, "must be an option, optionally with '=value': '-n', '--dry-run=client'");
const effectSchema = z
  .enum(['read', 'write', 'destructive'])
  .describe("what the option's value does: 'read' (nothing), 'write', 'destructive' (a destructive write)");
const commandName = z.string().regex(/^[^\s/=]+$/, "must be a command name without spaces, '/' or '='");

const scriptSchema = z
  .strictObject({
    language: z
      .enum(['sed', 'awk'])
      .describe("the script language; a script that can write or run programs ('w', 'e', 'system', '>', '|') is a write"),
    options: optionList
      .optional()
      .describe(
        "value options whose value is a script ('-e'); when none of them and no file option is given, the first operand is the script",
      ),
    fileOptions: optionList.optional().describe("value options naming a script file ('-f'): its content is unknown, so a write"),
  })
  .describe('the command runs a script given as an argument (sed, awk), judged by a small checker of that language');

const runSchema = z
  .strictObject({
    mode: z
      .enum(['argv', 'shell', 'eval', 'exec'])
      .optional()
      .describe(
        "how the command to run is found. 'argv' (default): the words after the wrapper's options (sudo, env, timeout, xargs). " +
          "'shell': with the option `shellOption`, the first operand is a shell script, parsed again (bash -c); without it, a write. " +
          "'eval': the operands joined by spaces are a shell script. " +
          "'exec': each option of `execOptions` starts a command that ends at ';' or at '{}' '+' (find -exec).",
      ),
    self: z
      .enum(['read', 'write'])
      .optional()
      .describe("what the wrapper itself does besides running the command (nohup writes nohup.out); default 'read'"),
    skipOperands: z.int().min(0).max(8).optional().describe('operands before the command that are not part of it (timeout DURATION)'),
    assignments: z.boolean().optional().describe('NAME=value operands before the command set its environment (env)'),
    unlessOptions: optionList.optional().describe('with one of these options nothing is run and it is a read (command -v)'),
    appendsArguments: z.boolean().optional().describe('the command gets more arguments only known when it runs (xargs)'),
    defaultCommand: z.array(commandName).min(1).optional().describe('the command run when none is given (xargs runs echo)'),
    replaceOptions: optionList
      .optional()
      .describe("options whose value (default '{}') the command's words contain, replaced by input only known when it runs (xargs -I)"),
    shellOption: optionName.optional().describe("mode 'shell': the option that makes the first operand a script; default '-c'"),
    execOptions: optionList.optional().describe("mode 'exec': the options that start a command"),
  })
  .describe('the command runs another command (a wrapper), which is judged in turn');

/** A command's rule in the shell command table (see `shellTableSchema`). */
export interface ShellCommandRule {
  description?: string;
  read?: boolean;
  destructive?: boolean;
  optionStyle?: 'gnu' | 'single-dash';
  flags?: string[];
  valueOptions?: string[];
  twoValueOptions?: string[];
  strictOptions?: boolean;
  globalOptions?: boolean;
  writeOptions?: string[];
  execOptions?: string[];
  destructiveOptions?: string[];
  dryRunOptions?: string[];
  optionValues?: Record<string, Record<string, 'read' | 'write' | 'destructive'>>;
  pathOptions?: string[];
  cwdOptions?: string[];
  infoOptions?: string[];
  operands?: 'paths' | 'after-double-dash' | 'leading' | 'none';
  skipOperands?: number;
  patternOptions?: string[];
  defaultPath?: string;
  maxOperands?: number;
  listOptions?: string[];
  ignoredOperandPrefixes?: string[];
  writesOperands?: boolean;
  assignsOperands?: boolean;
  destructiveOperandPrefixes?: string[];
  remoteOperands?: boolean;
  script?: z.infer<typeof scriptSchema>;
  run?: z.infer<typeof runSchema>;
  subcommands?: Record<string, ShellCommandRule>;
}

const ruleShape = {
  description: z.string().optional().describe('what the command is, for readers of the table'),
  read: z
    .boolean()
    .optional()
    .describe('the command is read-only when none of its options or operands says otherwise; default false (a write)'),
  destructive: z
    .boolean()
    .optional()
    .describe('running it (as a write) is destructive: it deletes or overwrites what cannot be had back (dd, shred, git clean)'),
  optionStyle: z
    .enum(['gnu', 'single-dash'])
    .optional()
    .describe(
      "'gnu' (default): '-abc' is '-a -b -c', '--long=value', '--long value', unambiguous '--lo' abbreviates '--long'; " +
        "'single-dash': every word starting with '-' is one option, '--x' is '-x', '-x=value' (find, terraform)",
    ),
  flags: optionList.optional().describe('known options without a value (needed only where options are strict)'),
  valueOptions: optionList
    .optional()
    .describe("options that take the next word as value ('-C dir'), also attached ('-Cdir', '--opt=value')"),
  twoValueOptions: optionList.optional().describe("options that take the next two words ('jq --arg name value')"),
  strictOptions: z.boolean().optional().describe('an option not listed anywhere in the rule is a write; always so before a subcommand'),
  globalOptions: z
    .boolean()
    .optional()
    .describe("its options may also follow a subcommand ('kubectl get pods --kubeconfig x'): every subcommand takes them too"),
  writeOptions: optionList.optional().describe("options that make the command a write ('sed -i', 'sort -o'); a dry run overrides them"),
  execOptions: optionList
    .optional()
    .describe("options that make it run another program ('rsync -e', 'tar -I', 'rg --pre'): a write, even in a dry run"),
  destructiveOptions: optionList.optional().describe("options that make it a destructive write ('rm -r', 'git push --force')"),
  dryRunOptions: z
    .array(dryRunOption)
    .optional()
    .describe("options that make it only show what it would do, a read ('git clean -n', 'kubectl apply --dry-run=client')"),
  optionValues: z
    .record(optionName, z.record(z.string(), effectSchema))
    .optional()
    .describe(
      "value options whose value decides: option to { value (case-insensitive): effect }, '*' for any other value " +
        "('curl -X': GET read, DELETE destructive, '*' write); a value not listed and no '*' is a write",
    ),
  pathOptions: optionList.optional().describe("value options whose value is a path target ('sort -o FILE', 'tar -f ARCHIVE')"),
  cwdOptions: optionList
    .optional()
    .describe(
      "value options naming the directory the command works in ('git -C', 'make -C'): a target, and relative operands are resolved against it",
    ),
  infoOptions: optionList.optional().describe("options that, given alone, make it a read ('--version', '--help')"),
  operands: z
    .enum(['paths', 'after-double-dash', 'leading', 'none'])
    .optional()
    .describe(
      "which operands are path targets: 'paths' (default, all), 'after-double-dash' (only after '--'; before it they may be revisions), " +
        "'leading' (those before the first option or '(' '!' ',' ')': find's starting points), 'none'",
    ),
  skipOperands: z.int().min(0).max(8).optional().describe("leading operands that are not paths ('grep PATTERN', 'chmod MODE')"),
  patternOptions: optionList.optional().describe("value options that take the place of the skipped operands ('grep -e PATTERN')"),
  defaultPath: z.string().min(1).optional().describe("the path target when no path operand is given ('ls' lists '.')"),
  maxOperands: z
    .int()
    .min(0)
    .optional()
    .describe("more operands than this make it a write ('git branch NAME' creates a branch; 'uniq IN OUT' writes OUT)"),
  listOptions: optionList.optional().describe("options under which `maxOperands` does not apply ('git branch --list PATTERN')"),
  ignoredOperandPrefixes: z
    .array(z.string().min(1))
    .optional()
    .describe("operands starting with one of these do not count toward `maxOperands` ('date +%s')"),
  writesOperands: z.boolean().optional().describe('its path operands are written (tee): a write unless every one is a null device'),
  assignsOperands: z
    .boolean()
    .optional()
    .describe('its operands name shell variables it sets (read, let): an assignment to a listed variable is a write'),
  destructiveOperandPrefixes: z
    .array(z.string().min(1))
    .optional()
    .describe("an operand starting with one of these is destructive ('git push origin +main', ':branch')"),
  remoteOperands: z.boolean().optional().describe('operands like HOST:PATH or a URL are on another machine, not path targets (rsync, scp)'),
  script: scriptSchema.optional(),
  run: runSchema.optional(),
};

/** The zod schema of one command's rule; recursive through `subcommands`. */
export const shellCommandRuleSchema: z.ZodType<ShellCommandRule> = z
  .strictObject({
    ...ruleShape,
    get subcommands(): z.ZodOptional<z.ZodRecord<z.ZodString, z.ZodType<ShellCommandRule>>> {
      return z
        .record(commandName, shellCommandRuleSchema)
        .optional()
        .describe("subcommand (the first operand) to its rule ('git status'); an operand not listed is a write");
    },
  })
  .describe('how one command (or subcommand) is judged');

/**
 * The JSON schema of a shell command table (DESIGN.md §5.5), as a zod schema:
 *
 * ```
 * { description?, commands: { [name]: rule | "<other name>" }, trustedDirectories, nullDevices, variables }
 * ```
 *
 * A rule says whether the command is read-only and which options, option
 * values and operands make it a write or destructive, which operands are
 * paths, its subcommands (recursively), and whether it runs another command
 * (`run`). A string instead of a rule names another command with the same
 * rule (`"egrep": "grep"`). Validated with `parseShellTable`.
 */
export const shellTableSchema = z
  .strictObject({
    description: z.string().optional().describe('what the table is, for readers'),
    commands: z
      .record(commandName, z.union([commandName, shellCommandRuleSchema]))
      .describe('command name to its rule, or to the name of a command with the same rule; any other command is a write'),
    trustedDirectories: z
      .array(z.string().regex(/^\/\S*$/, 'must be an absolute directory'))
      .describe("a command run by a path in one of these directories ('/usr/bin/ls') is judged by its name; any other path is a write"),
    nullDevices: z.array(z.string().min(1)).describe("redirection targets that write nothing that stays ('/dev/null', '/dev/stderr')"),
    variables: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*\*?$/, "must be a variable name, or a prefix ending in '*'"), z.array(z.string()))
      .describe(
        "variables whose assignment can change which program runs or what it runs ('PATH', 'LD_*', 'GIT_*'): " +
          'an assignment (X=v cmd, env X=v, export, bare) is a write unless the value is listed (PAGER: ["cat"])',
      ),
  })
  .describe('the shell command table: which commands, subcommands and options are read-only, write or destructive');

/** A shell command table (the JSON shape of `src/catalogs/shell-commands.json`); see `shellTableSchema`. */
export type ShellTable = z.infer<typeof shellTableSchema>;

/** Checks of a rule that a schema cannot state: options used by a field must be value options, and so on. */
function ruleProblems(rule: ShellCommandRule, path: (string | number)[]): { path: (string | number)[]; message: string } | null {
  const values = new Set([...(rule.valueOptions ?? []), ...(rule.twoValueOptions ?? [])]);
  const mustTakeValue: [keyof ShellCommandRule, string[]][] = [
    ['pathOptions', rule.pathOptions ?? []],
    ['cwdOptions', rule.cwdOptions ?? []],
    ['optionValues', Object.keys(rule.optionValues ?? {})],
  ];
  if (rule.script !== undefined) {
    mustTakeValue.push(['script', [...(rule.script.options ?? []), ...(rule.script.fileOptions ?? [])]]);
  }
  for (const [field, options] of mustTakeValue) {
    for (const option of options) {
      if (!values.has(option)) {
        return { path: [...path, field, option], message: `'${option}' must also be listed in valueOptions (it takes a value)` };
      }
    }
  }
  if (rule.run !== undefined && rule.subcommands !== undefined) {
    return { path: [...path, 'run'], message: 'a rule cannot both run a command and have subcommands' };
  }
  if (rule.run?.mode === 'exec' && (rule.run.execOptions ?? []).length === 0) {
    return { path: [...path, 'run', 'execOptions'], message: "mode 'exec' needs at least one exec option" };
  }
  for (const [name, sub] of Object.entries(rule.subcommands ?? {})) {
    const problem = ruleProblems(sub, [...path, 'subcommands', name]);
    if (problem !== null) return problem;
  }
  return null;
}

/**
 * Validates a shell command table (any JSON value) and returns it typed
 * (DESIGN.md §5.5).
 *
 * @param source where the table comes from, for the message (a file path).
 * @throws CatalogError naming the first bad entry by its path, e.g.
 *   `shell table: commands.sed.writeOptions.0: must be an option ...`, an
 *   alias to a command that is not a rule, or an option a field uses that is
 *   not a value option.
 */
export function parseShellTable(input: unknown, source?: string): ShellTable {
  const where = source === undefined ? 'shell table' : `shell table ${source}`;
  const result = shellTableSchema.safeParse(input);
  if (!result.success) {
    const issue = deepestIssue(result.error.issues[0]!);
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p)) as (string | number)[];
    throw new CatalogError(`${where}: ${path.join('.') || '(root)'}: ${issue.message}`, path);
  }
  for (const [name, rule] of Object.entries(result.data.commands)) {
    if (typeof rule === 'string') {
      const target = Object.prototype.hasOwnProperty.call(result.data.commands, rule) ? result.data.commands[rule] : undefined;
      if (typeof target !== 'object') {
        throw new CatalogError(`${where}: commands.${name}: '${rule}' must be a command of the table with a rule (not another alias)`, [
          'commands',
          name,
        ]);
      }
      continue;
    }
    const problem = ruleProblems(rule, ['commands', name]);
    if (problem !== null) throw new CatalogError(`${where}: ${problem.path.join('.')}: ${problem.message}`, problem.path);
  }
  return result.data;
}

/**
 * The default shell command table, `src/catalogs/shell-commands.json`,
 * validated on load and deeply frozen (copy it to derive another table).
 */
export const defaultShellTable: ShellTable = deepFreeze(parseShellTable(shellCommandsJson, 'src/catalogs/shell-commands.json'));

// ---------------------------------------------------------------------------
// The command table: compiled form
// ---------------------------------------------------------------------------

type Effect = 'read' | 'write' | 'destructive';

interface CompiledRun {
  mode: 'argv' | 'shell' | 'eval' | 'exec';
  selfWrites: boolean;
  skipOperands: number;
  assignments: boolean;
  unless: Set<string>;
  appendsArguments: boolean;
  replace: Set<string>;
  defaultCommand: string[] | null;
  shellOption: string;
  exec: Set<string>;
}

interface CompiledRule {
  read: boolean;
  destructive: boolean;
  singleDash: boolean;
  /** Every option the rule names, for strictness and abbreviations. */
  known: Set<string>;
  /** Known long options (`--x`), for GNU abbreviations. */
  longs: string[];
  flags: Set<string>;
  value: Set<string>;
  twoValue: Set<string>;
  strict: boolean;
  write: Set<string>;
  exec: Set<string>;
  destructiveOptions: Set<string>;
  dryRun: Set<string>;
  /** The option names of `dryRun` (without values). */
  dryRunNames: Set<string>;
  /** Options that write, run programs, are destructive or have values that decide. */
  risky: Set<string>;
  optionValues: Map<string, Map<string, Effect>>;
  path: Set<string>;
  cwd: Set<string>;
  info: Set<string>;
  operands: 'paths' | 'after-double-dash' | 'leading' | 'none';
  skip: number;
  pattern: Set<string>;
  defaultPath: string | null;
  maxOperands: number | null;
  list: Set<string>;
  ignoredPrefixes: string[];
  writesOperands: boolean;
  assignsOperands: boolean;
  destructivePrefixes: string[];
  remoteOperands: boolean;
  script: { language: 'sed' | 'awk'; options: Set<string>; files: Set<string> } | null;
  run: CompiledRun | null;
  subcommands: Map<string, CompiledRule> | null;
  /** An argument only known when it runs could make it write. */
  sensitive: boolean;
  /** An argument only known when it runs could make it destructive. */
  mayBeDestructive: boolean;
}

interface CompiledTable {
  id: number;
  commands: Map<string, CompiledRule>;
  trusted: Set<string>;
  nullDevices: Set<string>;
  variables: Map<string, Set<string>>;
  variablePrefixes: [string, Set<string>][];
}

/** A subcommand's rule with its parent's options added (`globalOptions`: they may follow the subcommand). */
function withGlobalOptions(rule: ShellCommandRule, parent: ShellCommandRule): ShellCommandRule {
  const both = (key: 'flags' | 'valueOptions' | 'writeOptions' | 'execOptions') => [...(parent[key] ?? []), ...(rule[key] ?? [])];
  return {
    ...rule,
    globalOptions: true,
    flags: both('flags'),
    valueOptions: both('valueOptions'),
    writeOptions: both('writeOptions'),
    execOptions: both('execOptions'),
  };
}

function compileRule(rule: ShellCommandRule): CompiledRule {
  const set = (list: string[] | undefined) => new Set(list ?? []);
  const run = rule.run;
  const compiledRun: CompiledRun | null =
    run === undefined
      ? null
      : {
          mode: run.mode ?? 'argv',
          selfWrites: run.self === 'write',
          skipOperands: run.skipOperands ?? 0,
          assignments: run.assignments === true,
          unless: set(run.unlessOptions),
          appendsArguments: run.appendsArguments === true,
          replace: set(run.replaceOptions),
          defaultCommand: run.defaultCommand ?? null,
          shellOption: run.shellOption ?? '-c',
          exec: set(run.execOptions),
        };
  const optionValues = new Map<string, Map<string, Effect>>();
  for (const [option, values] of Object.entries(rule.optionValues ?? {})) {
    optionValues.set(
      option,
      new Map(Object.entries(values).map(([value, effect]) => [value === '*' ? '*' : value.trim().toUpperCase(), effect])),
    );
  }
  const script =
    rule.script === undefined
      ? null
      : { language: rule.script.language, options: set(rule.script.options), files: set(rule.script.fileOptions) };
  const dryRunNames = (rule.dryRunOptions ?? []).map((o) => o.split('=')[0]!);
  const known = new Set<string>([
    ...(rule.flags ?? []),
    ...(rule.valueOptions ?? []),
    ...(rule.twoValueOptions ?? []),
    ...(rule.writeOptions ?? []),
    ...(rule.execOptions ?? []),
    ...(rule.destructiveOptions ?? []),
    ...dryRunNames,
    ...Object.keys(rule.optionValues ?? {}),
    ...(rule.pathOptions ?? []),
    ...(rule.cwdOptions ?? []),
    ...(rule.infoOptions ?? []),
    ...(rule.patternOptions ?? []),
    ...(rule.listOptions ?? []),
    ...(run?.unlessOptions ?? []),
    ...(run?.execOptions ?? []),
    ...(run?.replaceOptions ?? []),
    ...(run?.shellOption !== undefined ? [run.shellOption] : run?.mode === 'shell' ? ['-c'] : []),
  ]);
  const subcommands =
    rule.subcommands === undefined
      ? null
      : new Map(
          Object.entries(rule.subcommands).map(([name, sub]) => [
            name,
            compileRule(rule.globalOptions === true ? withGlobalOptions(sub, rule) : sub),
          ]),
        );
  const compiled: CompiledRule = {
    read: rule.read === true,
    destructive: rule.destructive === true,
    singleDash: rule.optionStyle === 'single-dash',
    known,
    longs: [...known].filter((o) => o.startsWith('--')),
    flags: set(rule.flags),
    value: set(rule.valueOptions),
    twoValue: set(rule.twoValueOptions),
    strict: rule.strictOptions === true || subcommands !== null,
    write: set(rule.writeOptions),
    exec: set(rule.execOptions),
    destructiveOptions: set(rule.destructiveOptions),
    dryRun: set(rule.dryRunOptions),
    dryRunNames: new Set(dryRunNames),
    risky: new Set([
      ...(rule.writeOptions ?? []),
      ...(rule.execOptions ?? []),
      ...(rule.destructiveOptions ?? []),
      ...Object.keys(rule.optionValues ?? {}),
    ]),
    optionValues,
    path: set(rule.pathOptions),
    cwd: set(rule.cwdOptions),
    info: set(rule.infoOptions),
    operands: rule.operands ?? 'paths',
    skip: rule.skipOperands ?? 0,
    pattern: set(rule.patternOptions),
    defaultPath: rule.defaultPath ?? null,
    maxOperands: rule.maxOperands ?? null,
    list: set(rule.listOptions),
    ignoredPrefixes: rule.ignoredOperandPrefixes ?? [],
    writesOperands: rule.writesOperands === true,
    assignsOperands: rule.assignsOperands === true,
    destructivePrefixes: rule.destructiveOperandPrefixes ?? [],
    remoteOperands: rule.remoteOperands === true,
    script,
    run: compiledRun,
    subcommands,
    sensitive: false,
    mayBeDestructive: false,
  };
  compiled.mayBeDestructive =
    compiled.destructiveOptions.size > 0 ||
    compiled.destructivePrefixes.length > 0 ||
    [...optionValues.values()].some((values) => [...values.values()].includes('destructive'));
  compiled.sensitive =
    compiled.mayBeDestructive ||
    compiled.write.size > 0 ||
    compiled.exec.size > 0 ||
    optionValues.size > 0 ||
    compiled.maxOperands !== null ||
    compiled.writesOperands ||
    compiled.assignsOperands ||
    script !== null ||
    compiledRun !== null ||
    subcommands !== null ||
    compiled.strict;
  return compiled;
}

let nextTableId = 1;
const compiledTables = new WeakMap<object, CompiledTable>();

/** The compiled form of a table, validated first unless it is the default table; cached per table object. */
function compileTable(table: ShellTable): CompiledTable {
  const cached = compiledTables.get(table);
  if (cached !== undefined) return cached;
  const valid = table === defaultShellTable ? table : parseShellTable(table);
  const rules = new Map<string, CompiledRule>();
  for (const [name, rule] of Object.entries(valid.commands)) {
    if (typeof rule !== 'string') rules.set(name, compileRule(rule));
  }
  for (const [name, rule] of Object.entries(valid.commands)) {
    if (typeof rule === 'string') rules.set(name, rules.get(rule)!);
  }
  const variables = new Map<string, Set<string>>();
  const variablePrefixes: [string, Set<string>][] = [];
  for (const [name, values] of Object.entries(valid.variables)) {
    if (name.endsWith('*')) variablePrefixes.push([name.slice(0, -1), new Set(values)]);
    else variables.set(name, new Set(values));
  }
  const compiled: CompiledTable = {
    id: nextTableId++,
    commands: rules,
    trusted: new Set(valid.trustedDirectories.map((d) => posix.normalize(d).replace(/(.)\/$/, '$1'))),
    nullDevices: new Set(valid.nullDevices),
    variables,
    variablePrefixes,
  };
  compiledTables.set(table, compiled);
  return compiled;
}

// ---------------------------------------------------------------------------
// The parser
// ---------------------------------------------------------------------------

await Parser.init();
const bashLanguage = await Language.load(createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm'));
const parser = new Parser();
parser.setLanguage(bashLanguage);
const functionNamesQuery = new Query(bashLanguage, '(function_definition name: (word) @name)');
compileTable(defaultShellTable);

/** Progress callbacks allowed per parse before it is cancelled (a bound on work; a 64 KiB command needs a few thousand). */
const MAX_PARSE_PROGRESS_CALLS = 50_000;

// ---------------------------------------------------------------------------
// Judging
// ---------------------------------------------------------------------------

/** Thrown inside the walk when the tree is nested too deeply; turned into a write. */
class TooDeep extends Error {}

/** Thrown inside the walk when a call holds more than `MAX_SHELL_WORK` statements and words; turned into a write. */
class TooBig extends Error {}

/**
 * The directories a statement may run in: each a path (absolute, `~`-based,
 * or relative to the call's unknown working directory when none was given,
 * `''`), or null when it cannot be known.
 */
type Cwds = readonly (string | null)[];

/** Where the shell may be after a statement that succeeded, and after one that failed. */
interface Outcome {
  ok: Cwds;
  fail: Cwds;
}

/** A word of a simple command, as far as it is known before the command runs. */
interface Word {
  /** The word's value; null when it depends on an expansion or substitution. */
  text: string | null;
  /** Its value may start with '-' and be taken as an option (a dynamic start, an unquoted glob or brace). */
  optionLike: boolean;
  /** An unquoted glob or brace expansion: `text` is a pattern, kept as written. */
  pattern: boolean;
}

interface Ctx {
  table: CompiledTable;
  /** Names of the functions the script defines (anywhere), so a call of one is not taken for a command. */
  functions: Set<string>;
  parts: Classification[];
  /** How many `bash -c` / `eval` levels deep the script being judged is. */
  nesting: number;
  /** Statements and words judged so far in this call (shared by nested scripts). */
  work: { done: number };
  /** The source of the tree being walked (node text is sliced from it: web-tree-sitter's own `text` copies the rest of the source each time). */
  source: string;
}

/**
 * A node's children with their field names, in one pass (`child(i)` and
 * `fieldNameForChild(i)` each walk the children from the first).
 */
function fieldedChildren(node: SyntaxNode): { child: SyntaxNode; field: string | null }[] {
  const out: { child: SyntaxNode; field: string | null }[] = [];
  if (node.childCount <= 32) {
    // few children: indexing is cheaper than a cursor
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child != null) out.push({ child, field: node.fieldNameForChild(i) });
    }
    return out;
  }
  const cursor = node.walk();
  try {
    if (cursor.gotoFirstChild()) {
      do out.push({ child: cursor.currentNode, field: cursor.currentFieldName });
      while (cursor.gotoNextSibling());
    }
  } finally {
    cursor.delete();
  }
  return out;
}

/** A node's text. */
function textOf(node: SyntaxNode, ctx: Ctx): string {
  return ctx.source.slice(node.startIndex, node.endIndex);
}

const STATEMENT_TYPES = new Set([
  'c_style_for_statement',
  'case_statement',
  'command',
  'compound_statement',
  'declaration_command',
  'for_statement',
  'function_definition',
  'if_statement',
  'list',
  'negated_command',
  'pipeline',
  'redirected_statement',
  'subshell',
  'test_command',
  'unset_command',
  'variable_assignment',
  'variable_assignments',
  'while_statement',
]);

/** Commands that can change the directory of the shell they run in, other than cd, pushd and popd. */
const MAY_CHANGE_CWD = new Set(['eval', 'source', '.', 'command', 'builtin', 'exec']);

const same = (cwds: Cwds): Outcome => ({ ok: cwds, fail: cwds });

/** Distinct possibilities, at most four; more collapse to "unknown". */
function union(...lists: Cwds[]): Cwds {
  const all = [...new Set(lists.flat())];
  return all.length > 4 ? [null] : all;
}

/** A directory joined to a path; null when it cannot be known. */
function joinDir(cwd: string | null, dir: string): string | null {
  if (dir.startsWith('/')) return posix.normalize(dir);
  // Folded as a target is: `~/..` stays above `~` (posix.normalize would make `~/../etc` the relative `etc`).
  if (dir === '~' || dir.startsWith('~/')) return foldedTarget(dir);
  if (dir.startsWith('~')) return null; // ~user: another user's home
  if (cwd === null) return null;
  const joined = cwd === '' ? posix.normalize(dir) : posix.join(cwd, dir);
  if (cwd.startsWith('~') && !joined.startsWith('~')) return null;
  return joined;
}

/** A path operand's targets, one per possible directory. */
function resolveTargets(path: string, cwds: Cwds): string[] {
  if (path === '' || path === '-') return [];
  const out: string[] = [];
  for (const cwd of cwds) {
    // A relative path after a `cd` to a directory not known is in a place not known (never established or touched).
    const relative = !path.startsWith('/') && !path.startsWith('~');
    const joined = cwd === null ? (relative ? `${UNKNOWN_PLACE}${path}` : path) : (joinDir(cwd, path) ?? path);
    const target = pathTarget(joined);
    if (target !== null) out.push(target);
  }
  return out;
}

function readPart(targets: string[], reason: string): Classification {
  return { kind: 'read', targets, destructive: false, reason: `shell: ${reason}` };
}

/** Parts whose reason is a poor summary of a call (an assignment, a cd, a test): another part's reason is preferred. */
const minorParts = new WeakSet<Classification>();

/** A read part of a shell-internal step (assignment, cd, test, arithmetic). */
function minorReadPart(targets: string[], reason: string): Classification {
  const part = readPart(targets, reason);
  minorParts.add(part);
  return part;
}

function writePart(targets: string[], destructive: boolean, reason: string): Classification {
  return { kind: 'write', targets, destructive, reason: `shell: ${reason}` };
}

/** A word's text without quoting, for messages. */
function show(word: Word | undefined): string {
  return word?.text ?? '(expansion)';
}

// --- words -----------------------------------------------------------------

/** An unquoted word's value: a backslash quotes the next character; a backslash-newline is removed. */
function unescapeUnquoted(raw: string): string {
  return raw.includes('\\') ? raw.replace(/\\(\n|[\s\S])/g, (_m, c: string) => (c === '\n' ? '' : c)) : raw;
}

/** Double-quoted text's value: a backslash quotes only `$`, backtick, `"`, `\` and newline. */
function unescapeDouble(raw: string): string {
  return raw.includes('\\') ? raw.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c)) : raw;
}

/** An unquoted word that the shell expands: a glob (`*`, `?`, `[...]`) or a brace expansion (`{a,b}`, `{1..3}`). */
function isPattern(raw: string): boolean {
  let escaped = false;
  let brace = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i];
    if (escaped) {
      escaped = false;
      continue;
    }
    if (c === '\\') escaped = true;
    else if (c === '*' || c === '?') return true;
    else if (c === '[' && raw.indexOf(']', i + 1) > i) return true;
    else if (c === '{') brace = true;
    else if (brace && (c === ',' || (c === '.' && raw[i + 1] === '.'))) return true;
  }
  return false;
}

const STATIC: Word = { text: '', optionLike: false, pattern: false };
const DYNAMIC: Word = { text: null, optionLike: true, pattern: false };

function staticWord(text: string): Word {
  return { ...STATIC, text };
}

/**
 * `$HOME` or `${HOME}` at the start of a word, in a script that never sets
 * HOME: the home directory, `~` (so `rm -rf "$HOME/.ssh"` names `~/.ssh`
 * rather than nothing). Null otherwise.
 */
function homeOf(node: SyntaxNode, ctx: Ctx): Word | null {
  if (node.type !== 'simple_expansion' && node.type !== 'expansion') return null;
  const text = textOf(node, ctx);
  if (text !== '$HOME' && text !== '${HOME}') return null;
  return SETS_HOME.test(ctx.source) ? null : staticWord('~');
}

/** A script that may set HOME: an assignment, or a builtin that takes the name. */
const SETS_HOME =
  /\bHOME\s*\+?=|\b(read|declare|typeset|export|local|readonly|printf|mapfile|readarray|unset|getopts|let|eval)\b[^\n;&|]*\bHOME\b/;

/** A word's value as far as it is known; every substitution inside it is judged. `atStart`: the node starts its word. */
function wordOf(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number, atStart = true): Word {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (++ctx.work.done > MAX_SHELL_WORK) throw new TooBig();
  switch (node.type) {
    case 'word': {
      const raw = textOf(node, ctx);
      const text = unescapeUnquoted(raw);
      const pattern = isPattern(raw);
      return { text, pattern, optionLike: pattern && /^[*?[{]/.test(raw) };
    }
    case 'raw_string':
      return staticWord(textOf(node, ctx).slice(1, -1));
    case 'string':
    case 'translated_string': {
      let text: string | null = '';
      let first: Word | null = null;
      for (const child of node.namedChildren) {
        if (child === null) continue;
        let part: Word;
        const home = first === null && atStart ? homeOf(child, ctx) : null;
        if (home !== null) part = home;
        else if (child.type === 'string_content') part = staticWord(unescapeDouble(textOf(child, ctx)));
        else if (child.type === 'string') part = wordOf(child, cwds, ctx, depth + 1);
        else {
          walk(child, cwds, ctx, depth + 1);
          part = DYNAMIC;
        }
        first ??= part;
        text = text === null || part.text === null ? null : text + part.text;
      }
      if (text !== null) return staticWord(text);
      const prefix = first?.text ?? '';
      return { text: null, pattern: false, optionLike: first === null ? false : prefix === '' ? first.optionLike : prefix.startsWith('-') };
    }
    case 'concatenation': {
      let text: string | null = '';
      let prefix = '';
      let firstDynamic: Word | null = null;
      let pattern = false;
      let unquoted = false;
      let index = 0;
      for (const child of node.namedChildren) {
        if (child === null) continue;
        const part = wordOf(child, cwds, ctx, depth + 1, index++ === 0);
        if (part.pattern) pattern = true;
        if (child.type === 'word') unquoted = true;
        if (firstDynamic === null) {
          if (part.text === null) firstDynamic = part;
          else prefix += part.text;
        }
        text = text === null || part.text === null ? null : text + part.text;
      }
      // `{a,b}` is split by the grammar into `{`, `a,b`, `}`: look at the whole word (quotes included: over-approximates).
      const raw = textOf(node, ctx);
      if (unquoted && isPattern(raw)) pattern = true;
      const optionLike =
        prefix.startsWith('-') || (prefix === '' && firstDynamic !== null && firstDynamic.optionLike) || (pattern && /^[*?[{]/.test(raw));
      return { text, pattern, optionLike };
    }
    case 'number':
      if (node.namedChildCount === 0) return staticWord(textOf(node, ctx));
      walk(node, cwds, ctx, depth + 1);
      return DYNAMIC;
    case 'brace_expression':
    case 'extglob_pattern': {
      const raw = textOf(node, ctx);
      return { text: raw, pattern: true, optionLike: /^[*?[{]/.test(raw) };
    }
    case 'process_substitution':
      walk(node, cwds, ctx, depth + 1);
      return { text: null, pattern: false, optionLike: false };
    default:
      // $X, ${X...}, $(...), `...`, $((...)), $'...', arrays: only known when it runs ($HOME starting a word: `homeOf`).
      walk(node, cwds, ctx, depth + 1);
      return (atStart ? homeOf(node, ctx) : null) ?? DYNAMIC;
  }
}

/** Judges every command inside an expression (substitutions, nested statements). */
function walk(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (node.type === 'command_substitution' || node.type === 'process_substitution') {
    judgeSequence(node, cwds, ctx, depth + 1); // a subshell: its cd does not leak
    return;
  }
  if (STATEMENT_TYPES.has(node.type)) {
    judgeStatement(node, cwds, ctx, depth + 1);
    return;
  }
  for (const child of node.namedChildren) if (child !== null) walk(child, cwds, ctx, depth + 1);
}

// --- assignments -----------------------------------------------------------

/** The values an assignment to `name` may take without making a write; undefined when the variable is not listed. */
function riskyVariable(name: string, table: CompiledTable): Set<string> | undefined {
  const exact = table.variables.get(name);
  if (exact !== undefined) return exact;
  for (const [prefix, values] of table.variablePrefixes) if (name.startsWith(prefix)) return values;
  return undefined;
}

/** A part for an assignment of `value` (null: unknown) to `name`. */
function assignmentPart(name: string, value: string | null, ctx: Ctx): Classification {
  const allowed = riskyVariable(name, ctx.table);
  if (allowed !== undefined && (value === null || !allowed.has(value))) {
    return writePart([], false, `assigning ${name} can change what later commands run`);
  }
  return minorReadPart([], `assigning ${name} changes only the shell`);
}

function judgeAssignment(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): void {
  const nameNode = node.childForFieldName('name');
  const valueNode = node.childForFieldName('value');
  const base = nameNode?.type === 'subscript' ? nameNode.childForFieldName('name') : nameNode;
  const name = base === null ? '' : textOf(base, ctx);
  if (nameNode?.type === 'subscript') walk(nameNode, cwds, ctx, depth + 1);
  const value = valueNode === null ? staticWord('') : wordOf(valueNode, cwds, ctx, depth + 1);
  const appends = node.children.some((c) => c?.type === '+=');
  ctx.parts.push(assignmentPart(name, appends && value.text !== null ? `+${value.text}` : value.text, ctx));
}

// --- statements ------------------------------------------------------------

/** Judges a node's statements in order, following `cd` (`{ }`, a program, a subshell's body). */
function judgeSequence(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): Outcome {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  let current = cwds;
  let last: Outcome = same(cwds);
  const children = node.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i];
    if (child == null || !child.isNamed || child.type === 'comment') continue;
    if (REDIRECT_TYPES.has(child.type)) {
      judgeRedirect(child, current, ctx, depth + 1); // $(< file), $(> file)
      continue;
    }
    if (!STATEMENT_TYPES.has(child.type)) {
      walk(child, current, ctx, depth + 1); // (( x )) arithmetic, for (( ;; )) parts
      continue;
    }
    const outcome = judgeStatement(child, current, ctx, depth + 1);
    if (children[i + 1]?.type === '&') {
      last = same(current); // in the background: a subshell
      continue;
    }
    current = union(outcome.ok, outcome.fail);
    last = outcome;
  }
  return last;
}

/** Judges an if or case: each part may or may not run, so the directories after it are all those seen. */
function judgeBranches(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): Cwds {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  let seen = cwds;
  for (const child of node.namedChildren) {
    if (child === null || child.type === 'comment') continue;
    if (STATEMENT_TYPES.has(child.type)) {
      const outcome = judgeStatement(child, seen, ctx, depth + 1);
      seen = union(seen, outcome.ok, outcome.fail);
    } else if (['elif_clause', 'else_clause', 'case_item', 'do_group'].includes(child.type)) {
      seen = judgeBranches(child, seen, ctx, depth + 1);
    } else if (child.type === 'variable_name' && node.type === 'for_statement') {
      ctx.parts.push(assignmentPart(textOf(child, ctx), null, ctx));
    } else {
      walk(child, seen, ctx, depth + 1);
    }
  }
  return seen;
}

/** Whether a subtree holds a command that may change the shell's directory. */
function changesDirectory(node: SyntaxNode, ctx: Ctx): boolean {
  const stack: SyntaxNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.type === 'command_name') {
      const name = textOf(current, ctx);
      if (['cd', 'pushd', 'popd'].includes(name) || MAY_CHANGE_CWD.has(name) || ctx.functions.has(name) || !/^[\w./-]+$/.test(name)) {
        return true;
      }
      continue;
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
  }
  return false;
}

function judgeStatement(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): Outcome {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (++ctx.work.done > MAX_SHELL_WORK) throw new TooBig();
  switch (node.type) {
    case 'command':
      return judgeCommandNode(node, [], cwds, ctx, depth + 1);
    case 'redirected_statement':
      return judgeRedirected(node, cwds, ctx, depth + 1);
    case 'list':
      return judgeList(node, cwds, ctx, depth + 1);
    case 'pipeline':
      for (const child of node.namedChildren) {
        if (child !== null && child.type !== 'comment') judgeStatement(child, cwds, ctx, depth + 1);
      }
      return same(cwds);
    case 'subshell':
      judgeSequence(node, cwds, ctx, depth + 1);
      return same(cwds);
    case 'compound_statement':
      if (node.children[0]?.type === '((') ctx.parts.push(minorReadPart([], 'arithmetic changes only the shell'));
      return judgeSequence(node, cwds, ctx, depth + 1);
    case 'negated_command': {
      const outcome = judgeSequence(node, cwds, ctx, depth + 1);
      return { ok: outcome.fail, fail: outcome.ok };
    }
    case 'if_statement':
    case 'case_statement':
      return same(judgeBranches(node, cwds, ctx, depth + 1));
    case 'while_statement':
    case 'for_statement':
    case 'c_style_for_statement': {
      // A body that changes directory runs in a different one each time round: not known.
      const moving = changesDirectory(node, ctx);
      judgeBranches(node, moving ? [null] : cwds, ctx, depth + 1);
      return same(moving ? [null] : cwds);
    }
    case 'function_definition': {
      // Judged as if called; a call of it is a write anyway (the function is not a known command).
      for (const child of node.namedChildren) {
        if (child === null || child === node.childForFieldName('name')) continue;
        if (child.type === 'file_redirect' || child.type === 'heredoc_redirect' || child.type === 'herestring_redirect') {
          judgeRedirect(child, cwds, ctx, depth + 1);
        } else if (STATEMENT_TYPES.has(child.type)) judgeStatement(child, cwds, ctx, depth + 1);
        else walk(child, cwds, ctx, depth + 1);
      }
      return same(cwds);
    }
    case 'variable_assignment':
      judgeAssignment(node, cwds, ctx, depth + 1);
      return same(cwds);
    case 'variable_assignments':
      for (const child of node.namedChildren) {
        if (child?.type === 'variable_assignment') judgeAssignment(child, cwds, ctx, depth + 1);
        else if (child !== null) walk(child, cwds, ctx, depth + 1);
      }
      return same(cwds);
    case 'declaration_command': {
      // export, declare, local, readonly, typeset
      let any = false;
      for (const child of node.namedChildren) {
        if (child === null) continue;
        if (child.type === 'variable_assignment') {
          judgeAssignment(child, cwds, ctx, depth + 1);
          any = true;
        } else walk(child, cwds, ctx, depth + 1);
      }
      if (!any) ctx.parts.push(minorReadPart([], `'${node.children[0]?.type ?? 'declare'}' changes only the shell`));
      return same(cwds);
    }
    case 'unset_command':
      for (const child of node.namedChildren) if (child !== null) walk(child, cwds, ctx, depth + 1);
      ctx.parts.push(minorReadPart([], "'unset' changes only the shell"));
      return same(cwds);
    case 'test_command':
      for (const child of node.namedChildren) if (child !== null) walk(child, cwds, ctx, depth + 1);
      ctx.parts.push(minorReadPart([], 'a test reads'));
      return same(cwds);
    default:
      ctx.parts.push(writePart([], false, `'${node.type}' is not a construct this classifier knows`));
      return same([null]);
  }
}

/** `a && b || c`: b runs when a succeeded, c when the left side failed. Left-nested lists are followed without recursion. */
function judgeList(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): Outcome {
  const reversed: SyntaxNode[] = [];
  let head: SyntaxNode = node;
  while (head.type === 'list') {
    const children = head.children.filter((c): c is SyntaxNode => c !== null && c.type !== 'comment');
    if (children.length === 0) break;
    for (let i = children.length - 1; i >= 1; i--) reversed.push(children[i]!);
    head = children[0]!;
  }
  const chain = reversed.reverse();
  let current = judgeStatement(head, cwds, ctx, depth + 1);
  for (let i = 0; i < chain.length; i++) {
    const item = chain[i]!;
    if (item.isNamed) {
      // a statement without an operator before it: run after the previous one
      const outcome = judgeStatement(item, union(current.ok, current.fail), ctx, depth + 1);
      current = outcome;
      continue;
    }
    const next = chain[i + 1];
    if (next === undefined || !next.isNamed) continue;
    i++;
    if (item.type === '&&') {
      const outcome = judgeStatement(next, current.ok, ctx, depth + 1);
      current = { ok: outcome.ok, fail: union(current.fail, outcome.fail) };
    } else if (item.type === '||') {
      const outcome = judgeStatement(next, current.fail, ctx, depth + 1);
      current = { ok: union(current.ok, outcome.ok), fail: outcome.fail };
    } else {
      current = judgeStatement(next, union(current.ok, current.fail), ctx, depth + 1);
    }
  }
  return current;
}

const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

/** A statement with redirections; words tree-sitter hangs on a redirection (`> f x`, `<<EOF x`) are the command's arguments. */
function judgeRedirected(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number): Outcome {
  const body = node.childForFieldName('body');
  const extra: SyntaxNode[] = [];
  const trailing: SyntaxNode[] = [];
  for (const child of node.namedChildren) {
    if (child === null || child === body) continue;
    if (REDIRECT_TYPES.has(child.type)) {
      judgeRedirect(child, cwds, ctx, depth + 1, extra, trailing);
    } else if (STATEMENT_TYPES.has(child.type)) trailing.push(child);
    else walk(child, cwds, ctx, depth + 1);
  }
  let outcome: Outcome;
  if (body === null) {
    if (extra.length > 0) ctx.parts.push(writePart([], false, 'a redirection without a command'));
    ctx.parts.push(minorReadPart([], 'a redirection alone'));
    outcome = same(cwds);
  } else if (body.type === 'command') {
    outcome = judgeCommandNode(body, extra, cwds, ctx, depth + 1);
  } else {
    if (extra.length > 0) ctx.parts.push(writePart([], false, 'words after a redirection of a compound command'));
    outcome = judgeStatement(body, cwds, ctx, depth + 1);
  }
  for (const statement of trailing) {
    const after = judgeStatement(statement, union(outcome.ok, outcome.fail), ctx, depth + 1);
    outcome = same(union(outcome.ok, outcome.fail, after.ok, after.fail));
  }
  return outcome;
}

/**
 * Judges one redirection: `>`-like to a file is a write of it, `<` a read of
 * it; here-documents and here-strings are input (their substitutions are
 * judged). Words tree-sitter attaches to the redirection go to `extra`, and
 * statements it attaches (`cat <<EOF | sh`) to `trailing`.
 */
function judgeRedirect(node: SyntaxNode, cwds: Cwds, ctx: Ctx, depth: number, extra: SyntaxNode[] = [], trailing: SyntaxNode[] = []): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (node.type === 'heredoc_redirect') {
    for (const { child, field } of fieldedChildren(node)) {
      if (!child.isNamed) continue;
      if (field === 'argument') extra.push(child);
      else if (REDIRECT_TYPES.has(child.type)) judgeRedirect(child, cwds, ctx, depth + 1, extra, trailing);
      else if (STATEMENT_TYPES.has(child.type)) trailing.push(child);
      else if (child.type !== 'heredoc_start' && child.type !== 'heredoc_end') walk(child, cwds, ctx, depth + 1);
    }
    return;
  }
  if (node.type === 'herestring_redirect') {
    walk(node, cwds, ctx, depth + 1);
    return;
  }
  let operator = '';
  const destinations: SyntaxNode[] = [];
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) operator ||= child.type;
    else if (field === 'destination') destinations.push(child);
  }
  extra.push(...destinations.slice(1));
  const dest = destinations[0];
  const word = dest === undefined ? null : wordOf(dest, cwds, ctx, depth + 1);
  switch (operator) {
    case '<':
      ctx.parts.push(minorReadPart(word?.text ? resolveTargets(word.text, cwds) : [], 'an input redirection reads'));
      return;
    case '<&':
    case '>&-':
    case '<&-':
      return;
    case '>&':
      if (word === null || (word.text !== null && /^(\d+|-)$/.test(word.text))) return;
    // fall through: `>& file` writes the file
    case '>':
    case '>>':
    case '>|':
    case '&>':
    case '&>>':
      if (word?.text != null && ctx.table.nullDevices.has(word.text)) return;
      ctx.parts.push(
        writePart(
          word?.text != null && !word.pattern ? resolveTargets(word.text, cwds) : [],
          false,
          `output redirection to '${show(word ?? undefined)}'`,
        ),
      );
      return;
    default:
      ctx.parts.push(writePart([], false, `the redirection '${operator}' is not one this classifier knows`));
  }
}

/** A simple command node: prefix assignments, name, arguments (plus `extra`), redirections. */
function judgeCommandNode(node: SyntaxNode, extra: SyntaxNode[], cwds: Cwds, ctx: Ctx, depth: number): Outcome {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  let nameNode: SyntaxNode | null = null;
  const args: SyntaxNode[] = [];
  const assignments: SyntaxNode[] = [];
  const trailing: SyntaxNode[] = [];
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) continue;
    if (field === 'name') nameNode = child;
    else if (field === 'argument') args.push(child);
    else if (child.type === 'variable_assignment') assignments.push(child);
    else if (REDIRECT_TYPES.has(child.type)) judgeRedirect(child, cwds, ctx, depth + 1, args, trailing);
    else if (STATEMENT_TYPES.has(child.type)) judgeStatement(child, cwds, ctx, depth + 1);
    else walk(child, cwds, ctx, depth + 1);
  }
  args.push(...extra);
  for (const statement of trailing) judgeStatement(statement, cwds, ctx, depth + 1); // cwd: conservatively, the same
  if (nameNode === null) {
    for (const assignment of assignments) judgeAssignment(assignment, cwds, ctx, depth + 1);
    if (args.length > 0) ctx.parts.push(writePart([], false, 'arguments without a command'));
    return same(cwds);
  }
  const nameValue = nameNode.firstNamedChild ?? nameNode;
  const name = wordOf(nameValue, cwds, ctx, depth + 1);
  const words = [name, ...args.map((arg) => wordOf(arg, cwds, ctx, depth + 1))];
  let outcome: Outcome;
  if (name.text !== null && !name.pattern && !ctx.functions.has(name.text) && ['cd', 'pushd', 'popd'].includes(name.text)) {
    outcome = changeDirectory(name.text, words.slice(1), cwds, ctx);
  } else {
    judgeArgv(words, cwds, ctx, depth + 1, false);
    const changes = name.text === null || name.pattern || MAY_CHANGE_CWD.has(name.text) || ctx.functions.has(name.text);
    outcome = changes ? { ok: [null], fail: cwds } : same(cwds);
  }
  for (const assignment of assignments) judgeAssignment(assignment, cwds, ctx, depth + 1); // X=1 cmd: for cmd only
  return outcome;
}

/**
 * A brace expansion (`{a,b}`) one of whose alternatives climbs (`..`), or
 * starts at the root or a home (`/`, `~`): the words it makes are not all
 * under the directory written before it.
 */
const ESCAPING_BRACES = /\{([^{}]*,)?\s*(\.\.|\/|~)[^{}]*\}|\{[^{}]*,[^{}]*(\.\.)[^{}]*\}/;

/** `cd`, `pushd`, `popd`: a read without targets that moves the shell when it succeeds. */
function changeDirectory(name: string, args: Word[], cwds: Cwds, ctx: Ctx): Outcome {
  ctx.parts.push(minorReadPart([], `'${name}' changes only the shell`));
  let operands = args.filter((w) => !(w.text !== null && /^-[LPe@]+$/.test(w.text)));
  if (operands[0]?.text === '--') operands = operands.slice(1);
  const unknown: Outcome = { ok: [null], fail: cwds };
  if (name === 'popd' || operands.length > 1) return unknown;
  const dir = operands[0];
  if (dir === undefined) return name === 'pushd' ? unknown : { ok: ['~'], fail: cwds };
  if (dir.text === null || dir.pattern || dir.text === '-' || dir.text.startsWith('+') || dir.text.startsWith('-')) return unknown;
  const text = dir.text;
  return { ok: union(cwds.map((cwd) => joinDir(cwd, text))), fail: cwds };
}

// --- simple commands against the table -------------------------------------

interface ParsedOption {
  /** The option as written (without a value), e.g. `--dry`. */
  given: string;
  /** The option it is: the one it abbreviates when unambiguous, else as written. */
  name: string;
  /** Every option it may be (more than one for an ambiguous abbreviation). */
  names: string[];
  value: Word | undefined;
  /** For a short option without a value: the rest of its word (`-iXX`: `XX`), which some programs take as an optional value. */
  attached?: string;
}

interface ParsedArgs {
  options: ParsedOption[];
  operands: Word[];
  /** Index in `operands` where the operands after `--` start. */
  afterDoubleDash: number;
  /** Operands before the first option or expression word (find's starting points). */
  leading: number;
  /** With a stop at the first operand: that operand and every word after it. */
  rest: Word[];
  /** Options not named anywhere in the rule. */
  unknown: string[];
  /** A word only known when it runs may be an option. */
  uncertain: boolean;
  /** Commands started by exec options (find -exec ... ;). */
  execs: Word[][];
}

/** The options a long option `--name` may be: itself when known, else the known options it abbreviates. */
function longCandidates(rule: CompiledRule, name: string): string[] {
  if (rule.known.has(name)) return [name];
  if (rule.singleDash) return [];
  return rule.longs.filter((long) => long.startsWith(name));
}

/**
 * Splits a command's words into options and operands by the rule's option
 * grammar (DESIGN.md §5.5). With `stop`, the first operand ends the options
 * (a wrapper's command, a subcommand): it and every word after it are `rest`.
 */
function parseArgs(rule: CompiledRule, words: Word[], stop: boolean): ParsedArgs {
  const out: ParsedArgs = {
    options: [],
    operands: [],
    afterDoubleDash: Infinity,
    leading: Infinity,
    rest: [],
    unknown: [],
    uncertain: false,
    execs: [],
  };
  const exec = rule.run?.mode === 'exec' ? rule.run.exec : null;
  const endLeading = () => {
    if (out.leading === Infinity) out.leading = out.operands.length;
  };
  const addOption = (given: string, name: string, names: string[], value: Word | undefined) => {
    out.options.push({ given, name, names, value });
    if (names.length === 0) out.unknown.push(name);
  };
  /**
   * A value taken from the next word that is itself an option that writes:
   * the program may not take it as the value (an optional value, an option
   * the table mistakes for one taking a value), so it counts as that option too.
   */
  const shadow = (value: Word | undefined) => {
    const text = value?.text;
    if (text == null || !text.startsWith('-')) return;
    const name = rule.singleDash || text.startsWith('--') ? text.split('=')[0]! : text.slice(0, 2);
    if (rule.risky.has(name)) out.options.push({ given: name, name, names: [name], value: undefined });
  };
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (out.afterDoubleDash !== Infinity) {
      if (stop) {
        out.rest = words.slice(i);
        break;
      }
      out.operands.push(word);
      continue;
    }
    const text = word.text;
    const isOption = text !== null && !word.pattern && text.length > 1 && text.startsWith('-');
    if (!isOption) {
      if (word.optionLike) out.uncertain = true;
      if (stop) {
        out.rest = words.slice(i);
        break;
      }
      if (text !== null && ['(', ')', '!', ','].includes(text)) endLeading();
      out.operands.push(word);
      continue;
    }
    if (text === '--') {
      out.afterDoubleDash = out.operands.length;
      endLeading();
      continue;
    }
    if (!rule.flags.has(text)) endLeading();
    if (rule.singleDash || text.startsWith('--')) {
      const eq = text.indexOf('=');
      let name = eq === -1 ? text : text.slice(0, eq);
      if (rule.singleDash && name.startsWith('--')) name = name.slice(1);
      let value: Word | undefined = eq === -1 ? undefined : staticWord(text.slice(eq + 1));
      if (exec?.has(name)) {
        // find -exec cmd args ; (or {} +): `{}` is a found path, not known now and not an option.
        const inner: Word[] = [];
        let j = i + 1;
        for (; j < words.length; j++) {
          const w = words[j]!;
          if (w.text === ';') break;
          if (w.text === '+' && words[j - 1]?.text === '{}') break;
          inner.push(w.text !== null && w.text.includes('{}') ? { text: null, optionLike: false, pattern: false } : w);
        }
        out.execs.push(inner);
        out.options.push({ given: name, name, names: [name], value: undefined });
        i = j;
        continue;
      }
      const names = longCandidates(rule, name);
      const resolved = names.length === 1 ? names[0]! : name;
      if (value === undefined && names.length === 1 && (rule.value.has(resolved) || rule.twoValue.has(resolved))) {
        value = words[i + 1];
        shadow(value);
        i++;
        if (rule.twoValue.has(resolved)) {
          shadow(words[i + 1]);
          i++;
        }
      }
      addOption(name, resolved, names, value);
      continue;
    }
    // GNU short options: -abc is -a -b -c; a value option takes the rest of the word or the next word.
    for (let j = 1; j < text.length; j++) {
      const name = `-${text[j]}`;
      const known = rule.known.has(name);
      if (rule.value.has(name) || rule.twoValue.has(name)) {
        let value: Word | undefined;
        if (j + 1 < text.length) value = staticWord(text.slice(j + 1));
        else {
          value = words[i + 1];
          shadow(value);
          i++;
        }
        if (rule.twoValue.has(name)) {
          shadow(words[i + 1]);
          i++;
        }
        addOption(name, name, [name], value);
        break;
      }
      addOption(name, name, known ? [name] : [], undefined);
      out.options[out.options.length - 1]!.attached = text.slice(j + 1);
    }
  }
  endLeading();
  return out;
}

/** Whether a parsed option is one of a set (any of its candidates, for an abbreviation). */
function optionIn(option: ParsedOption, set: Set<string>): boolean {
  return option.names.some((name) => set.has(name));
}

/**
 * Whether an option makes a dry run: listed by name alone, or as
 * `name=value` with its value; written in full (an abbreviation could be
 * another option of the program the table does not know).
 */
function isDryRun(option: ParsedOption, rule: CompiledRule): boolean {
  if (rule.dryRun.size === 0) return false;
  if (option.value === undefined) return rule.dryRun.has(option.given);
  return option.value.text !== null && rule.dryRun.has(`${option.given}=${option.value.text}`);
}

/**
 * Judges one simple command given as words (the first is the command name),
 * pushing its parts: the command table's rule for the name (DESIGN.md §5.5),
 * through wrappers to the command they run. `unknownArgs`: more arguments
 * only known when it runs are appended (xargs).
 */
function judgeArgv(words: Word[], cwds: Cwds, ctx: Ctx, depth: number, unknownArgs: boolean): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  const nameWord = words[0];
  if (nameWord === undefined) {
    ctx.parts.push(writePart([], false, 'the command is only known when it runs'));
    return;
  }
  if (nameWord.text === null || nameWord.pattern) {
    ctx.parts.push(writePart([], false, 'the command name is only known when it runs'));
    return;
  }
  let name = nameWord.text;
  if (ctx.functions.has(name)) {
    ctx.parts.push(writePart([], false, `'${name}' calls a function the script defines`));
    return;
  }
  if (name.includes('/')) {
    const dir = posix.dirname(posix.normalize(name));
    if (!ctx.table.trusted.has(dir)) {
      ctx.parts.push(writePart([], false, `'${name}' runs a program by its path`));
      return;
    }
    name = posix.basename(name);
  }
  const rule = ctx.table.commands.get(name);
  if (rule === undefined) {
    ctx.parts.push(writePart([], false, `'${name}' is not a known read-only command`));
    return;
  }
  evaluateRule(rule, name, words.slice(1), cwds, ctx, depth + 1, unknownArgs, []);
}

/** Parses a script string and judges it in a child shell (bash -c, eval); its `cd` does not leak. */
function judgeScript(script: string, cwds: Cwds, ctx: Ctx, depth: number): void {
  if (ctx.nesting + 1 > MAX_SHELL_NESTING) {
    ctx.parts.push(writePart([], false, `shells nested more than ${MAX_SHELL_NESTING} deep`));
    return;
  }
  const problem = inputProblem(script);
  if (problem !== null) {
    ctx.parts.push(writePart([], false, `the inner script ${problem}`));
    return;
  }
  judgeSource(script, cwds, { ...ctx, nesting: ctx.nesting + 1 }, depth);
}

function evaluateRule(
  rule: CompiledRule,
  label: string,
  words: Word[],
  cwds: Cwds,
  ctx: Ctx,
  depth: number,
  unknownArgs: boolean,
  inheritedTargets: string[],
): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  const only = words[0];
  if (words.length === 1 && !unknownArgs && only?.text != null && !only.pattern && rule.info.has(only.text)) {
    ctx.parts.push(readPart(inheritedTargets, `'${label} ${only.text}' only shows information`));
    return;
  }
  const wrapper = rule.run !== null && rule.run.mode !== 'exec' && rule.run.mode !== 'eval';
  const args = parseArgs(rule, words, rule.subcommands !== null || wrapper);

  const writes: string[] = [];
  const execWrites: string[] = [];
  const destructives: string[] = [];
  let dry = false;
  let dryDefeated = false;
  let here = cwds;
  const targets = [...inheritedTargets];
  if (rule.strict && args.unknown.length > 0) writes.push(`'${label} ${args.unknown[0]}' is not an option this classifier knows`);
  for (const option of args.options) {
    if (optionIn(option, rule.exec)) execWrites.push(`'${label} ${option.name}' runs another program`);
    if (optionIn(option, rule.write)) writes.push(`'${label} ${option.name}' writes`);
    if (optionIn(option, rule.destructiveOptions)) destructives.push(`'${label} ${option.name}' is destructive`);
    const values = rule.optionValues.get(option.name);
    if (values !== undefined) {
      const value = option.value?.text;
      const effect: Effect | undefined =
        value == null || option.value?.pattern
          ? [...values.values()].includes('destructive')
            ? 'destructive'
            : 'write'
          : (values.get(value.trim().toUpperCase()) ?? values.get('*') ?? 'write');
      if (effect === 'write') writes.push(`'${label} ${option.name} ${value ?? '(expansion)'}' writes`);
      if (effect === 'destructive') destructives.push(`'${label} ${option.name} ${value ?? '(expansion)'}' is destructive`);
    }
    if (rule.dryRunNames.has(option.given)) dry = isDryRun(option, rule); // the last one given wins: --dry-run=none
    if (option.given.startsWith('--no-') && [...rule.dryRunNames].some((n) => `--no-${n.replace(/^-+/, '')}`.startsWith(option.given))) {
      dryDefeated = true; // --no-dry-run, or an abbreviation of it
    }
    if (optionIn(option, rule.cwd) || optionIn(option, rule.path)) {
      const value = option.value;
      const text = value?.text;
      if (text != null && !value!.pattern) targets.push(...resolveTargets(text, here));
      if (optionIn(option, rule.cwd)) here = text != null && !value!.pattern ? union(here.map((cwd) => joinDir(cwd, text))) : [null];
    }
  }
  // A word only known when it runs may be an option (subcommands and wrappers look at their first operand themselves);
  // it may also undo a dry run.
  const stops = rule.subcommands !== null || wrapper;
  if ((args.uncertain || unknownArgs) && rule.sensitive && !stops) {
    execWrites.push(`'${label}' has arguments only known when it runs`);
    dryDefeated = true;
    if (rule.mayBeDestructive) destructives.push(`'${label}' has arguments only known when it runs, which may be destructive`);
  }
  if (dryDefeated) dry = false;

  /** Pushes the command's own part: exec options write even in a dry run; a dry run makes the rest a read. */
  const pushOwn = (base: 'read' | 'write', baseReason: string) => {
    const destructive = !dry && (destructives.length > 0 || (rule.destructive && base === 'write'));
    if (execWrites.length > 0 || (!dry && (writes.length > 0 || base === 'write' || destructive))) {
      const reason = destructive
        ? (destructives[0] ?? `'${label}' is destructive`)
        : (execWrites[0] ?? (dry ? undefined : writes[0]) ?? baseReason);
      ctx.parts.push(writePart(targets, destructive, reason));
    } else {
      ctx.parts.push(readPart(targets, dry ? `'${label}' is a dry run` : baseReason));
    }
  };

  // Subcommands: the first operand selects the rule for the rest.
  if (rule.subcommands !== null) {
    const [first, ...rest] = args.rest;
    if (first === undefined) {
      if (unknownArgs) writes.push(`'${label}' gets its subcommand only when it runs`);
      pushOwn(rule.read ? 'read' : 'write', rule.read ? `'${label}' is read-only` : `'${label}' writes`);
      return;
    }
    const sub = first.text === null || first.pattern ? undefined : rule.subcommands.get(first.text);
    if (sub === undefined) {
      ctx.parts.push(writePart(targets, false, `'${label} ${show(first)}' is not a known read-only command`));
      return;
    }
    if (writes.length > 0 || destructives.length > 0 || execWrites.length > 0) pushOwn('read', '');
    evaluateRule(sub, `${label} ${first.text}`, rest, here, ctx, depth + 1, unknownArgs, targets);
    return;
  }

  const run = rule.run;
  if (run !== null && run.mode !== 'exec') {
    if (args.options.some((option) => optionIn(option, run.unless))) {
      pushOwn('read', `'${label}' only shows information`);
      return;
    }
    if (run.mode === 'shell') {
      const hasScript = args.options.some((option) => option.names.includes(run.shellOption));
      const script = args.rest[0];
      if (!hasScript || script === undefined) {
        writes.push(`'${label}' runs a script that is not on the command line`);
        pushOwn('write', '');
        return;
      }
      if (script.text === null || script.pattern) {
        writes.push(`'${label}' runs a script only known when it runs`);
        pushOwn('write', '');
        return;
      }
      if (writes.length > 0 || destructives.length > 0 || execWrites.length > 0 || run.selfWrites)
        pushOwn(run.selfWrites ? 'write' : 'read', `'${label}' writes`);
      judgeScript(script.text, here, ctx, depth + 1);
      return;
    }
    if (run.mode === 'eval') {
      if (unknownArgs || args.operands.some((w) => w.text === null)) {
        writes.push(`'${label}' runs a script only known when it runs`);
        pushOwn('write', '');
        return;
      }
      if (args.operands.length === 0) {
        pushOwn('read', `'${label}' runs nothing`);
        return;
      }
      judgeScript(args.operands.map((w) => w.text).join(' '), here, ctx, depth + 1);
      return;
    }
    // argv: skip operands and assignments, then the command.
    let index = run.skipOperands;
    if (args.rest.slice(0, index).some((w) => w.text === null || w.pattern)) {
      // `timeout $T cmd`: an unquoted expansion may be several words, so which word is the command is not known
      writes.push(`'${label}' runs a command only known when it runs`);
      pushOwn('write', '');
      return;
    }
    if (run.assignments) {
      for (; index < args.rest.length; index++) {
        const text = args.rest[index]!.text;
        const match = text === null ? null : /^([A-Za-z_][A-Za-z0-9_]*)=([\s\S]*)$/.exec(text);
        if (match === null) break;
        const part = assignmentPart(match[1]!, match[2]!, ctx);
        if (part.kind === 'write') writes.push(part.reason!.replace(/^shell: /, ''));
      }
    }
    let inner = args.rest.slice(index);
    if (inner.length === 0 && run.defaultCommand !== null) inner = run.defaultCommand.map(staticWord);
    for (const option of args.options) {
      if (!optionIn(option, run.replace)) continue;
      // xargs -I R: words holding R get input only known when it runs.
      const marker = option.value === undefined ? option.attached || '{}' : option.value.text;
      inner = inner.map((w) => (marker === null || w.text === null || w.text.includes(marker) ? DYNAMIC : w));
    }
    if (inner.length === 0) {
      if (unknownArgs) writes.push(`'${label}' gets its command only when it runs`);
      pushOwn(rule.read ? 'read' : 'write', rule.read ? `'${label}' alone only shows information` : `'${label}' writes`);
      return;
    }
    if (run.selfWrites || writes.length > 0 || destructives.length > 0 || execWrites.length > 0 || targets.length > 0) {
      pushOwn(run.selfWrites ? 'write' : 'read', run.selfWrites ? `'${label}' writes` : `'${label}' runs another command`);
    }
    judgeArgv(inner, here, ctx, depth + 1, unknownArgs || run.appendsArguments);
    return;
  }

  // A leaf command: its options, operands and scripts.
  for (const inner of args.execs) judgeArgv(inner, here, ctx, depth + 1, false);
  const operands = args.operands;
  let skip = args.options.some((option) => optionIn(option, rule.pattern)) ? 0 : rule.skip;
  if (rule.script !== null) {
    const script = rule.script;
    const scripts: Word[] = [];
    let fromFile = false;
    for (const option of args.options) {
      if (optionIn(option, script.files)) fromFile = true;
      if (optionIn(option, script.options)) scripts.push(option.value ?? DYNAMIC);
    }
    if (!fromFile && scripts.length === 0) {
      const first = operands[0];
      scripts.push(first ?? staticWord(''));
      skip += 1;
    }
    if (fromFile) {
      writes.push(`'${label}' runs a script from a file`);
      targets.push(`${UNKNOWN_PLACE}${label} script`);
    } else if (scripts.some((w) => w.text === null || w.pattern)) {
      writes.push(`'${label}' runs a script only known when it runs`);
      targets.push(`${UNKNOWN_PLACE}${label} script`);
    } else {
      const text = scripts.map((w) => w.text).join('\n');
      const safe = script.language === 'sed' ? sedScriptIsSafe(text) : awkProgramIsSafe(text);
      if (!safe) {
        writes.push(`'${label}' runs a script that can write files or run programs`);
        // What it writes is named in the script, not known here: a place not known, never established, so the write is refused.
        targets.push(`${UNKNOWN_PLACE}${label} script`);
      }
    }
  }
  let paths: Word[];
  switch (rule.operands) {
    case 'none':
      paths = [];
      break;
    case 'after-double-dash':
      paths = operands.slice(Math.max(skip, args.afterDoubleDash));
      break;
    case 'leading':
      paths = operands.slice(0, Math.min(args.leading, operands.length));
      break;
    default:
      paths = operands.slice(skip);
  }
  if (rule.maxOperands !== null && !args.options.some((option) => optionIn(option, rule.list))) {
    const counted = operands.filter((w) => !(w.text !== null && rule.ignoredPrefixes.some((p) => w.text!.startsWith(p))));
    if (counted.length > rule.maxOperands || counted.some((w) => w.text === null || w.pattern)) {
      writes.push(`'${label}' with ${counted.length === 1 ? 'an operand' : 'operands'} writes`);
    }
  }
  for (const operand of operands) {
    const text = operand.text;
    if (text !== null && rule.destructivePrefixes.some((p) => text.startsWith(p))) {
      destructives.push(`'${label} ${text}' is destructive`);
    }
  }
  if (rule.writesOperands) {
    const written = paths.find((w) => w.text === null || !ctx.table.nullDevices.has(w.text));
    if (written !== undefined) writes.push(`'${label}' writes to '${show(written)}'`);
  }
  if (rule.assignsOperands) {
    for (const operand of operands) {
      const name = operand.text === null ? null : /^[A-Za-z_][A-Za-z0-9_]*/.exec(operand.text)?.[0];
      if (name == null) continue;
      const part = assignmentPart(name, null, ctx);
      if (part.kind === 'write') writes.push(part.reason!.replace(/^shell: /, ''));
    }
  }
  let found = false;
  for (const path of paths) {
    if (path.text === null || ctx.table.nullDevices.has(path.text)) continue;
    // A brace expansion with an alternative that leaves the directory written before it (`{~,x}`, `{../..,x}`,
    // `{/etc,x}`): several paths, some elsewhere; a place not known, never established, so a write there is refused.
    if (path.pattern && ESCAPING_BRACES.test(path.text)) {
      targets.push(`${UNKNOWN_PLACE}${path.text}`);
      found = true;
      continue;
    }
    if (rule.remoteOperands && /^([a-z][a-z0-9+.-]*:\/\/|[^/.~][^/]*:)/i.test(path.text)) continue;
    const resolved = resolveTargets(path.text, here);
    if (resolved.length > 0) found = true;
    targets.push(...resolved);
  }
  if (!found && paths.length === 0 && rule.defaultPath !== null) targets.push(...resolveTargets(rule.defaultPath, here));
  pushOwn(rule.read ? 'read' : 'write', rule.read ? `'${label}' is read-only` : `'${label}' writes`);
}

// --- sed and awk scripts ---------------------------------------------------

/**
 * Whether a sed script only prints: no `w`/`W` (write a file), `e` (run a
 * command), `s///w` or `s///e`, and nothing this checker does not know
 * (GNU sed 4 syntax). Anything unknown or malformed counts as unsafe.
 */
export function sedScriptIsSafe(script: string): boolean {
  const n = script.length;
  let i = 0;
  const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
  const skipSpaces = () => {
    while (i < n && (script[i] === ' ' || script[i] === '\t')) i++;
  };
  const digits = () => {
    while (isDigit(script[i])) i++;
  };
  /** Skips to after the closing delimiter; false when there is none. */
  const delimited = (delim: string): boolean => {
    while (i < n) {
      const c = script[i]!;
      if (c === '\\') {
        i += 2;
        continue;
      }
      i++;
      if (c === delim) return true;
    }
    return false;
  };
  const toEnd = (alsoSemicolon: boolean) => {
    while (i < n && script[i] !== '\n' && !(alsoSemicolon && script[i] === ';')) i++;
  };
  /** One address; false when there is none at `i`. */
  const address = (): boolean | 'bad' => {
    const c = script[i];
    if (isDigit(c)) {
      digits();
      if (script[i] === '~') {
        i++;
        digits();
      }
      return true;
    }
    if (c === '$') {
      i++;
      return true;
    }
    if (c === '/' || c === '\\') {
      let delim = '/';
      if (c === '\\') {
        delim = script[i + 1] ?? '';
        if (delim === '' || delim === '\n' || delim === '\\') return 'bad';
        i++;
      }
      i++;
      if (!delimited(delim)) return 'bad';
      while (script[i] === 'I' || script[i] === 'M') i++;
      return true;
    }
    return false;
  };
  for (;;) {
    while (i < n && /[\s;]/.test(script[i]!)) i++;
    if (i >= n) return true;
    if (script[i] === '#') {
      toEnd(false);
      continue;
    }
    const first = address();
    if (first === 'bad') return false;
    if (first) {
      skipSpaces();
      if (script[i] === ',') {
        i++;
        skipSpaces();
        if (script[i] === '+' || script[i] === '~') {
          i++;
          if (!isDigit(script[i])) return false;
          digits();
        } else if (address() !== true) return false;
      }
    }
    skipSpaces();
    while (script[i] === '!') {
      i++;
      skipSpaces();
    }
    const command = script[i];
    i++;
    switch (command) {
      case '{':
      case '}':
      case '=':
      case 'd':
      case 'D':
      case 'g':
      case 'G':
      case 'h':
      case 'H':
      case 'n':
      case 'N':
      case 'p':
      case 'P':
      case 'x':
      case 'z':
      case 'F':
        break;
      case 'q':
      case 'Q':
      case 'l':
      case 'L':
        skipSpaces();
        digits();
        break;
      case ':':
      case 'b':
      case 't':
      case 'T':
      case 'v':
        toEnd(true);
        break;
      case 'a':
      case 'i':
      case 'c':
        // text to the end of the line; a backslash continues it
        while (i < n && script[i] !== '\n') i += script[i] === '\\' ? 2 : 1;
        break;
      case 'r':
      case 'R':
        toEnd(false);
        break;
      case 's':
      case 'y': {
        const delim = script[i];
        if (delim === undefined || delim === '\n' || delim === '\\') return false;
        i++;
        if (!delimited(delim) || !delimited(delim)) return false;
        if (command === 's') {
          while (i < n && /[gpiImM0-9]/.test(script[i]!)) i++;
          if (script[i] === 'e' || script[i] === 'w' || script[i] === 'W') return false;
        }
        break;
      }
      default:
        return false; // w, W, e, and anything unknown
    }
  }
}

/**
 * Whether an awk program only prints: no `system`, no pipe (`|`, `|&`; `||`
 * is fine), no `@` (gawk's indirect calls, `@load`), and no `>` after a
 * `print`/`printf` (an output redirection; a comparison there counts too).
 * Deliberately coarse: it may call a read-only program a write, never the
 * other way round.
 */
export function awkProgramIsSafe(program: string): boolean {
  if (/system|@/.test(program)) return false;
  if (program.replace(/\|\|/g, '').includes('|')) return false;
  const print = program.search(/print/);
  return print === -1 || !program.includes('>', print);
}

// --- entry points ----------------------------------------------------------

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why a command string cannot be judged (too long, NUL, lone surrogate), or null. */
function inputProblem(text: string): string | null {
  if (text.length > MAX_SHELL_COMMAND_BYTES || Buffer.byteLength(text, 'utf8') > MAX_SHELL_COMMAND_BYTES) {
    return `is longer than ${MAX_SHELL_COMMAND_BYTES} bytes`;
  }
  if (text.includes('\0')) return 'contains a NUL character';
  if (LONE_SURROGATE.test(text)) return 'contains a lone surrogate';
  return null;
}

/**
 * Where bash runs code hidden in text: it evaluates array subscripts (and so
 * `$(...)` in them) when a value is used arithmetically (`$((x))`, `((x))`,
 * `[[ x -eq 0 ]]`, `let`), as a name (`declare`, `read`, `test -v`), through
 * indirection (`${!x}`) and prompt expansion (`${x@P}`). A single-quoted
 * string is inert to the parser but not to these. Fail closed: why the tree
 * holds such a place, or null. Iterative and bounded by the tree's size.
 */
function evaluatedCode(root: SyntaxNode, source: string): string | null {
  const stack: SyntaxNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const text = () => source.slice(node.startIndex, node.endIndex);
    switch (node.type) {
      case 'raw_string':
        if (/\$\(|`|\$\{/.test(text()))
          return 'a quoted string holds a command substitution bash may run (array subscripts in arithmetic, declare, read, test -v)';
        continue;
      case 'ansi_c_string':
        // $'...' can spell `$(` with escapes (\x24, \044, \u0024).
        if (/\$\(|`|\$\{|\\[xuU0-7]/.test(text().slice(1))) return 'an ANSI-C quoted string may spell a command substitution bash may run';
        continue;
      case 'string':
      case 'word':
        // An escaped `\$(` (or `\${`, `\``) is a literal `$(` in the value: inert here, run where bash evaluates the value.
        if (/\\\$\\?[({]|\$\\[({]|\\`/.test(text()))
          return 'a quoted or escaped word holds a command substitution bash may run (array subscripts in arithmetic, declare, read, test -v)';
        break;
      case 'c_style_for_statement': {
        // The loop's own counters (assigned in its first part) are numbers; any other name, or a `$`, may hold a subscript.
        const header = /^for\s*\(\(([\s\S]*?)\)\)/.exec(text())?.[1] ?? text();
        const counters = new Set([...(header.split(';')[0] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*=/g)].map((m) => m[1]!));
        const names = [...header.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)].map((m) => m[0]);
        if (header.includes('$') || names.some((name) => !counters.has(name))) {
          return 'an arithmetic for loop evaluates a variable, and with it any array subscript it holds';
        }
        break;
      }
      case 'subscript': {
        const index = node.childForFieldName('index');
        if (index !== null && !/^\s*(\d+|@|\*)\s*$/.test(source.slice(index.startIndex, index.endIndex))) {
          return 'an array subscript is evaluated arithmetically, variables and any subscript they hold included';
        }
        break;
      }
      case 'declaration_command':
        if (/\s-[A-Za-z]*i/.test(text()) && /=[^\s]*[A-Za-z_$`]/.test(text()))
          return 'an integer declaration (-i) evaluates its values arithmetically';
        break;
      case 'expansion': {
        const t = text();
        if (t.startsWith('${!') || /@P\}$/.test(t)) return 'an indirect or prompt expansion runs whatever the variable holds';
        // A substring `${x:offset:length}` evaluates its offset and length arithmetically (not `${x:-...}` and the like).
        const substring = /^\$\{#?[A-Za-z_][A-Za-z0-9_]*:(?![-=?+])([\s\S]*)\}$/.exec(t);
        if (substring !== null && /[$A-Za-z_]/.test(substring[1]!))
          return 'a substring expansion evaluates its offset arithmetically, variables included';
        break;
      }
      case 'arithmetic_expansion':
      case 'compound_statement':
      case 'test_command': {
        const t = text();
        const arithmetic =
          node.type === 'arithmetic_expansion' ||
          (node.type === 'compound_statement' && t.startsWith('((')) ||
          (node.type === 'test_command' && /\s-(eq|ne|lt|le|gt|ge|v)\s/.test(t));
        if (arithmetic && /\$|[A-Za-z_]/.test(t.replace(/^\$?\(\(|\)\)$|^\[\[|\]\]$|\s-(eq|ne|lt|le|gt|ge|v)\s/g, ' '))) {
          return 'an arithmetic context evaluates a variable, and with it any array subscript it holds';
        }
        break;
      }
      case 'command': {
        const name = node.childForFieldName('name');
        if (
          name !== null &&
          source.slice(name.startIndex, name.endIndex) === 'let' &&
          /\$|[A-Za-z_]\s*[-+*/%]?=?\s*[A-Za-z_]/.test(text().slice(3))
        ) {
          return '`let` evaluates its arguments arithmetically, variables and subscripts included';
        }
        break;
      }
    }
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child !== null) stack.push(child);
    }
  }
  return null;
}

/** Parses and judges a script; tree freed after. */
function judgeSource(source: string, cwds: Cwds, ctx: Ctx, depth: number): void {
  let calls = 0;
  const tree = parser.parse(source, null, {
    progressCallback: () => ++calls > MAX_PARSE_PROGRESS_CALLS,
  });
  if (tree === null) {
    parser.reset();
    ctx.parts.push(writePart([], false, 'the command is too hard to parse'));
    return;
  }
  try {
    const root = tree.rootNode;
    if (root.hasError) {
      ctx.parts.push(writePart([], false, 'the command does not parse'));
      return;
    }
    const evaluated = evaluatedCode(root, source);
    if (evaluated !== null) ctx.parts.push(writePart([], false, evaluated)); // and judged on, for targets and destructive parts
    if (source.includes('(') || source.includes('function')) {
      for (const capture of functionNamesQuery.captures(root))
        ctx.functions.add(source.slice(capture.node.startIndex, capture.node.endIndex));
    }
    judgeSequence(root, cwds, { ...ctx, source }, depth + 1);
  } finally {
    tree.delete();
  }
}

/** The words of an argv array, or why it cannot be judged. */
function argvWords(argv: unknown[]): Word[] | string {
  if (argv.length === 0) return 'the argv array is empty';
  if (argv.length > MAX_SHELL_ARGV_WORDS) return `the argv array has more than ${MAX_SHELL_ARGV_WORDS} words`;
  let bytes = 0;
  const words: Word[] = [];
  for (let i = 0; i < argv.length; i++) {
    const item = argv[i];
    if (typeof item !== 'string') return `argv[${i}] is not a string`;
    bytes += item.length + 1;
    if (bytes > MAX_SHELL_COMMAND_BYTES) return `the argv array is longer than ${MAX_SHELL_COMMAND_BYTES} bytes`;
    const problem = inputProblem(item);
    if (problem !== null) return `argv[${i}] ${problem}`;
    words.push(staticWord(item));
  }
  return words;
}

function freeze(classification: Classification): Classification {
  Object.freeze(classification.targets);
  return Object.freeze(classification);
}

/** The classification of a call from its parts: the worst kind, the targets of the parts of that kind (DESIGN.md §5.5). */
function combine(parts: Classification[]): Classification {
  const worst = worstOf(parts, failClosed('shell: the command runs nothing'));
  const result = worstOf(
    parts.filter((part) => part.kind === worst.kind),
    worst,
  );
  const telling = parts.find((part) => (result.destructive ? part.destructive : part.kind === result.kind && !minorParts.has(part)));
  if (telling?.reason !== undefined) result.reason = telling.reason;
  result.targets = normalizeTargets(result.targets);
  return result;
}

function classifyUnchecked(command: unknown, table: CompiledTable, cwd: string | undefined): Classification {
  const ctx: Ctx = { table, functions: new Set(), parts: [], nesting: 0, source: '', work: { done: 0 } };
  const cwds: Cwds = [cwd === undefined ? '' : posix.normalize(cwd)];
  if (typeof command === 'string') {
    const problem = inputProblem(command);
    if (problem !== null) return failClosed(`shell: the command ${problem}`);
    if (command.trim() === '') return failClosed('shell: the command is empty');
    judgeSource(command, cwds, ctx, 0);
  } else if (Array.isArray(command)) {
    const words = argvWords(command);
    if (typeof words === 'string') return failClosed(`shell: ${words}`);
    judgeArgv(words, cwds, ctx, 0, false);
  } else {
    return failClosed('shell: the command is neither a string nor an array of strings');
  }
  return combine(ctx.parts);
}

const memo = new Map<string, Classification>();
let memoHits = 0;
let memoMisses = 0;

/**
 * Classifies a shell command (DESIGN.md §5.5, §5.6): `read` only when every
 * simple command in it is read-only by the command table, else `write`;
 * `targets` are the path operands and redirection files of the parts of
 * that kind, normalized with `pathTarget` against `cwd` (and against the
 * directory a `cd` moved to); `destructive` per the table. See the module
 * documentation for the rules and what is classified conservatively.
 *
 * Never throws: input that is not a string or an array of strings, too long
 * (`MAX_SHELL_COMMAND_BYTES`), holding a NUL or a lone surrogate, nested too
 * deeply or not parsing is a `write` without targets (`failClosed`).
 *
 * The result is frozen (it may be shared through the memo): copy it to change it.
 *
 * @param command a shell script (`"ls -la && cat a"`), or an argv array
 *   (`["bash", "-lc", "ls"]`, `["rm", "-rf", "x"]`) run without a shell.
 * @param options.table the command table (default `defaultShellTable`); a
 *   table that does not validate makes every command a write. A table is
 *   validated and compiled once per object: do not change it afterwards.
 * @param options.cwd the working directory the command runs in, for targets
 *   (an absolute path); without it relative paths stay relative.
 */
export function classifyShellCommand(command: unknown, options?: { table?: ShellTable; cwd?: string }): Classification {
  try {
    const tableOption = options?.table;
    let table: CompiledTable;
    try {
      table = compileTable(tableOption ?? defaultShellTable);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return freeze(failClosed(`shell: the command table is not valid (${message})`));
    }
    const cwdOption = options?.cwd;
    const cwd = typeof cwdOption === 'string' && cwdOption !== '' && inputProblem(cwdOption) === null ? cwdOption : undefined;
    let key: string | null = null;
    if (typeof command === 'string') key = `${table.id}\0${cwd ?? ''}\0s${command}`;
    else if (Array.isArray(command) && command.length <= 64 && command.every((w) => typeof w === 'string')) {
      key = `${table.id}\0${cwd ?? ''}\0a${JSON.stringify(command)}`;
    }
    if (key !== null && key.length <= MEMO_MAX_KEY) {
      const cached = memo.get(key);
      if (cached !== undefined) {
        memoHits++;
        memo.delete(key);
        memo.set(key, cached);
        return cached;
      }
      memoMisses++;
    } else key = null;
    let result: Classification;
    try {
      result = freeze(classifyUnchecked(command, table, cwd));
    } catch (error) {
      result = freeze(
        error instanceof TooDeep || error instanceof RangeError
          ? failClosed(`shell: the command is nested more than ${MAX_SHELL_NODE_DEPTH} levels deep`)
          : error instanceof TooBig
            ? failClosed(`shell: the command has more than ${MAX_SHELL_WORK} words and commands to judge`)
            : failClosed('shell: the command could not be judged'),
      );
    }
    if (key !== null) {
      memo.set(key, result);
      if (memo.size > SHELL_MEMO_SIZE) memo.delete(memo.keys().next().value!);
    }
    return result;
  } catch {
    return freeze(failClosed('shell: the command could not be judged'));
  }
}

/** The memo's counters since the last `clearShellMemo`: classifications served from it, computed, and kept. */
export function shellMemoStats(): { hits: number; misses: number; size: number } {
  return { hits: memoHits, misses: memoMisses, size: memo.size };
}

/** Empties the memo and zeroes its counters. */
export function clearShellMemo(): void {
  memo.clear();
  memoHits = 0;
  memoMisses = 0;
}
