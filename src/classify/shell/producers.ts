/**
 * Paths known only when the command runs, resolved from what produces them
 * (DESIGN.md §5.1, §5.5): the words a `for` loop's variable ranges over,
 * and the paths a pipeline's producer prints for `xargs` to append
 * (`find ROOT -print0 | xargs -0 rm`: under ROOT). Read from the source as
 * written; anything but plain words is not known.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { unknownPlace } from '../../../machines/safety.targets.js';
import type { Cwds } from './cwd.js';
import { mayDotglob, patternPlaces } from './expansions.js';
import { fieldedChildren } from './syntax.js';
import type { VariableValue } from './variables.js';
import { isPattern, textOf, type JudgeContext } from './words.js';

/**
 * What a pipeline's producer prints, as xargs reads it: the places every
 * printed path is at or under (as written, relative to the pipeline's
 * directory), and whether the paths are NUL-separated (`-print0`), so that
 * `xargs -0` takes each whole. Separated by newlines, a name with a blank or
 * newline is split into words that may be anything (`..`).
 */
export interface PipeInput {
  places: string[];
  nul: boolean;
}

/** A plain word's value, or null: quoted words without expansions are values; expansions, substitutions are not known here. */
function plainWord(node: SyntaxNode, ctx: JudgeContext): string | null {
  const raw = textOf(node, ctx);
  if (node.type === 'raw_string') return raw.slice(1, -1);
  if (node.type === 'string' && node.namedChildren.every((c) => c?.type === 'string_content') && !raw.includes('\\')) {
    return raw.slice(1, -1);
  }
  if (node.type === 'word' && !/[\\$`'"]/.test(raw)) return raw;
  return null;
}

/** A simple command's name and arguments as plain words; null when any is not plain, or it has redirections. */
function plainCommand(node: SyntaxNode, ctx: JudgeContext): { name: string; args: { text: string; glob: boolean }[] } | null {
  if (node.type !== 'command') return null;
  let name: string | null = null;
  const args: { text: string; glob: boolean }[] = [];
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) continue;
    if (field === 'name') name = plainWord(child.firstNamedChild ?? child, ctx);
    else if (field === 'argument') {
      const text = plainWord(child, ctx);
      if (text === null) return null;
      args.push({ text, glob: child.type === 'word' && isPattern(textOf(child, ctx)) });
    } else return null; // an assignment, a redirection: not followed
  }
  return name === null ? null : { name, args };
}

/** find's expression words that print something other than the found paths, or run commands that may print. */
const FIND_OTHER_OUTPUT = new Set(['-printf', '-fprintf', '-ls', '-fls', '-exec', '-execdir', '-ok', '-okdir', '-fprint', '-fprint0']);

/** `find [-H|-L|-P|-O…|-D x] ROOT… EXPR`: its roots and whether it prints NUL-separated paths only; null otherwise. */
function findOutput(args: { text: string; glob: boolean }[], dotglob: boolean): PipeInput | null {
  let i = 0;
  while (i < args.length && /^-(H|L|P|O\d*|D)$/.test(args[i]!.text)) i += args[i]!.text === '-D' ? 2 : 1;
  const places: string[] = [];
  for (; i < args.length; i++) {
    const { text, glob } = args[i]!;
    if (/^[-(!),]/.test(text)) break;
    const found = glob ? patternPlaces(text, dotglob) : [text];
    places.push(...(found ?? [unknownPlace(text)]));
  }
  const expression = args.slice(i).map((a) => a.text);
  if (expression.some((word) => FIND_OTHER_OUTPUT.has(word))) return null;
  const nul = expression.includes('-print0') && !expression.includes('-print');
  return { places: places.length === 0 ? ['.'] : places, nul };
}

/** ls options that print names only (no long format: a symlink's `-> /target` would be an argument too). */
const LS_NAMES_ONLY = /^-[1ARrtSUXvcuhkFp]+$/;

/**
 * `ls DIR…`: it prints the names in DIR without DIR before them, so xargs
 * resolves them in the working directory (`.`); with `-d`, the operands as
 * written. `-a` prints `..`: not known. Never NUL-separated.
 */
function lsOutput(args: { text: string; glob: boolean }[], dotglob: boolean): PipeInput | null {
  const options = args.filter((a) => a.text.startsWith('-') && a.text !== '-');
  const operands = args.filter((a) => !a.text.startsWith('-') || a.text === '-');
  const directory = options.some((o) => o.text === '-d' || o.text === '--directory');
  if (options.some((o) => o.text !== '-d' && o.text !== '--directory' && !LS_NAMES_ONLY.test(o.text))) return null;
  if (!directory) return { places: ['.'], nul: false };
  const places: string[] = [];
  for (const { text, glob } of operands) places.push(...((glob ? patternPlaces(text, dotglob) : [text]) ?? [unknownPlace(text)]));
  return { places: places.length === 0 ? ['.'] : places, nul: false };
}

/**
 * What a pipeline element prints for the next one to take as arguments
 * (`find ROOT`, `ls DIR`), or null when not known (`cat list`, `git
 * ls-files`, `echo $X`).
 */
export function pipeProducer(node: SyntaxNode, _cwds: Cwds, ctx: JudgeContext): PipeInput | null {
  const command = plainCommand(node, ctx);
  if (command === null) return null;
  const dotglob = mayDotglob(ctx.source);
  if (command.name === 'find') return findOutput(command.args, dotglob);
  if (command.name === 'ls') return lsOutput(command.args, dotglob);
  return null;
}

/**
 * The value of a `for` loop's variable (`for f in WORDS`): the places its
 * words stand for (a glob's directory, each literal word, each word of a
 * brace expansion); `literal` when every word is plain and unquoted without
 * a wildcard, so `$f` unquoted is not split. Null when a word is only known
 * when it runs (`$(ls)`, `$X`) or the loop has no words (`for f; do`: the
 * positional parameters).
 */
export function loopValue(node: SyntaxNode, ctx: JudgeContext): VariableValue {
  const values = node.childrenForFieldName('value').filter((c): c is SyntaxNode => c !== null);
  if (values.length === 0) return null;
  const dotglob = mayDotglob(ctx.source);
  const places: string[] = [];
  let literal = true;
  for (const value of values) {
    const text = plainWord(value, ctx);
    if (text === null) return null;
    const expanded = value.type === 'word' && isPattern(textOf(value, ctx));
    if (expanded || value.type !== 'word') literal = false;
    const found = expanded ? patternPlaces(text, dotglob) : [text];
    if (found === null) return null;
    for (const place of found) if (!places.includes(place)) places.push(place);
  }
  return { places, literal };
}
