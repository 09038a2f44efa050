/**
 * Variable assignments (DESIGN.md §5.5): `X=1`, `export X=1`, `for X in`,
 * `env X=1`, `read X`. They change only the shell, unless the variable is
 * one the table lists (`PATH`, `LD_PRELOAD`, `GIT_*`, pagers: what changes
 * which program runs or what it runs) and the value is not listed as safe.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Classification } from '../classification.js';
import type { Cwds } from './cwd.js';
import { minorReadPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { CompiledTable } from './table-compile.js';
import { staticWord, textOf, wordOf, type JudgeContext } from './words.js';

/** The values an assignment to `name` may take without making a write; undefined when the variable is not listed. */
function riskyVariable(name: string, table: CompiledTable): Set<string> | undefined {
  const exact = table.variables.get(name);
  if (exact !== undefined) return exact;
  for (const [prefix, values] of table.variablePrefixes) if (name.startsWith(prefix)) return values;
  return undefined;
}

/** A part for an assignment of `value` (null: unknown) to `name`: a write for a listed variable and a value not listed. */
export function assignmentPart(name: string, value: string | null, ctx: JudgeContext): Classification {
  const allowed = riskyVariable(name, ctx.table);
  if (allowed !== undefined && (value === null || !allowed.has(value))) {
    return writePart([], false, SHELL_REASONS['assignment-listed'](name));
  }
  return minorReadPart([], SHELL_REASONS.assignment(name));
}

/** Judges a `variable_assignment` node (`X=v`, `X+=v`, `a[i]=v`): its subscript and value are walked, then its part pushed. */
export function judgeAssignment(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  const nameNode = node.childForFieldName('name');
  const valueNode = node.childForFieldName('value');
  const base = nameNode?.type === 'subscript' ? nameNode.childForFieldName('name') : nameNode;
  const name = base === null ? '' : textOf(base, ctx);
  if (nameNode?.type === 'subscript') ctx.steps.walk(nameNode, cwds, ctx, depth + 1);
  const value = valueNode === null ? staticWord('') : wordOf(valueNode, cwds, ctx, depth + 1);
  const appends = node.children.some((c) => c?.type === '+=');
  ctx.parts.push(assignmentPart(name, appends && value.text !== null ? `+${value.text}` : value.text, ctx));
}
