/**
 * Variable assignments (DESIGN.md §5.5): `X=1`, `export X=1`, `for X in`,
 * `env X=1`, `read X`. A shell variable changes only the shell, unless the
 * variable is one the table lists (`PATH`, `LD_PRELOAD`, `GIT_*`, pagers:
 * what changes which program runs or what it runs) and the value is not
 * listed as safe. A variable put in programs' environment (`X=1 cmd`,
 * `export X`) is a write unless the table knows it to be inert.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Classification } from '../classification.js';
import type { Cwds } from './cwd.js';
import { minorReadPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { CompiledTable } from './table-compile.js';
import { setVariable, shellOf, type VariableValue } from './variables.js';
import { staticWord, textOf, wordOf, type JudgeContext, type Word } from './words.js';

/** The values an assignment to `name` may take without making a write; undefined when the variable is not listed. */
function riskyVariable(name: string, table: CompiledTable): Set<string> | undefined {
  const exact = table.variables.get(name);
  if (exact !== undefined) return exact;
  for (const [prefix, values] of table.variablePrefixes) if (name.startsWith(prefix)) return values;
  return undefined;
}

/**
 * Where an assignment's value goes: `shell`, a shell variable only (`X=1`,
 * `read X`, `for X in`), or `environment`, the environment of programs the
 * shell runs (`X=1 cmd`, `export X=1`, `declare -x X`, `env X=1 cmd`).
 */
export type AssignmentScope = 'shell' | 'environment';

/** Whether the table knows a variable to be inert in the environment (`LANG`, `LC_*`, `NO_COLOR`). */
function inertVariable(name: string, table: CompiledTable): boolean {
  return table.inertVariables.has(name) || table.inertPrefixes.some((prefix) => name.startsWith(prefix));
}

/**
 * A part for an assignment of `value` (null: unknown) to `name` (DESIGN.md
 * §5.5): a write for a variable the table lists (`variables`: what changes
 * which program runs or what it runs) with a value it does not list; in the
 * environment of programs, a write unless the table knows the variable to
 * be inert (`inertVariables`); a shell variable otherwise changes only the shell.
 */
export function assignmentPart(name: string, value: string | null, ctx: JudgeContext, scope: AssignmentScope = 'shell'): Classification {
  const allowed = riskyVariable(name, ctx.table);
  if (allowed !== undefined) {
    if (value === null || !allowed.has(value)) return writePart([], false, SHELL_REASONS['assignment-listed'](name));
    return minorReadPart([], SHELL_REASONS.assignment(name));
  }
  if (scope === 'shell') return minorReadPart([], SHELL_REASONS.assignment(name));
  if (inertVariable(name, ctx.table)) return minorReadPart([], SHELL_REASONS['assignment-inert'](name));
  return writePart([], false, SHELL_REASONS['assignment-environment'](name));
}

/**
 * A part for `export NAME` without a value (DESIGN.md §5.5): it hands the
 * shell's value to programs. A variable the table lists (`PATH`) is a read:
 * any change of it is judged where it is made; any other must be inert,
 * since a plain `NAME=v` before it was judged a shell variable.
 */
export function exportPart(name: string, ctx: JudgeContext): Classification {
  if (riskyVariable(name, ctx.table) !== undefined) return minorReadPart([], SHELL_REASONS.assignment(name));
  return assignmentPart(name, null, ctx, 'environment');
}

/**
 * Judges a `variable_assignment` node (`X=v`, `X+=v`, `a[i]=v`): its
 * subscript and value are walked, then its part pushed. `scope`: where the
 * value goes, a shell variable (`X=v` alone) or programs' environment
 * (`X=v cmd`, `export X=v`).
 */
export function judgeAssignment(
  node: SyntaxNode,
  cwds: Cwds,
  ctx: JudgeContext,
  at: { depth: number; scope: AssignmentScope; sets?: boolean },
): void {
  const nameNode = node.childForFieldName('name');
  const valueNode = node.childForFieldName('value');
  const base = nameNode?.type === 'subscript' ? nameNode.childForFieldName('name') : nameNode;
  const name = base === null ? '' : textOf(base, ctx);
  if (nameNode?.type === 'subscript') ctx.steps.walk(nameNode, cwds, ctx, at.depth + 1);
  const value = valueNode === null ? staticWord('') : wordOf(valueNode, cwds, ctx, at.depth + 1);
  const appends = node.children.some((c) => c?.type === '+=');
  ctx.parts.push(assignmentPart(name, appends && value.text !== null ? `+${value.text}` : value.text, ctx, at.scope));
  if (at.sets === true) setVariable(ctx, name, assignedValue(node, value, ctx));
}

/**
 * The value a shell variable holds after an assignment, for `setVariable`:
 * its text when known (no word splitting, globbing or brace expansion in an
 * assignment; a `~` only when written unquoted), appended to a known value
 * for `+=`; null for an array element or anything else.
 */
function assignedValue(node: SyntaxNode, value: Word, ctx: JudgeContext): VariableValue {
  const valueNode = node.childForFieldName('value');
  const appends = node.children.some((c) => c?.type === '+=');
  if (node.childForFieldName('name')?.type === 'subscript' || value.text === null) return null;
  const raw = valueNode === null ? '' : textOf(valueNode, ctx);
  if (value.text.startsWith('~') && !raw.startsWith('~')) return null; // '~/x' quoted: a directory named ~
  if (valueNode !== null && (valueNode.type === 'array' || /[{*?[]/.test(raw))) return null;
  if (!appends) return { text: value.text };
  const name = textOf(node.childForFieldName('name')!, ctx);
  const before = shellOf(ctx).vars.get(name);
  return before !== undefined && before !== null && 'text' in before ? { text: before.text + value.text } : null;
}
