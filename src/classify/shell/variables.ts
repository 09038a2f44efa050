/**
 * Shell variables followed statically (DESIGN.md §5.1, §5.5): a variable
 * assigned earlier in the same script, where the assignment surely ran
 * before (the same sequential list, the left of `&&`), resolves to its
 * value (`DIR=/srv/app; rm -rf "$DIR"/` names `/srv/app`). An assignment in
 * a branch, loop, subshell or pipeline element, or one a function, `eval`,
 * `source`, `read`, `trap` ... may make, leaves the variable unknown; a
 * variable never assigned in the script comes from the environment. A word
 * holding a variable not known is a place not known, whose hint says so
 * (`$DIR/ (from the environment)`).
 *
 * Also the shell options that change what `cd` and pipelines do
 * (`cdable_vars`, `autocd`, `CDPATH`, `lastpipe`), looked for in the script.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Cwds } from './cwd.js';
import type { JudgeContext, Word } from './words.js';

/**
 * A variable's value as far as it is known: its text, or the places a loop
 * variable ranges over (`for f in src/*.ts`: `src`; `literal`: each a word
 * written in the loop, so an unquoted use is not split), or null: not known.
 */
export type VariableValue = { text: string } | { places: string[]; literal: boolean } | null;

/** The state of one shell the judge follows: its variables, and whether a function or `eval` may have changed any. */
export interface ShellState {
  /** Variables assigned in the script so far; absent: never assigned here (from the environment). */
  vars: Map<string, VariableValue>;
  /** A function call, `eval` or `source` ran: a variable never assigned here may have been, so is not "from the environment". */
  opaque: boolean;
}

/** The shell state of a context, made on first use (a child shell, `bash -c`, gets a new one: `childShell`). */
export function shellOf(ctx: JudgeContext): ShellState {
  ctx.shell ??= { vars: new Map(), opaque: false };
  return ctx.shell;
}

/** A new shell state for a child shell (`bash -c`): it knows none of its parent's unexported variables. */
export function childShell(): ShellState {
  return { vars: new Map(), opaque: false };
}

/** A copy of the variables, to restore after a subshell or to start each branch from. */
export function snapshot(ctx: JudgeContext): Map<string, VariableValue> {
  return new Map(shellOf(ctx).vars);
}

/** Restores variables saved by `snapshot` (after a subshell: its assignments do not leak). */
export function restore(ctx: JudgeContext, saved: Map<string, VariableValue>): void {
  shellOf(ctx).vars = new Map(saved);
}

/** Records an assignment that surely ran: the value (null when not known). */
export function setVariable(ctx: JudgeContext, name: string, value: VariableValue): void {
  shellOf(ctx).vars.set(name, value);
}

/** After a function call, `eval`, `source`: every variable may have changed. */
export function forgetVariables(ctx: JudgeContext): void {
  const state = shellOf(ctx);
  for (const name of state.vars.keys()) state.vars.set(name, null);
  state.opaque = true;
}

/** Marks names as not known (assigned in a branch, loop or conditional part, which may or may not have run). */
export function forgetNames(ctx: JudgeContext, names: Iterable<string>): void {
  const vars = shellOf(ctx).vars;
  for (const name of names) vars.set(name, null);
}

/**
 * Names a subtree may assign: `X=v` (and `X[i]=v`), declarations, `for X`,
 * `read X`-style operands are left to `taintedNames`.
 */
export function assignedNames(node: SyntaxNode, ctx: JudgeContext): Set<string> {
  const names = new Set<string>();
  const stack: SyntaxNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.type === 'variable_assignment') {
      let name = current.childForFieldName('name');
      if (name?.type === 'subscript') name = name.childForFieldName('name');
      if (name !== null) names.add(ctx.source.slice(name.startIndex, name.endIndex));
    } else if (
      current.type === 'variable_name' &&
      (current.parent?.type === 'for_statement' || current.parent?.type === 'declaration_command')
    ) {
      names.add(ctx.source.slice(current.startIndex, current.endIndex)); // for X, declarations' bare names
    } else if (current.type === 'word' && current.parent?.type === 'declaration_command') {
      const match = /^([A-Za-z_]\w*)/.exec(ctx.source.slice(current.startIndex, current.endIndex));
      if (match !== null) names.add(match[1]!);
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
  }
  return names;
}

/** Builtins that change variables in ways not followed here: any script with one of them knows no variable it may name. */
const INDIRECT = /\b(read|mapfile|readarray|getopts|printf|let|eval|source|unset|select|wait)\b|\(\(|\$\{[A-Za-z_]\w*:?=|(^|[\s;&|(])\.\s/;

/** Declarations with attributes that change values (`-i`, `-l`, `-u`, `-n`, `-r`, arrays) or readonly, and traps: no variable is known. */
const NO_VARIABLES = /\b(trap|readonly)\b|\b(declare|typeset|local|export)\s+(-\w+\s+)*[-+]\w*[ilucnrAa]/;

/** The last script `variablesKnowable` looked at, and its answer (searched once per script, not once per word). */
let knowableMemo: { source: string; names: RegExpExecArray | null; none: boolean } | null = null;

/**
 * Whether a variable's value can be followed in this script: not when the
 * script has a trap, readonly or a declaration attribute (`declare -i`), nor
 * when a builtin that assigns by name (`read`, `printf -v`, `(( ))`,
 * `${X:=v}`, `source`) appears anywhere in it with that name.
 */
function variablesKnowable(ctx: JudgeContext, name: string): boolean {
  const source = ctx.source;
  if (knowableMemo?.source !== source) knowableMemo = { source, names: null, none: NO_VARIABLES.test(source) };
  if (knowableMemo.none) return false;
  if (!INDIRECT.test(source)) return true;
  // a builtin that assigns by name is somewhere in the script: the name must not follow it on its line
  const escaped = name.replace(/[^\w]/g, '');
  const use = new RegExp(
    `(\\b(read|mapfile|readarray|getopts|printf|let|eval|source|unset|select|wait)\\b|\\(\\(|(^|[\\s;&|(])\\.\\s)[^\\n;&|]*\\b${escaped}\\b|\\$\\{${escaped}:?=`,
  );
  return !use.test(source) && !/\beval\b|\bsource\b|(^|[\s;&|(])\.\s/.test(source);
}

/** Variables the shell sets itself, that no environment gives: a word naming one is not known, but not "from the environment". */
const SHELL_SET = new Set([
  'OLDPWD',
  'RANDOM',
  'SRANDOM',
  'SECONDS',
  'LINENO',
  'PPID',
  'UID',
  'EUID',
  'BASHPID',
  'EPOCHSECONDS',
  'EPOCHREALTIME',
  'REPLY',
  'OPTARG',
  'OPTIND',
  'BASH_REMATCH',
  'PIPESTATUS',
  'FUNCNAME',
]);

/** The name an expansion node reads (`$X`, `${X}`, `${X:-w}`), or null for another one (`$1`, `${#X}`, `${X[0]}`, `$(...)`). */
export function expandedName(node: SyntaxNode, ctx: JudgeContext): string | null {
  const text = ctx.source.slice(node.startIndex, node.endIndex);
  const match = node.type === 'simple_expansion' ? /^\$([A-Za-z_]\w*)$/.exec(text) : /^\$\{([A-Za-z_]\w*)(?:(:?-)[^}]*)?\}$/.exec(text);
  return match === null ? null : match[1]!;
}

/**
 * The value of `$X`, `${X}` or `${X:-w}` when the script assigned X a known
 * value that surely ran (a `${X:-w}` only when that value is not empty);
 * `quoted`: inside double quotes (else a value that would be split or
 * globbed, or a loop's glob places, is not known). `$PWD` is the directory
 * the shell is in when that is one known directory and the script never
 * assigns PWD. Null otherwise.
 */
export function resolveExpansion(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, quoted: boolean): Word | null {
  if (node.type !== 'simple_expansion' && node.type !== 'expansion') return null;
  const name = expandedName(node, ctx);
  if (name === null || !variablesKnowable(ctx, name)) return null;
  const state = shellOf(ctx);
  const value = state.vars.get(name);
  if (value === undefined) {
    if (name === 'PWD' && !state.opaque && cwds.length === 1 && cwds[0] != null) {
      return { text: cwds[0] === '' ? '.' : cwds[0], optionLike: false, pattern: false };
    }
    return null;
  }
  if (value === null) return null;
  if ('text' in value) {
    const text = value.text;
    if (node.type === 'expansion' && text === '' && /:-/.test(ctx.source.slice(node.startIndex, node.endIndex))) return null;
    if (!quoted && (/[\s*?[\]{}\\'"]/.test(text) || text === '')) return null; // split, globbed or removed: not one word known
    return { text, optionLike: text.startsWith('-'), pattern: false };
  }
  if (!quoted && !value.literal) return null; // a file name with a blank is split
  const hint = ctx.source.slice(node.startIndex, node.endIndex);
  // A glob at the start (`for f in *`: a file named `-rf`) or a literal option word may be taken as an option.
  const optionLike = value.places.some((place) => place === '.' || place.startsWith('-'));
  return { text: null, optionLike, pattern: false, hint, places: value.places };
}

/**
 * The hint of a word not known, for its unknown place (`unknownPlace`): the
 * word as written without quotes, and ` (from the environment)` when it
 * reads a variable the script never assigned.
 */
export function hintOf(node: SyntaxNode, ctx: JudgeContext): string {
  const written = ctx.source.slice(node.startIndex, node.endIndex).replace(/["']/g, '');
  const state = shellOf(ctx);
  const stack: SyntaxNode[] = [node];
  while (stack.length > 0) {
    const current = stack.pop()!;
    if (current.type === 'command_substitution' || current.type === 'process_substitution') continue;
    if (current.type === 'simple_expansion' || current.type === 'expansion') {
      const name = expandedName(current, ctx);
      if (name !== null && !state.opaque && !state.vars.has(name) && !SHELL_SET.has(name) && name !== 'PWD') {
        return `${written} (from the environment)`;
      }
    }
    for (const child of current.namedChildren) if (child !== null) stack.push(child);
  }
  return written;
}

/** The shell options the script may set that change where `cd` goes or which shell runs a pipeline's last command. */
export interface CdOptions {
  /** `shopt -s cdable_vars`: `cd NAME` may go to `$NAME`. */
  cdableVars: boolean;
  /** `CDPATH` assigned in the script: `cd rel` (not `./`, `../`) may go to a directory under any of its entries. */
  cdpath: boolean;
  /** `shopt -s autocd`: a command that is a directory's name changes to it. */
  autocd: boolean;
  /** `shopt -s lastpipe`: the last command of a pipeline runs in the shell itself (its `cd` and assignments stay). */
  lastpipe: boolean;
}

/** The options a script may set (looked for anywhere in it: where it sets them is not followed, so anywhere counts). */
export function cdOptions(source: string): CdOptions {
  return {
    cdableVars: /\bcdable_vars\b/.test(source),
    cdpath: /\bCDPATH\b/.test(source),
    autocd: /\bautocd\b/.test(source),
    lastpipe: /\blastpipe\b/.test(source),
  };
}
