/**
 * Variable names bash resolves when a command runs (DESIGN.md §5.5), where
 * text the parser sees as data becomes code or an assignment:
 *
 * - Declarations (`export`, `declare`, `local`, `readonly`, `typeset`) take
 *   their words after expansion and quote removal: `export "BASH_ENV=x"`,
 *   `export BASH_EN\V=x` and `export B"A"SH_ENV=x` assign `BASH_ENV`, and
 *   `declare "$x=1"` assigns whatever `$x` names (an array element whose
 *   subscript runs a command substitution). A name only known when it runs,
 *   a subscript bash evaluates, and a name reference (`declare -n`, which
 *   makes later assignments change another variable) are writes.
 * - Builtins that take a variable name as an operand (`test -v`, `[ -v`,
 *   `read`, `mapfile`, `getopts`, `unset`) evaluate its subscript: a name
 *   only known when it runs, or with a subscript that is not a number, is a
 *   write.
 * - `${NAME:=word}` and `${NAME=word}` assign NAME: judged as an assignment.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Classification } from '../classification.js';
import { assignmentPart, exportPart, judgeAssignment, type AssignmentScope } from './assignment.js';
import type { Cwds } from './cwd.js';
import { minorReadPart, writePart } from './parts.js';
import { setVariable } from './variables.js';
import { SHELL_REASONS } from './reasons.js';
import { DYNAMIC, staticWord, textOf, wordOf, type JudgeContext, type Word } from './words.js';

/** A name bash takes as an array element whose subscript it evaluates (`a[i]`, `a[$(x)]`; not `a[0]`, `a[@]`). */
function evaluatesSubscript(text: string): boolean {
  const match = /^[A-Za-z_][A-Za-z0-9_]*\[([\s\S]*)\]/.exec(text);
  return match !== null && !/^\s*(\d+|@|\*)\s*$/.test(match[1]!);
}

/** Why a word given as a variable name to `command` is a write (only known when it runs, or a subscript evaluated), or null. */
function nameProblem(command: string, word: Word, raw: string): string | null {
  if (word.text === null || word.pattern) return SHELL_REASONS['dynamic-variable-name'](command, raw);
  if (evaluatesSubscript(word.text)) return SHELL_REASONS['evaluated-subscript'](command, raw);
  return null;
}

/** Builtins whose every operand may be a variable name they assign or remove. */
const NAME_OPERANDS = new Set(['read', 'mapfile', 'readarray', 'getopts', 'unset']);

/**
 * Why a simple command's words give bash a variable name it evaluates (a
 * `SHELL_REASONS` string), or null: `test`/`[` with `-v NAME` (or a word
 * only known when it runs, which may be `-v`, followed by another), and
 * `read`, `mapfile`, `readarray`, `getopts`, `unset` with a name only known
 * when it runs or an evaluated subscript (DESIGN.md §5.5).
 */
export function variableNameProblem(command: string, args: readonly Word[]): string | null {
  if (command === 'test' || command === '[') {
    const operands = command === '[' && args.at(-1)?.text === ']' ? args.slice(0, -1) : args;
    for (let i = 0; i + 1 < operands.length; i++) {
      const word = operands[i]!;
      const takesName = word.text === null || word.pattern || word.text === '-v' || word.text === '-R';
      const next = operands[i + 1]!;
      const problem = takesName ? nameProblem(command, next, next.text ?? '(expansion)') : null;
      if (problem !== null) return problem;
    }
    return null;
  }
  if (!NAME_OPERANDS.has(command)) return null;
  for (const word of args) {
    const problem = nameProblem(command, word, word.text ?? '(expansion)');
    if (problem !== null) return problem;
  }
  return null;
}

/** `[[ -v NAME ]]`, `[[ -R NAME ]]`: why the operand is a write (only known when it runs, an evaluated subscript), or null. */
export function testOperandProblem(node: SyntaxNode, source: string): string | null {
  const match = /\s-[vR]\s+(\S+)/.exec(source.slice(node.startIndex, node.endIndex));
  if (match === null) return null;
  const operand = match[1]!;
  if (/^[A-Za-z_][A-Za-z0-9_]*(\[\s*(\d+|@|\*)\s*\])?$/.test(operand)) return null;
  const opener = node.children[0]?.type ?? '[[';
  return operand.includes('$') || /['"\\`]/.test(operand)
    ? SHELL_REASONS['dynamic-variable-name'](opener, operand)
    : SHELL_REASONS['evaluated-subscript'](opener, operand);
}

/** `${NAME:=word}`, `${NAME=word}`: the part of the assignment it makes, or null for any other expansion. */
export function expansionAssignment(node: SyntaxNode, ctx: JudgeContext): Classification | null {
  if (node.type !== 'expansion') return null;
  let name: string | null = null;
  for (const child of node.children) {
    if (child === null) continue;
    if (name === null && (child.type === 'variable_name' || child.type === 'subscript')) {
      const base = child.type === 'subscript' ? child.childForFieldName('name') : child;
      name = base === null ? '' : textOf(base, ctx);
    } else if (name !== null && (child.type === '=' || child.type === ':=')) {
      return assignmentPart(name, null, ctx);
    } else if (child.isNamed || child.type !== '${') return null;
  }
  return null;
}

/** The value of a declaration word written as several nodes (`B"A"SH_ENV=1`, which the tree splits after `B`). */
function groupWord(group: readonly SyntaxNode[], cwds: Cwds, ctx: JudgeContext, depth: number): Word {
  let text: string | null = '';
  let pattern = false;
  for (const node of group) {
    let part: Word;
    if (node.type === 'variable_name') part = staticWord(textOf(node, ctx));
    else if (node.type === 'variable_assignment') {
      ctx.steps.walk(node, cwds, ctx, depth + 1);
      part = DYNAMIC;
    } else part = wordOf(node, cwds, ctx, depth + 1);
    pattern ||= part.pattern;
    text = text === null || part.text === null ? null : text + part.text;
  }
  return { text, pattern, optionLike: false };
}

/** Declaration builtins whose `-n` makes a name reference. */
const NAMEREF_COMMANDS = new Set(['declare', 'typeset', 'local']);

/** A declaration being judged: its builtin, and where its values go (`export`, `declare -x`: programs' environment). */
interface Declaration {
  command: string;
  scope: AssignmentScope;
}

/** Whether a declaration puts its variables in programs' environment: `export`, or an option word with `x` (`declare -x`, `-gx`). */
function scopeOf(command: string, groups: readonly SyntaxNode[][], ctx: JudgeContext): AssignmentScope {
  const options = groups.map((group) => ctx.source.slice(group[0]!.startIndex, group.at(-1)!.endIndex).replace(/['"\\]/g, ''));
  if (command === 'export') return options.some((word) => /^-[a-zA-Z]*n/.test(word)) ? 'shell' : 'environment';
  return options.some((word) => /^-[a-zA-Z]*x/.test(word)) ? 'environment' : 'shell';
}

/** Judges one word of a declaration (after quote removal): an option, a name (exported: its value), or an assignment. */
function judgeDeclarationWord(declaration: Declaration, word: Word, raw: string, ctx: JudgeContext): void {
  const { command, scope } = declaration;
  const problem = nameProblem(command, word, raw);
  if (problem !== null) {
    ctx.parts.push(writePart([], false, problem));
    return;
  }
  const text = word.text!;
  if (/^[-+]/.test(text)) {
    if (NAMEREF_COMMANDS.has(command) && text.slice(1).includes('n')) {
      ctx.parts.push(writePart([], false, SHELL_REASONS.nameref(command, text)));
    }
    return;
  }
  const match = /^([A-Za-z_][A-Za-z0-9_]*)(\[[^\]]*\])?(?:(\+?=)([\s\S]*))?$/.exec(text);
  if (match === null) {
    ctx.parts.push(writePart([], false, SHELL_REASONS['declaration-word'](command, raw)));
    return;
  }
  if (match[3] !== undefined) ctx.parts.push(assignmentPart(match[1]!, match[3] === '+=' ? null : match[4]!, ctx, scope));
  else if (scope === 'environment') ctx.parts.push(exportPart(match[1]!, ctx));
  if (match[3] !== undefined || command !== 'export') setVariable(ctx, match[1]!, null); // `export "D=x"`, `local D`: not followed
}

/**
 * Judges a declaration command (`export`, `declare`, `local`, `readonly`,
 * `typeset`; DESIGN.md §5.5): its assignments as assignments, its other
 * words as bash reads them after expansion and quote removal (words the
 * tree splits but bash reads as one, `B"A"SH_ENV=1`, joined). A name only
 * known when it runs, an evaluated subscript, a name reference (`-n`) or a
 * word that is no declaration is a write that names the word.
 */
export function judgeDeclaration(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  const command = node.children[0]?.type ?? 'declare';
  const groups: SyntaxNode[][] = [];
  for (const child of node.namedChildren) {
    if (child === null || child.type === 'comment') continue;
    const last = groups.at(-1);
    if (last !== undefined && last.at(-1)!.endIndex === child.startIndex) last.push(child);
    else groups.push([child]);
  }
  ctx.parts.push(minorReadPart([], SHELL_REASONS['shell-only'](command)));
  const declaration: Declaration = { command, scope: scopeOf(command, groups, ctx) };
  for (const group of groups) {
    if (group.length === 1 && group[0]!.type === 'variable_assignment') {
      judgeAssignment(group[0]!, cwds, ctx, { depth: depth + 1, scope: declaration.scope, sets: true });
      continue;
    }
    const raw = ctx.source.slice(group[0]!.startIndex, group.at(-1)!.endIndex);
    judgeDeclarationWord(declaration, groupWord(group, cwds, ctx, depth), raw, ctx);
  }
}
