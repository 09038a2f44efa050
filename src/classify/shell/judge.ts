/**
 * The walk over the syntax tree (DESIGN.md §5.5): statements in order,
 * lists (`&&`, `||`, `;`), pipelines, subshells, groups, control flow,
 * function definitions, declarations and statements with redirections, each
 * simple command judged into parts, and the directories the shell may be in
 * carried along so that a `cd` is followed.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { assignmentPart, judgeAssignment } from './assignment.js';
import { collectCommand, judgeCommand } from './command.js';
import { MAY_CHANGE_CWD, same, union, type Cwds, type Outcome } from './cwd.js';
import { backtickScripts, INERT_LEAVES } from './evaluated-code.js';
import { MAX_SHELL_NODE_DEPTH, MAX_SHELL_WORK, TooBig, TooDeep } from './limits.js';
import { expansionAssignment, judgeDeclaration, variableNameProblem } from './names.js';
import { minorReadPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import { judgeRedirect } from './redirect.js';
import { REDIRECT_TYPES, STATEMENT_TYPES } from './syntax.js';
import { loopValue, pipeProducer, type PipeInput } from './producers.js';
import { assignedNames, cdOptions, forgetNames, forgetVariables, restore, setVariable, snapshot } from './variables.js';
import { staticWord, textOf, wordOf, type JudgeContext } from './words.js';

/**
 * Judges every command inside an expression (substitutions, nested statements).
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH`, TooBig past `MAX_SHELL_WORK` (the entry point turns both into a write).
 */
export function walk(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (++ctx.work.done > MAX_SHELL_WORK) throw new TooBig();
  if (node.type === 'command_substitution' || node.type === 'process_substitution') {
    const saved = snapshot(ctx);
    judgeSequence(node, cwds, ctx, depth + 1); // a subshell: its cd and assignments do not leak
    restore(ctx, saved);
    return;
  }
  if (STATEMENT_TYPES.has(node.type)) {
    judgeStatement(node, cwds, ctx, depth + 1);
    return;
  }
  if (node.childCount === 0 && !INERT_LEAVES.has(node.type)) {
    // `${x:-`cmd`}`: the parser reads the backticks as text; `evaluatedCode` made the call a write, this adds what runs.
    const text = textOf(node, ctx);
    if (text.includes('`')) {
      for (const script of backtickScripts(text) ?? []) {
        const saved = snapshot(ctx);
        ctx.steps.script(script, cwds, ctx, depth + 1); // a subshell: its cd and assignments do not leak
        restore(ctx, saved);
      }
    }
    return;
  }
  const assigns = expansionAssignment(node, ctx); // ${X:=v}
  if (assigns !== null) ctx.parts.push(assigns);
  for (const child of node.namedChildren) if (child !== null) walk(child, cwds, ctx, depth + 1);
}

/** Judges a node's statements in order, following `cd` (`{ }`, a program, a subshell's body). */
export function judgeSequence(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
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
    if (children[i + 1]?.type === '&') {
      const saved = snapshot(ctx);
      judgeStatement(child, current, ctx, depth + 1);
      restore(ctx, saved);
      last = same(current); // in the background: a subshell
      continue;
    }
    const outcome = judgeStatement(child, current, ctx, depth + 1);
    current = union(outcome.ok, outcome.fail);
    last = outcome;
  }
  return last;
}

/** Judges an if or case: each part may or may not run, so the directories after it are all those seen. */
function judgeBranches(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Cwds {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  let seen = cwds;
  // Each branch starts from the variables before the statement (assigned names already forgotten: `branchScope`).
  const entry = snapshot(ctx);
  for (const child of node.namedChildren) {
    if (child === null || child.type === 'comment') continue;
    if (['elif_clause', 'else_clause', 'case_item'].includes(child.type)) restore(ctx, entry);
    if (STATEMENT_TYPES.has(child.type)) {
      const outcome = judgeStatement(child, seen, ctx, depth + 1);
      seen = union(seen, outcome.ok, outcome.fail);
    } else if (['elif_clause', 'else_clause', 'case_item', 'do_group'].includes(child.type)) {
      seen = judgeBranches(child, seen, ctx, depth + 1);
    } else if (child.type === 'variable_name' && node.type === 'for_statement') {
      ctx.parts.push(assignmentPart(textOf(child, ctx), null, ctx));
      setVariable(ctx, textOf(child, ctx), loopValue(node, ctx));
    } else {
      walk(child, seen, ctx, depth + 1);
    }
  }
  return seen;
}

/** Whether a subtree holds a command that may change the shell's directory. */
function changesDirectory(node: SyntaxNode, ctx: JudgeContext): boolean {
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

/**
 * Judges one statement node into parts; returns where the shell may be
 * after it succeeded and after it failed.
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH`, TooBig past `MAX_SHELL_WORK` (the entry point turns both into a write).
 */
export function judgeStatement(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (++ctx.work.done > MAX_SHELL_WORK) throw new TooBig();
  switch (node.type) {
    case 'command':
      return judgeCommand(collectCommand(node, cwds, ctx, depth + 1), cwds, ctx, depth + 1);
    case 'redirected_statement':
      return judgeRedirected(node, cwds, ctx, depth + 1);
    case 'list':
      return judgeList(node, cwds, ctx, depth + 1);
    case 'pipeline':
      return judgePipeline(node, cwds, ctx, { depth: depth + 1 });
    case 'subshell':
      return judgeSubshell(node, cwds, ctx, depth + 1);
    case 'compound_statement':
      if (node.children[0]?.type === '((') ctx.parts.push(minorReadPart([], SHELL_REASONS.arithmetic));
      return judgeSequence(node, cwds, ctx, depth + 1);
    case 'negated_command': {
      const outcome = judgeSequence(node, cwds, ctx, depth + 1);
      return { ok: outcome.fail, fail: outcome.ok };
    }
    case 'if_statement':
    case 'case_statement':
      return same(branchScope(node, ctx, () => judgeBranches(node, cwds, ctx, depth + 1)));
    case 'while_statement':
    case 'for_statement':
    case 'c_style_for_statement': {
      // A body that changes directory runs in a different one each time round: not known.
      const moving = changesDirectory(node, ctx);
      branchScope(node, ctx, () => judgeBranches(node, moving ? [null] : cwds, ctx, depth + 1));
      return same(moving ? [null] : cwds);
    }
    case 'function_definition': {
      // Judged as if called; a call of it is a write anyway (the function is not a known command).
      const name = node.childForFieldName('name');
      const saved = snapshot(ctx); // its assignments happen when it is called: a call forgets every variable
      for (const child of node.namedChildren) {
        // nodes are compared by identity in the tree: web-tree-sitter makes a new object for each access
        if (child === null || (name !== null && child.equals(name))) continue;
        if (child.type === 'file_redirect' || child.type === 'heredoc_redirect' || child.type === 'herestring_redirect') {
          judgeRedirect(child, cwds, ctx, depth + 1);
        } else if (STATEMENT_TYPES.has(child.type)) judgeStatement(child, cwds, ctx, depth + 1);
        else walk(child, cwds, ctx, depth + 1);
      }
      restore(ctx, saved);
      return same(cwds);
    }
    case 'variable_assignment':
      judgeAssignment(node, cwds, ctx, { depth: depth + 1, scope: 'shell', sets: true });
      return same(cwds);
    case 'variable_assignments':
      for (const child of node.namedChildren) {
        if (child?.type === 'variable_assignment') judgeAssignment(child, cwds, ctx, { depth: depth + 1, scope: 'shell', sets: true });
        else if (child !== null) walk(child, cwds, ctx, depth + 1);
      }
      return same(cwds);
    case 'declaration_command':
      judgeDeclaration(node, cwds, ctx, depth + 1);
      return same(cwds);
    case 'unset_command': {
      const words = node.namedChildren
        .filter((c): c is SyntaxNode => c !== null && c.type !== 'comment')
        .map((c) => (c.type === 'variable_name' ? staticWord(textOf(c, ctx)) : wordOf(c, cwds, ctx, depth + 1)));
      forgetNames(
        ctx,
        words.flatMap((w) => (w.text === null ? [] : [w.text])),
      );
      if (words.some((w) => w.text === null)) forgetVariables(ctx);
      const problem = variableNameProblem('unset', words);
      ctx.parts.push(problem === null ? minorReadPart([], SHELL_REASONS['shell-only']('unset')) : writePart([], false, problem));
      return same(cwds);
    }
    case 'test_command':
      for (const child of node.namedChildren) if (child !== null) walk(child, cwds, ctx, depth + 1);
      ctx.parts.push(minorReadPart([], SHELL_REASONS.test));
      return same(cwds);
    default:
      ctx.parts.push(writePart([], false, SHELL_REASONS['unknown-construct'](node.type)));
      return same([null]);
  }
}

/** `a && b || c`: b runs when a succeeded, c when the left side failed. Left-nested lists are followed without recursion. */
function judgeList(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
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
  // Variables: what `a && X=1` assigns is known after it on the `&&` path only; `||` runs when something before failed.
  const conditional: SyntaxNode[] = [];
  const before: SyntaxNode[] = [head];
  for (let i = 0; i < chain.length; i++) {
    const item = chain[i]!;
    if (item.isNamed) {
      // a statement without an operator before it: run after the previous one
      const outcome = judgeStatement(item, union(current.ok, current.fail), ctx, depth + 1);
      current = outcome;
      before.push(item);
      continue;
    }
    const next = chain[i + 1];
    if (next === undefined || !next.isNamed) continue;
    i++;
    if (item.type === '&&') {
      const outcome = judgeStatement(next, current.ok, ctx, depth + 1);
      current = { ok: outcome.ok, fail: union(current.fail, outcome.fail) };
      conditional.push(next);
    } else if (item.type === '||') {
      for (const node of before) forgetNames(ctx, assignedNames(node, ctx));
      const outcome = judgeStatement(next, current.fail, ctx, depth + 1);
      current = { ok: union(current.ok, outcome.ok), fail: outcome.fail };
      forgetNames(ctx, assignedNames(next, ctx)); // the `&&` after it may run without it
      conditional.push(next);
    } else {
      current = judgeStatement(next, union(current.ok, current.fail), ctx, depth + 1);
    }
    before.push(next);
  }
  for (const node of conditional) forgetNames(ctx, assignedNames(node, ctx));
  return current;
}

/** A statement with redirections; words tree-sitter hangs on a redirection (`> f x`, `<<EOF x`) are the command's arguments. */
function judgeRedirected(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
  const body = node.childForFieldName('body');
  const extra: SyntaxNode[] = [];
  const trailing: SyntaxNode[] = [];
  const redirects: SyntaxNode[] = [];
  for (const child of node.namedChildren) {
    // by identity in the tree (`equals`): web-tree-sitter makes a new object for each access, so `===` never holds
    if (child === null || (body !== null && child.equals(body))) continue;
    if (REDIRECT_TYPES.has(child.type)) {
      redirects.push(child);
      const spill = judgeRedirect(child, cwds, ctx, depth + 1);
      extra.push(...spill.extra);
      trailing.push(...spill.trailing);
    } else if (STATEMENT_TYPES.has(child.type)) trailing.push(child);
    else walk(child, cwds, ctx, depth + 1);
  }
  let outcome: Outcome;
  if (body === null) {
    if (extra.length > 0) ctx.parts.push(writePart([], false, SHELL_REASONS['redirect-without-command']));
    ctx.parts.push(minorReadPart([], SHELL_REASONS['redirect-alone']));
    outcome = same(cwds);
  } else if (body.type === 'command') {
    const command = collectCommand(body, cwds, ctx, depth + 1);
    command.args.push(...extra);
    command.redirects.push(...redirects);
    outcome = judgeCommand(command, cwds, ctx, depth + 1);
  } else {
    if (extra.length > 0) ctx.parts.push(writePart([], false, SHELL_REASONS['words-after-compound-redirect']));
    // `a | xargs rm < list`: the redirection is the last command's input, not the pipe
    const input = redirects.some((r) => r.type !== 'file_redirect' || /^\d*<(?!\()/.test(textOf(r, ctx)));
    outcome =
      body.type === 'pipeline'
        ? judgePipeline(body, cwds, ctx, { depth: depth + 1, lastInputRedirected: input })
        : judgeStatement(body, cwds, ctx, depth + 1);
  }
  for (const statement of trailing) {
    const after = judgeStatement(statement, union(outcome.ok, outcome.fail), ctx, depth + 1);
    outcome = same(union(outcome.ok, outcome.fail, after.ok, after.fail));
  }
  return outcome;
}

/**
 * Judges an if, case or loop with the names it may assign forgotten before
 * (a loop's second round sees its first round's assignments) and after (a
 * branch may not have run); inside, each branch follows its own assignments.
 */
function branchScope<T>(node: SyntaxNode, ctx: JudgeContext, judge: () => T): T {
  const names = assignedNames(node, ctx);
  forgetNames(ctx, names);
  const result = judge();
  forgetNames(ctx, names);
  return result;
}

/**
 * A pipeline: each command in a subshell of its own (its `cd` and
 * assignments do not leak), but for the last one under `lastpipe`, which
 * runs in the shell itself when job control is off (so it may move it).
 * A command after a producer whose output names places (`find ROOT
 * -print0`) gets them as its input (`ctx.pipeInput`, for xargs).
 */
function judgePipeline(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, at: { depth: number; lastInputRedirected?: boolean }): Outcome {
  const depth = at.depth;
  const elements = node.namedChildren.filter((c): c is SyntaxNode => c !== null && c.type !== 'comment');
  const lastpipe = cdOptions(ctx.source).lastpipe;
  let input: PipeInput | null = null;
  let outcome: Outcome = same(cwds);
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!;
    const last = i === elements.length - 1;
    const saved = snapshot(ctx);
    ctx.pipeInput = last && at.lastInputRedirected === true ? null : input;
    try {
      outcome = judgeStatement(element, cwds, ctx, depth + 1);
    } finally {
      ctx.pipeInput = undefined;
    }
    if (last && lastpipe) forgetNames(ctx, assignedNames(element, ctx));
    else restore(ctx, saved);
    input = pipeProducer(element, cwds, ctx);
  }
  return lastpipe ? same(union(cwds, outcome.ok, outcome.fail)) : same(cwds);
}

/** A subshell `( … )`: its `cd` and assignments do not leak. */
function judgeSubshell(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Outcome {
  const saved = snapshot(ctx);
  judgeSequence(node, cwds, ctx, depth);
  restore(ctx, saved);
  return same(cwds);
}
