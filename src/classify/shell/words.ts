/**
 * The words of a simple command as far as they are known before it runs
 * (DESIGN.md §5.5): quoting removed, expansions and substitutions marked
 * unknown (and the commands inside them judged), globs and brace expansions
 * kept as patterns, and whether a word may be taken for an option. Also the
 * judge's context, which every file of the judge is handed.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Classification } from '../classification.js';
import type { Cwds, Outcome } from './cwd.js';
import { MAX_SHELL_NODE_DEPTH, MAX_SHELL_WORK, TooBig, TooDeep } from './limits.js';
import { mayDotglob, patternPlaces } from './expansions.js';
import type { PipeInput } from './producers.js';
import type { CompiledTable } from './table-compile.js';
import { hintOf, resolveExpansion, type ShellState } from './variables.js';

/** A word of a simple command, as far as it is known before the command runs. */
export interface Word {
  /** The word's value; null when it depends on an expansion or substitution. */
  text: string | null;
  /** Its value may start with '-' and be taken as an option (a dynamic start, an unquoted glob or brace). */
  optionLike: boolean;
  /** An unquoted glob or brace expansion: `text` is a pattern, kept as written. */
  pattern: boolean;
  /** For a word only known when it runs (`text` null): its start as written, when known (`https://` of `"https://$host/x"`). */
  prefix?: string;
  /**
   * For a word only known when it runs: how it is shown in an unknown place
   * (`unknownPlace`): as written without quotes, `$DIR/ (from the environment)`.
   */
  hint?: string;
  /**
   * For a word only known when it runs: the paths it is at or under, as
   * written (relative to the directory of the command using it): a find root
   * for `{}`, a glob's directory for a loop variable, each word of a brace
   * expansion. Absent: not known, an unknown place named by `hint`.
   */
  places?: string[];
}

/** A simple command as words (the first is its name), and whether more arguments only known when it runs are appended (xargs). */
export interface Argv {
  words: Word[];
  unknownArgs: boolean;
  /** What it reads on its input when its redirections say so (a here-document's text); null or absent: not known. */
  stdin?: string | null;
}

/**
 * The judge's recursive steps, reached through the context: the files of
 * the judge call each other in a circle (a word holds a substitution, which
 * holds commands, whose words hold substitutions; a wrapper runs a command,
 * `bash -c` a script), and calling these through the context keeps their
 * imports one-way. index.ts sets them.
 */
export interface JudgeSteps {
  /** Judges every command inside an expression (`walk`, judge.ts). */
  walk: (node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number) => void;
  /** Judges one statement (`judgeStatement`, judge.ts). */
  statement: (node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number) => Outcome;
  /** Judges a simple command given as words (`judgeArgv`, argv.ts). */
  argv: (argv: Argv, cwds: Cwds, ctx: JudgeContext, depth: number) => void;
  /** Parses a script string and judges it in a child shell, bash -c and eval (`judgeScript`, parse.ts). */
  script: (script: string, cwds: Cwds, ctx: JudgeContext, depth: number) => void;
}

/** What judging one call carries along: the table, the parts found so far, the bounds on work, the source being walked. */
export interface JudgeContext {
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
  steps: JudgeSteps;
  /** The shell being followed: its variables (`variables.ts`); made on first use, a new one for a child shell. */
  shell?: ShellState;
  /**
   * The paths the command judged next reads as input arguments (xargs after
   * `find ROOT -print0`), as written; null: input not known. Set by the
   * pipeline for the command after a producer, taken by xargs.
   */
  pipeInput?: PipeInput | null;
  /** Symbolic links created earlier in this call that lead out of their directory (canonical): paths under them are not known. */
  links?: string[];
}

/** A node's text. */
export function textOf(node: SyntaxNode, ctx: JudgeContext): string {
  return ctx.source.slice(node.startIndex, node.endIndex);
}

/** A word's text without quoting, for messages. */
export function show(word: Word | undefined): string {
  return word?.text ?? '(expansion)';
}

/** An unquoted word's value: a backslash quotes the next character; a backslash-newline is removed. */
function unescapeUnquoted(raw: string): string {
  return raw.includes('\\') ? raw.replace(/\\(\n|[\s\S])/g, (_m, c: string) => (c === '\n' ? '' : c)) : raw;
}

/** Double-quoted text's value: a backslash quotes only `$`, backtick, `"`, `\` and newline. */
function unescapeDouble(raw: string): string {
  return raw.includes('\\') ? raw.replace(/\\([$`"\\\n])/g, (_m, c: string) => (c === '\n' ? '' : c)) : raw;
}

/** An unquoted word that the shell expands: a glob (`*`, `?`, `[...]`) or a brace expansion (`{a,b}`, `{1..3}`). */
export function isPattern(raw: string): boolean {
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

/**
 * Whether a glob may expand to a word starting with '-' (an option, to the
 * program): it starts with '-' itself (`-o/p?`: left as written when nothing
 * matches), or with a wildcard that may match a file named `-rf`.
 */
function globMayBeOption(text: string, raw: string): boolean {
  return text.startsWith('-') || /^[*?[{]/.test(raw);
}

const STATIC: Word = { text: '', optionLike: false, pattern: false };

/** A word only known when the command runs, which may start with '-'. */
export const DYNAMIC: Word = { text: null, optionLike: true, pattern: false };

/** A word known as written (quoted, or from an argv array). */
export function staticWord(text: string): Word {
  return { ...STATIC, text };
}

/** A script that may set HOME: an assignment, or a builtin that takes the name. */
const SETS_HOME =
  /\bHOME\s*:?\+?=|\b(read|declare|typeset|export|local|readonly|printf|mapfile|readarray|unset|getopts|let|eval)\b[^\n;&|]*\bHOME\b/;

/**
 * `$HOME` or `${HOME}`, in a script that never sets HOME: the home
 * directory, `~` (so `rm -rf "$HOME/.ssh"` names `~/.ssh` rather than
 * nothing). Null otherwise. Only at the start of a word (`startsWord`).
 */
function homeOf(node: SyntaxNode, ctx: JudgeContext): Word | null {
  if (node.type !== 'simple_expansion' && node.type !== 'expansion') return null;
  const text = textOf(node, ctx);
  if (text !== '$HOME' && text !== '${HOME}') return null;
  return setsHome(ctx.source) ? null : staticWord('~');
}

/** The last script `setsHome` looked at, and its answer: a script with many `$HOME` is searched once, not once for each. */
let homeMemo: { source: string; sets: boolean } | null = null;

/** Whether a script may set HOME (`SETS_HOME`). */
function setsHome(source: string): boolean {
  if (homeMemo?.source !== source) homeMemo = { source, sets: SETS_HOME.test(source) };
  return homeMemo.sets;
}

/**
 * Whether a node starts the word it is part of: anything but a later part of
 * a concatenation (`a$HOME`, `x"$HOME"`, where `$HOME` is not the home
 * directory `homeOf` makes it).
 */
function startsWord(node: SyntaxNode): boolean {
  const parent = node.parent;
  return parent?.type !== 'concatenation' || parent.firstNamedChild?.equals(node) === true;
}

/** A double-quoted string's value (`"$HOME/x"`, `"a $(b)"`); the substitutions inside it are judged. */
function stringWord(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Word {
  let text: string | null = '';
  let lead = '';
  let first: Word | null = null;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    let part: Word;
    const home = first === null ? homeOf(child, ctx) : null;
    if (home !== null && startsWord(node)) part = home;
    else if (child.type === 'string_content') part = staticWord(unescapeDouble(textOf(child, ctx)));
    else if (child.type === 'string') part = wordOf(child, cwds, ctx, depth + 1);
    else {
      ctx.steps.walk(child, cwds, ctx, depth + 1);
      part = resolveExpansion(child, cwds, ctx, true) ?? DYNAMIC;
    }
    first ??= part;
    if (text !== null) lead = part.text === null ? text + (part.prefix ?? '') : lead;
    text = text === null || part.text === null ? null : text + part.text;
  }
  if (text !== null) return staticWord(text);
  const prefix = first?.text ?? '';
  const optionLike = first === null ? false : prefix === '' ? first.optionLike : prefix.startsWith('-');
  const places = placesOfParts(node.namedChildren, cwds, ctx);
  return { text: null, pattern: false, optionLike, prefix: lead, ...(places === null ? {} : { places }) };
}

/**
 * The places of a word made of parts, when its first part stands for places
 * (a loop variable, `"$f"`) and the rest is plain text that cannot climb
 * (`"$f"/x`, not `"$f"/..`): the same places. Null otherwise.
 */
function placesOfParts(children: readonly (SyntaxNode | null)[], cwds: Cwds, ctx: JudgeContext): string[] | null {
  const parts = children.filter((c): c is SyntaxNode => c !== null);
  const head = parts[0];
  if (head === undefined) return null;
  const quoted = head.parent?.type === 'string';
  const first = resolveExpansion(head, cwds, ctx, quoted) ?? (head.type === 'string' ? stringPlaces(head, cwds, ctx) : null);
  if (first?.places === undefined) return null;
  const rest = parts
    .slice(1)
    .map((part) => (part.type === 'string_content' || part.type === 'word' || part.type === 'raw_string' ? textOf(part, ctx) : null));
  if (rest.some((text) => text === null || /(^|\/)\.\.(\/|$)|[*?[{$`\\]/.test(text))) return null;
  return first.places;
}

/** A double-quoted string's places (`"$f"`), without judging it again. */
function stringPlaces(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext): Word | null {
  const places = placesOfParts(node.namedChildren, cwds, ctx);
  return places === null ? null : { text: null, optionLike: false, pattern: false, places };
}

/** The unquoted parts of a concatenation as written, joined (quoted parts dropped): what bash may glob or brace-expand. */
function unquotedText(node: SyntaxNode, ctx: JudgeContext): string {
  return node.namedChildren
    .filter((child) => child !== null && ['word', 'brace_expression', 'extglob_pattern'].includes(child.type))
    .map((child) => textOf(child!, ctx))
    .join('');
}

/** Parts written together as one word (`a"b"$c`): known when every part is. */
function concatenationWord(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Word {
  let text: string | null = '';
  let prefix = '';
  let firstDynamic: Word | null = null;
  let pattern = false;
  let unquoted = false;
  for (const child of node.namedChildren) {
    if (child === null) continue;
    const part = wordValue(child, cwds, ctx, depth + 1); // the whole word's pattern is looked at by `wordOf`
    if (part.pattern) pattern = true;
    if (child.type === 'word') unquoted = true;
    if (firstDynamic === null) {
      if (part.text === null) firstDynamic = part;
      prefix += part.text ?? part.prefix ?? '';
    }
    text = text === null || part.text === null ? null : text + part.text;
  }
  // `{a,b}` is split by the grammar into `{`, `a,b`, `}`: look at the unquoted parts together (`--include='*.ts'` is no glob).
  const raw = textOf(node, ctx);
  if (unquoted && isPattern(unquotedText(node, ctx))) pattern = true;
  const optionLike =
    prefix.startsWith('-') ||
    (prefix === '' && firstDynamic !== null && firstDynamic.optionLike) ||
    (pattern && globMayBeOption(text ?? prefix, raw));
  if (text === null) {
    const places = pattern ? null : placesOfParts(node.namedChildren, cwds, ctx);
    return { text, pattern, optionLike, prefix, ...(places === null ? {} : { places }) };
  }
  return { text, pattern, optionLike };
}

/**
 * A word's value as far as it is known; every substitution inside it is
 * judged (through `ctx.steps.walk`).
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH`, TooBig past `MAX_SHELL_WORK` (the entry point turns both into a write).
 */
export function wordOf(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Word {
  const word = wordValue(node, cwds, ctx, depth);
  if (word.pattern && word.text !== null) {
    // A glob or brace expansion: the paths it makes, or a place not known (`{.,x}.`, `.?`, `.[.]` may make `..`).
    // `--glob=*.rs` stays an option with a pattern value (parse-args looks at it).
    if (word.text.startsWith('-')) return word;
    // Quoted parts or backslashes: which characters are wildcards is not followed here, the paths are not known.
    const raw = textOf(node, ctx);
    const plain = raw === word.text && !/[\\'"$`]/.test(raw);
    const places = plain ? patternPlaces(word.text, mayDotglob(ctx.source)) : null;
    const hint = raw.replace(/["']/g, '');
    return { text: null, pattern: false, optionLike: word.optionLike, hint, ...(places === null ? {} : { places }) };
  }
  if (word.text !== null || word.hint !== undefined) return word;
  return { ...word, hint: hintOf(node, ctx) };
}

/** `wordOf` before patterns and hints are looked at. */
function wordValue(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Word {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (++ctx.work.done > MAX_SHELL_WORK) throw new TooBig();
  switch (node.type) {
    case 'word': {
      const raw = textOf(node, ctx);
      const text = unescapeUnquoted(raw);
      const pattern = isPattern(raw);
      return { text, pattern, optionLike: pattern && globMayBeOption(text, raw) };
    }
    case 'raw_string':
      return staticWord(textOf(node, ctx).slice(1, -1));
    case 'string':
    case 'translated_string':
      return stringWord(node, cwds, ctx, depth);
    case 'concatenation':
      return concatenationWord(node, cwds, ctx, depth);
    case 'number':
      if (node.namedChildCount === 0) return staticWord(textOf(node, ctx));
      ctx.steps.walk(node, cwds, ctx, depth + 1);
      return DYNAMIC;
    case 'brace_expression':
    case 'extglob_pattern': {
      const raw = textOf(node, ctx);
      return { text: raw, pattern: true, optionLike: globMayBeOption(raw, raw) };
    }
    case 'process_substitution':
      ctx.steps.walk(node, cwds, ctx, depth + 1);
      // `/dev/fd/N`, a pipe to commands judged on their own: no place of its own
      return { text: null, pattern: false, optionLike: false, places: [] };
    default: {
      // $X, ${X...}, $(...), `...`, $((...)), $'...', arrays: only known when it runs ($HOME starting a word: `homeOf`).
      ctx.steps.walk(node, cwds, ctx, depth + 1);
      const home = homeOf(node, ctx);
      if (home !== null && startsWord(node)) return home;
      return resolveExpansion(node, cwds, ctx, false) ?? DYNAMIC;
    }
  }
}
