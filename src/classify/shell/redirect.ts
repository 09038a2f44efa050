/**
 * One redirection (DESIGN.md §5.5): output to a file is a write of it
 * (not to a null device or a descriptor), input from a file a read of it;
 * here-documents and here-strings are input, their substitutions judged.
 * Redirections are not destructive: a `>` that truncates is a plain write.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { resolveTargets, type Cwds } from './cwd.js';
import { checkHeredoc } from './heredoc.js';
import { MAX_SHELL_NODE_DEPTH, TooDeep } from './limits.js';
import { minorReadPart, writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import { fieldedChildren, REDIRECT_TYPES, STATEMENT_TYPES } from './syntax.js';
import { show, wordOf, type JudgeContext, type Word } from './words.js';

/**
 * What tree-sitter hangs on a redirection besides it: words (`> f x`,
 * `<<EOF x`), which are the command's arguments, and statements
 * (`cat <<EOF | sh`), which run after it.
 */
export interface Spill {
  extra: readonly SyntaxNode[];
  trailing: readonly SyntaxNode[];
}

const NOTHING_SPILLED: Spill = Object.freeze({ extra: [], trailing: [] });

/** A here-document: checked against bash's reading of it (`checkHeredoc`), its words and statements spilled, its body's substitutions judged. */
function judgeHeredoc(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Spill {
  checkHeredoc(node, cwds, ctx, depth + 1);
  const extra: SyntaxNode[] = [];
  const trailing: SyntaxNode[] = [];
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) continue;
    if (field === 'argument') extra.push(child);
    else if (REDIRECT_TYPES.has(child.type)) {
      const inner = judgeRedirect(child, cwds, ctx, depth + 1);
      extra.push(...inner.extra);
      trailing.push(...inner.trailing);
    } else if (STATEMENT_TYPES.has(child.type)) trailing.push(child);
    else if (child.type !== 'heredoc_start' && child.type !== 'heredoc_end') ctx.steps.walk(child, cwds, ctx, depth + 1);
  }
  return { extra, trailing };
}

/** Pushes the part of a file redirection, by its operator (`>`, `<`, `>&`, ...) and destination (`word`, null when there is none); none for a null device or a descriptor. */
function pushFileRedirectPart(operator: string, word: Word | null, cwds: Cwds, ctx: JudgeContext): void {
  switch (operator) {
    case '<':
      ctx.parts.push(minorReadPart(word?.text ? resolveTargets(word.text, cwds) : [], SHELL_REASONS['input-redirect']));
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
          SHELL_REASONS['output-redirect'](show(word ?? undefined)),
        ),
      );
      return;
    default:
      ctx.parts.push(writePart([], false, SHELL_REASONS['unknown-redirect'](operator)));
  }
}

/**
 * Judges one redirection node: `>`-like to a file is a write of it, `<` a
 * read of it; here-documents and here-strings are input (their
 * substitutions are judged). Returns the words and statements tree-sitter
 * attached to it, for the caller to judge with its command.
 *
 * @throws TooDeep past `MAX_SHELL_NODE_DEPTH` (the entry point turns it into a write).
 */
export function judgeRedirect(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): Spill {
  if (depth > MAX_SHELL_NODE_DEPTH) throw new TooDeep();
  if (node.type === 'heredoc_redirect') return judgeHeredoc(node, cwds, ctx, depth);
  if (node.type === 'herestring_redirect') {
    ctx.steps.walk(node, cwds, ctx, depth + 1);
    return NOTHING_SPILLED;
  }
  let operator = '';
  const destinations: SyntaxNode[] = [];
  for (const { child, field } of fieldedChildren(node)) {
    if (!child.isNamed) operator ||= child.type;
    else if (field === 'destination') destinations.push(child);
  }
  const dest = destinations[0];
  const word = dest === undefined ? null : wordOf(dest, cwds, ctx, depth + 1);
  pushFileRedirectPart(operator, word, cwds, ctx);
  return destinations.length > 1 ? { extra: destinations.slice(1), trailing: [] } : NOTHING_SPILLED;
}
