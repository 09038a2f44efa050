/**
 * A simple command node of the tree (DESIGN.md §5.5): its prefix
 * assignments, name, arguments and redirections. `cd`, `pushd` and `popd`
 * move the shell (followed for later relative paths); any other command is
 * judged against the table as words (`judgeArgv`).
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { judgeArgv } from './argv.js';
import { judgeAssignment } from './assignment.js';
import { joinDir, MAY_CHANGE_CWD, same, union, type Cwds, type Outcome } from './cwd.js';
import { MAX_SHELL_NODE_DEPTH, TooDeep } from './limits.js';
import { minorReadPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import { judgeRedirect } from './redirect.js';
import { stdinText } from './stdin.js';
import { fieldedChildren, REDIRECT_TYPES, STATEMENT_TYPES } from './syntax.js';
import { cdOptions, forgetVariables } from './variables.js';
import { textOf, wordOf, type JudgeContext, type Word } from './words.js';

/** A simple command's nodes, sorted out by `collectCommand`. */
export interface CommandNodes {
  name: SyntaxNode | null;
  /** Its arguments, words tree-sitter hung on its redirections included, in order. */
  args: SyntaxNode[];
  /** Its prefix assignments (`X=1 cmd`), for it only. */
  assignments: SyntaxNode[];
  /** Statements tree-sitter hung on its redirections (`cat <<EOF | sh`). */
  trailing: SyntaxNode[];
  /** Its redirections in order, the statement's around it included (its input: `stdinText`). */
  redirects: SyntaxNode[];
}

/**
 * Sorts a `command` node's children into name, arguments, assignments and
 * trailing statements; its redirections, and anything else in it, are judged
 * on the way. The caller may add arguments before `judgeCommand`.
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH` (the entry point turns it into a write).
 */
export function collectCommand(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): CommandNodes {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  const command: CommandNodes = { name: null, args: [], assignments: [], trailing: [], redirects: [] };
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) continue;
    if (field === 'name') command.name = child;
    else if (field === 'argument') command.args.push(child);
    else if (child.type === 'variable_assignment') command.assignments.push(child);
    else if (REDIRECT_TYPES.has(child.type)) {
      const spill = judgeRedirect(child, cwds, ctx, depth + 1);
      command.redirects.push(child);
      command.args.push(...spill.extra);
      command.trailing.push(...spill.trailing);
    } else if (STATEMENT_TYPES.has(child.type)) ctx.steps.statement(child, cwds, ctx, depth + 1);
    else ctx.steps.walk(child, cwds, ctx, depth + 1);
  }
  return command;
}

/**
 * Judges a simple command sorted out by `collectCommand`: its trailing
 * statements, then the command itself (a `cd` followed, anything else
 * against the table), then its prefix assignments. Returns where the shell
 * may be after it.
 */
export function judgeCommand(command: CommandNodes, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
  const { name: nameNode, args, assignments } = command;
  for (const statement of command.trailing) ctx.steps.statement(statement, cwds, ctx, depth + 1); // cwd: conservatively, the same
  if (nameNode === null) {
    for (const assignment of assignments) judgeAssignment(assignment, cwds, ctx, { depth: depth + 1, scope: 'shell', sets: true });
    if (args.length > 0) ctx.parts.push(writePart([], false, SHELL_REASONS['arguments-without-command']));
    return same(cwds);
  }
  const nameValue = nameNode.firstNamedChild ?? nameNode;
  const name = wordOf(nameValue, cwds, ctx, depth + 1);
  const words = [name, ...args.map((arg) => wordOf(arg, cwds, ctx, depth + 1))];
  let outcome: Outcome;
  if (name.text !== null && !name.pattern && !ctx.functions.has(name.text) && ['cd', 'pushd', 'popd'].includes(name.text)) {
    outcome = changeDirectory(name.text, words.slice(1), cwds, ctx);
  } else {
    // Its input redirected (`xargs rm < list`): it does not read the pipe's paths.
    if (command.redirects.some((r) => r.type !== 'file_redirect' || /^\d*<(?!\()/.test(textOf(r, ctx)))) ctx.pipeInput = null;
    judgeArgv({ words, unknownArgs: false, stdin: stdinText(command.redirects, ctx) }, cwds, ctx, depth + 1);
    const changes = name.text === null || name.pattern || MAY_CHANGE_CWD.has(name.text) || ctx.functions.has(name.text);
    if (changes) forgetVariables(ctx); // a function, eval, source may assign any variable
    // Under autocd a command word that names a directory moves the shell (a command the table does not know).
    const autocd = cdOptions(ctx.source).autocd && name.text !== null && !ctx.table.commands.has(name.text);
    outcome = changes || autocd ? { ok: [null], fail: cwds } : same(cwds);
  }
  for (const assignment of assignments) judgeAssignment(assignment, cwds, ctx, { depth: depth + 1, scope: 'environment' }); // X=1 cmd: for cmd only
  return outcome;
}

/** `cd`, `pushd`, `popd`: a read without targets that moves the shell when it succeeds. */
function changeDirectory(name: string, args: Word[], cwds: Cwds, ctx: JudgeContext): Outcome {
  ctx.parts.push(minorReadPart([], SHELL_REASONS['shell-only'](name)));
  let operands = args.filter((w) => !(w.text !== null && /^-[LPe@]+$/.test(w.text)));
  if (operands[0]?.text === '--') operands = operands.slice(1);
  const unknown: Outcome = { ok: [null], fail: cwds };
  if (name === 'popd' || operands.length > 1) return unknown;
  const dir = operands[0];
  if (dir === undefined) return name === 'pushd' ? unknown : { ok: ['~'], fail: cwds };
  if (dir.text === null || dir.pattern || dir.text === '-' || dir.text.startsWith('+') || dir.text.startsWith('-')) return unknown;
  const text = dir.text;
  // cdable_vars: `cd NAME` may go to $NAME; CDPATH: `cd rel` may go under any of its entries (not `./x`, `../x`).
  const options = cdOptions(ctx.source);
  const searched = !/^(\/|~|\.\.?(\/|$))/.test(text);
  if (searched && (options.cdableVars || options.cdpath)) return unknown;
  return { ok: union(cwds.map((cwd) => joinDir(cwd, text))), fail: cwds };
}
