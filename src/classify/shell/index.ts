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
 *   of its options is). A path operand only known when it runs is resolved
 *   where the script says what it is (a variable assigned earlier, find's
 *   `{}`, what xargs is fed, a for loop's words, brace expansion); else it is
 *   an unknown place (`unknownPlace`), never dropped.
 * - Output redirection to a file (`>`, `>>`, `>|`, `&>`, `>& file`) is a
 *   write with the file as target; to one of the table's `nullDevices`
 *   (`/dev/null`, ...) or to a descriptor (`2>&1`) it is not. Here-documents
 *   and here-strings are input; an input redirection's file is a read target.
 *   Redirections are not destructive (a `>` that truncates is a plain write).
 * - Here-documents are read as bash reads them (`heredoc.ts`): the delimiter
 *   by quote removal (`E"O"F` is `EOF`, and quoted), the body ending at the
 *   line bash stops at; where the tree may end it elsewhere, or the
 *   delimiter is one bash versions read differently (`$'EOF'`), a write. An
 *   unquoted body is expanded as a double-quoted string: its `$(...)`,
 *   `${...}`, arithmetic and backticks are judged.
 * - An assignment (`X=1`, `export X=1`, `local`, `unset`), `cd` and the other
 *   shell-internal commands are reads without targets: they change nothing
 *   outside the shell. An assignment to a variable in the table's `variables`
 *   (`PATH`, `LD_PRELOAD`, `GIT_*`, pagers, ...: what changes which program
 *   runs or what it runs) is a write unless the value is listed as safe
 *   (`PAGER=cat`). That list is a deny list and cannot be complete.
 *   Declarations are judged after quote removal (`export "BASH_ENV=x"`,
 *   `export BASH_EN\V=x` assign BASH_ENV); a variable name only known when
 *   it runs (`declare "$x=1"`, `test -v "$x"`, `read "$x"`, `unset "$x"`),
 *   a subscript bash evaluates (`a[i]`) and a name reference (`declare -n`)
 *   are writes (`names.ts`); `${X:=v}` is an assignment to X.
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
 *   deeper than `MAX_SHELL_NODE_DEPTH`, a command that does not parse, an
 *   ERROR or MISSING node anywhere in its tree) is a write without targets.
 *   Cost is bounded: past `MAX_SHELL_WORK` statements, words and expression
 *   nodes, with a working directory longer than `MAX_SHELL_CWD_LENGTH`, or
 *   with here-document lines tree-sitter would read in quadratic time
 *   (`MAX_HEREDOC_LINE_COST`), the call is a write (`too-complex`). Nothing
 *   here throws.
 *
 * This folder, along the judge's seams: `table-schema.ts` (the table's
 * format, `parseShellTable`, the shipped table) and `table-compile.ts` (the
 * table compiled for judging); `parse.ts` (tree-sitter, input checks, a
 * script parsed and judged) and `evaluated-code.ts`; `judge.ts` (the walk
 * over statements), `command.ts`, `redirect.ts`, `assignment.ts`, `words.ts`
 * (words and the judge's context), `heredoc.ts` (here-documents as bash
 * reads them), `names.ts` (declarations and variable names bash resolves),
 * `cwd.ts` (working directories); `argv.ts`
 * (a command's name looked up), `parse-args.ts` (its options), `effects.ts`,
 * `evaluate-rule.ts`, `evaluate-wrapper.ts`, `evaluate-leaf.ts` (its rule
 * applied), `sed.ts` and `awk.ts` (script checkers); `parts.ts`,
 * `reasons.ts` (`SHELL_REASONS`) and `limits.ts`. This file is the surface:
 * `classifyShellCommand`, how parts combine, and the memo.
 *
 * Spec: DESIGN.md §5.1, §5.2, §5.5, §5.6.
 */
import { posix } from 'node:path';
import { unknownPlace } from '../../../machines/safety.targets.js';
import { type Classification, failClosed, normalizeTargets, worstOf } from '../classification.js';
import { createMemo } from '../../util/memo.js';
import { parserMisses } from '../parsers.js';
import { judgeArgv } from './argv.js';
import type { Cwds } from './cwd.js';
import { judgeStatement, walk } from './judge.js';
import { applyLinks } from './links.js';
import {
  MAX_SHELL_ARGV_WORDS,
  MAX_SHELL_COMMAND_BYTES,
  MAX_SHELL_CWD_LENGTH,
  MAX_SHELL_NODE_DEPTH,
  MAX_SHELL_WORK,
  TooBig,
  TooDeep,
} from './limits.js';
import { inputProblem, judgeScript, judgeSource } from './parse.js';
import { isMinorPart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import { compileTable, type CompiledTable } from './table-compile.js';
import { defaultShellTable, type ShellTable } from './table-schema.js';
import { staticWord, type JudgeContext, type JudgeSteps, type Word } from './words.js';

export { MAX_SHELL_ARGV_WORDS, MAX_SHELL_COMMAND_BYTES, MAX_SHELL_CWD_LENGTH, MAX_SHELL_NODE_DEPTH, MAX_SHELL_WORK };
export { defaultShellTable, parseShellTable, shellTableSchema, type ShellTable } from './table-schema.js';
/**
 * The rest of the surface: nothing in the package imports these, but they
 * are the classifier's, as the limits and the table's schema above are.
 * @public
 */
export { MAX_SHELL_NESTING } from './limits.js';
/** @public */
export { shellCommandRuleSchema, type OptionSet, type ShellCommandRule } from './table-schema.js';
export { isSafeSedScript } from './sed.js';
export { isSafeAwkProgram } from './awk.js';

/** How many classifications the memo keeps (least recently used dropped first). */
export const SHELL_MEMO_SIZE = 1_024;

/** Commands longer than this (characters) are not kept in the memo. */
const MEMO_MAX_KEY = 8_192;

/** The judge's recursive steps (see `JudgeSteps`): set here, where every file of the judge is in reach. */
const STEPS: JudgeSteps = { walk, statement: judgeStatement, argv: judgeArgv, script: judgeScript };

/** The words of an argv array, or why it cannot be judged. */
function argvWords(argv: unknown[]): Word[] | string {
  if (argv.length === 0) return SHELL_REASONS['argv-empty'];
  if (argv.length > MAX_SHELL_ARGV_WORDS) return SHELL_REASONS['argv-too-many-words'](MAX_SHELL_ARGV_WORDS);
  let bytes = 0;
  const words: Word[] = [];
  for (let i = 0; i < argv.length; i++) {
    const item = argv[i];
    if (typeof item !== 'string') return SHELL_REASONS['argv-word-not-string'](i);
    bytes += item.length + 1;
    if (bytes > MAX_SHELL_COMMAND_BYTES) return SHELL_REASONS['argv-too-long'](MAX_SHELL_COMMAND_BYTES);
    const problem = inputProblem(item);
    if (problem !== null) return SHELL_REASONS['argv-word-problem'](i, problem);
    words.push(staticWord(item));
  }
  return words;
}

function freeze(classification: Classification): Classification {
  Object.freeze(classification.targets);
  return Object.freeze(classification);
}

/** The most characters of a command an unknown place's hint keeps. */
const HINT_LENGTH = 60;

/** What a command is, for the hint of an unknown place (`unknownPlace`): its text cut to `HINT_LENGTH`, or what it is not. */
function commandHint(command: unknown): string {
  const text =
    typeof command === 'string'
      ? command.trim()
      : Array.isArray(command)
        ? command.map((w) => (typeof w === 'string' ? w : typeof w)).join(' ')
        : 'a command that is not text';
  const cut = text.length > HINT_LENGTH ? `${text.slice(0, HINT_LENGTH)}…` : text;
  // Control characters and lone surrogates (a bad command's, or a pair cut in two) are not kept in a target.
  const printable = [...cut].map((c) => (c.charCodeAt(0) < 0x20 || c === '\u007f' ? ' ' : c)).join('');
  return printable.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, ' ');
}

/**
 * A write part without targets given an unknown place (issue #24: a shell
 * write is never without targets), the hint the program its reason names
 * (`'./deploy.sh' runs a program by its path` gives `./deploy.sh`), else
 * `hint` (the command, cut). Other parts as they are.
 */
function withPlace(part: Classification, hint: string): Classification {
  if (part.kind !== 'write' || part.targets.length > 0) return part;
  const named = /^shell: '([^']{1,60})'/.exec(part.reason ?? '')?.[1];
  return { ...part, targets: [unknownPlace(named ?? hint)] };
}

/**
 * The classification of a call from its parts: the worst kind, the targets
 * of the parts of that kind (DESIGN.md §5.5). Every write part names a
 * place: one without targets names an unknown place (`withPlace`).
 */
function combine(given: Classification[], hint: string): Classification {
  const parts = given.map((part) => withPlace(part, hint));
  const worst = worstOf(parts, failClosedShell(SHELL_REASONS['runs-nothing'], hint));
  const result = worstOf(
    parts.filter((part) => part.kind === worst.kind),
    worst,
  );
  const telling = given.find((part) => (result.destructive ? part.destructive : part.kind === result.kind && !isMinorPart(part)));
  if (telling?.reason !== undefined) result.reason = telling.reason;
  result.targets = normalizeTargets(result.targets);
  return result;
}

/** `failClosed` for the shell: a write of an unknown place (hint: the command, cut), the reason given the `shell: ` prefix. */
function failClosedShell(reason: string, hint: string): Classification {
  return { ...failClosed(`shell: ${reason}`), targets: [unknownPlace(hint)] };
}

function classifyUnchecked(command: unknown, table: CompiledTable, cwd: string | undefined): Classification {
  const ctx: JudgeContext = { table, functions: new Set(), parts: [], nesting: 0, source: '', work: { done: 0 }, steps: STEPS };
  const cwds: Cwds = [cwd === undefined ? '' : posix.normalize(cwd)];
  if (typeof command === 'string') {
    const problem = inputProblem(command);
    if (problem !== null) return failClosedShell(SHELL_REASONS['command-problem'](problem), commandHint(command));
    if (command.trim() === '') return failClosedShell(SHELL_REASONS['command-empty'], 'an empty command');
    judgeSource(command, cwds, ctx, 0);
  } else if (Array.isArray(command)) {
    const words = argvWords(command);
    if (typeof words === 'string') return failClosedShell(words, commandHint(command));
    judgeArgv({ words, unknownArgs: false }, cwds, ctx, 0);
  } else {
    return failClosedShell(SHELL_REASONS['command-not-string-or-array'], commandHint(command));
  }
  const links = applyLinks(ctx.parts); // paths through a link made out of its directory: not known
  const result = combine(ctx.parts, commandHint(command));
  if (links.length > 0) result.links = Object.freeze(links) as string[];
  return result;
}

/** `classifyUnchecked`, frozen, with what the walk throws (too deep, too big, anything else) turned into a write. */
function classifyCaught(command: unknown, table: CompiledTable, cwd: string | undefined): Classification {
  try {
    return freeze(classifyUnchecked(command, table, cwd));
  } catch (error) {
    return freeze(
      error instanceof TooDeep || error instanceof RangeError
        ? failClosedShell(SHELL_REASONS['nested-too-deep'](MAX_SHELL_NODE_DEPTH), commandHint(command))
        : error instanceof TooBig
          ? failClosedShell(SHELL_REASONS['too-complex'](SHELL_REASONS['work-over-budget'](MAX_SHELL_WORK)), commandHint(command))
          : failClosedShell(SHELL_REASONS['not-judged'], commandHint(command)),
    );
  }
}

const memo = createMemo<Classification>(SHELL_MEMO_SIZE);

/** The memo's key of a call (table, cwd, command); null when it is not kept (an argv array over 64 words, a key over `MEMO_MAX_KEY`). */
function memoKey(command: unknown, table: CompiledTable, cwd: string | undefined): string | null {
  let key: string | null = null;
  if (typeof command === 'string') key = `${table.id}\0${cwd ?? ''}\0s${command}`;
  else if (Array.isArray(command) && command.length <= 64 && command.every((w) => typeof w === 'string')) {
    key = `${table.id}\0${cwd ?? ''}\0a${JSON.stringify(command)}`;
  }
  return key !== null && key.length <= MEMO_MAX_KEY ? key : null;
}

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
      return freeze(failClosedShell(SHELL_REASONS['table-invalid'](message), commandHint(command)));
    }
    const cwdOption = options?.cwd;
    if (typeof cwdOption === 'string' && cwdOption.length > MAX_SHELL_CWD_LENGTH) {
      return freeze(
        failClosedShell(SHELL_REASONS['too-complex'](SHELL_REASONS['cwd-too-long'](MAX_SHELL_CWD_LENGTH)), commandHint(command)),
      );
    }
    const cwd = typeof cwdOption === 'string' && cwdOption !== '' && inputProblem(cwdOption) === null ? cwdOption : undefined;
    const key = memoKey(command, table, cwd);
    const cached = key === null ? undefined : memo.get(key);
    if (cached !== undefined) return cached;
    const misses = parserMisses();
    const result = classifyCaught(command, table, cwd);
    // A result judged without a parser it needed (not loaded yet: `../parsers.ts`) is not kept: a loaded parser may judge otherwise.
    if (key !== null && parserMisses() === misses) memo.set(key, result);
    return result;
  } catch {
    return freeze(failClosedShell(SHELL_REASONS['not-judged'], 'a command that could not be judged'));
  }
}

/** The memo's counters since the last `clearShellMemo`: classifications served from it, computed, and kept. */
export function shellMemoStats(): { hits: number; misses: number; size: number } {
  return memo.stats();
}

/** Empties the memo and zeroes its counters. */
export function clearShellMemo(): void {
  memo.clear();
}
