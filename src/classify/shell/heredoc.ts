/**
 * Here-documents read as bash reads them (DESIGN.md §5.5): the delimiter is
 * the word after `<<`/`<<-` with bash's quote removal (`E"O"F`, `E''OF` and
 * `\EOF` are `EOF`, and any quoting makes the body literal), the body ends at
 * the first line that is exactly the delimiter (leading tabs removed for
 * `<<-`), and an unquoted body is expanded as a double-quoted string is
 * (`$(...)`, backticks, `${...}`, arithmetic).
 *
 * tree-sitter-bash reads here-documents with rules of its own: where its tree
 * and bash's rules could disagree (the line the body ends at, where it starts,
 * a delimiter bash versions read differently, a line continuation bash joins
 * before looking for the end, an expansion the tree does not show), the
 * here-document is a write, never guessed at. Backticks in an unquoted body,
 * which the tree leaves as text, are found here and their commands judged.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import type { Cwds } from './cwd.js';
import { writePart } from './parts.js';
import { SHELL_REASONS } from './reasons.js';
import type { JudgeContext } from './words.js';

/** A here-document's delimiter as bash reads it: the word after quote removal, and whether any of it was quoted. */
export interface HeredocDelimiter {
  text: string;
  quoted: boolean;
}

/** The body of a double-quoted part of a delimiter from `i` (after its `"`): its value and the index after its closing `"`, or null when it does not close. */
function doubleQuoted(raw: string, i: number): { value: string; next: number } | null {
  let value = '';
  for (; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') return { value, next: i + 1 };
    if (c === '\\' && i + 1 < raw.length && '$`"\\'.includes(raw[i + 1]!)) value += raw[++i];
    else value += c;
  }
  return null;
}

/**
 * The delimiter bash reads from the word written after `<<` (DESIGN.md
 * §5.5): quote removal (`\x` is `x`, `'...'` as written, `"..."` with
 * backslash quoting only `$`, backtick, `"` and `\`); `quoted` when any of
 * it was quoted. Null when bash versions or the parser may read it
 * differently: `$'...'` or `$"..."` (bash 5.2 decodes ANSI-C escapes there,
 * earlier versions do not), a newline, a quote that does not close.
 */
export function heredocDelimiter(raw: string): HeredocDelimiter | null {
  let text = '';
  let quoted = false;
  for (let i = 0; i < raw.length;) {
    const c = raw[i]!;
    if (c === '\n' || c === '\r') return null;
    if (c === '$' && (raw[i + 1] === "'" || raw[i + 1] === '"')) return null;
    if (c === '\\') {
      if (i + 1 >= raw.length) return null;
      quoted = true;
      text += raw[i + 1];
      i += 2;
    } else if (c === "'") {
      const close = raw.indexOf("'", i + 1);
      if (close < 0) return null;
      quoted = true;
      text += raw.slice(i + 1, close);
      i = close + 1;
    } else if (c === '"') {
      const part = doubleQuoted(raw, i + 1);
      if (part === null) return null;
      quoted = true;
      text += part.value;
      i = part.next;
    } else {
      text += c;
      i++;
    }
  }
  return { text, quoted };
}

/**
 * Whether the rest of the line after a here-document's delimiter (`| jq '.a'`)
 * ends the command line where a plain scan says: no quote, backtick or
 * parenthesis left open (a comment ends it), no line continuation, no
 * second here-document (whose body would follow this one's).
 */
function restOfLineCloses(rest: string): boolean {
  let quote: string | null = null;
  let parens = 0;
  for (let i = 0; i < rest.length; i++) {
    const c = rest[i]!;
    if (quote === "'") {
      if (c === "'") quote = null;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= rest.length) return false;
      i++;
    } else if (quote !== null) {
      if (c === quote) quote = null;
    } else if (c === "'" || c === '"' || c === '`') quote = c;
    else if (c === '(') parens++;
    else if (c === ')') parens--;
    else if (c === '#' && (i === 0 || /\s/.test(rest[i - 1]!))) break;
    else if (c === '<' && rest.startsWith('<<', i) && !rest.startsWith('<<<', i) && rest[i - 1] !== '<') return false;
    else if (c === '<' && rest.startsWith('<<<', i)) i += 2;
  }
  return quote === null && parens === 0;
}

/** Where bash ends a body that starts at `from`: the end line's start (after the tabs `<<-` strips), or why it cannot be said. */
type BodyEnd = { start: number; end: number } | 'unterminated' | 'continuation' | 'prefix';

/**
 * Reads lines from `from` as bash does until one is the delimiter. `stripTabs`: `<<-`; `inSubstitution`: in
 * `$(...)`, where bash also ends at a line starting with it.
 */
function bashBodyEnd(
  source: string,
  from: number,
  delimiter: HeredocDelimiter,
  how: { stripTabs: boolean; inSubstitution: boolean },
): BodyEnd {
  const { stripTabs, inSubstitution } = how;
  let pos = from;
  for (;;) {
    const newline = source.indexOf('\n', pos);
    const lineEnd = newline < 0 ? source.length : newline;
    let tabs = pos;
    if (stripTabs) while (source[tabs] === '\t') tabs++;
    const content = source.slice(tabs, lineEnd);
    if (content === delimiter.text) return { start: tabs, end: lineEnd };
    // unquoted, bash joins a line ending in a backslash to the next one before comparing
    if (!delimiter.quoted && /(?:^|[^\\])(?:\\\\)*\\$/.test(content)) return 'continuation';
    if (inSubstitution && content.startsWith(delimiter.text)) return 'prefix';
    if (newline < 0) return 'unterminated';
    pos = newline + 1;
  }
}

/** Whether a node is inside a command or process substitution (where bash has more ways to end a here-document). */
function inSubstitution(node: SyntaxNode): boolean {
  for (let up = node.parent; up !== null; up = up.parent) {
    if (up.type === 'command_substitution' || up.type === 'process_substitution') return true;
  }
  return false;
}

/** The parts of a heredoc_redirect node the checks need. */
interface HeredocNodes {
  operator: string;
  start: SyntaxNode | null;
  body: SyntaxNode | null;
  end: SyntaxNode | null;
}

function heredocNodes(node: SyntaxNode): HeredocNodes {
  const out: HeredocNodes = { operator: '<<', start: null, body: null, end: null };
  for (const child of node.children) {
    if (child === null) continue;
    if (child.type === '<<' || child.type === '<<-') out.operator = child.type;
    else if (child.type === 'heredoc_start') out.start = child;
    else if (child.type === 'heredoc_body') out.body = child;
    else if (child.type === 'heredoc_end') out.end = child;
  }
  return out;
}

/** Why the tree's reading of a here-document may not be bash's (a `SHELL_REASONS` string), or null when they agree. */
function heredocProblem(node: SyntaxNode, parts: HeredocNodes, delimiter: HeredocDelimiter | null, source: string): string | null {
  const { start, body, end } = parts;
  const raw = start === null ? '' : source.slice(start.startIndex, start.endIndex);
  if (start === null || delimiter === null) return SHELL_REASONS['heredoc-delimiter'](raw);
  const newline = source.indexOf('\n', start.endIndex);
  if (newline < 0 || !restOfLineCloses(source.slice(start.endIndex, newline))) return SHELL_REASONS['heredoc-line'](raw);
  const stripTabs = parts.operator === '<<-';
  const found = bashBodyEnd(source, newline + 1, delimiter, { stripTabs, inSubstitution: inSubstitution(node) });
  if (found === 'unterminated') return SHELL_REASONS['heredoc-unterminated'](raw);
  if (found === 'continuation') return SHELL_REASONS['heredoc-continuation'](raw);
  if (found === 'prefix') return SHELL_REASONS['heredoc-differs'](raw);
  const bodyStart = body?.startIndex ?? found.start;
  const gap = source.slice(newline + 1, bodyStart);
  if (
    end === null ||
    end.startIndex !== found.start ||
    end.endIndex !== found.end ||
    bodyStart < newline + 1 ||
    !(gap === '' || (stripTabs && /^\t+$/.test(gap))) ||
    (body !== null && body.endIndex > found.start)
  ) {
    return SHELL_REASONS['heredoc-differs'](raw);
  }
  return null;
}

/** Ranges of an unquoted body the tree parsed as expansions (their commands are judged by the walk). */
function parsedRanges(body: SyntaxNode | null): [number, number][] {
  const ranges: [number, number][] = [];
  if (body === null) return ranges;
  for (const child of body.namedChildren) {
    if (child !== null && child.type !== 'heredoc_content') ranges.push([child.startIndex, child.endIndex]);
  }
  return ranges;
}

/**
 * An unquoted body read as bash expands it, outside what the tree parsed:
 * backtick substitutions judged as scripts (their `\``, `\\` and `\$`
 * unescaped), a `$(`, `${` or `$[` the tree did not parse a write.
 */
function judgeUnquotedBody(body: { from: number; to: number; parts: HeredocNodes }, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  const { from, to, parts } = body;
  const source = ctx.source;
  const raw = parts.start === null ? '' : source.slice(parts.start.startIndex, parts.start.endIndex);
  const ranges = parsedRanges(parts.body);
  let r = 0;
  for (let i = from; i < to; i++) {
    while (r < ranges.length && ranges[r]![1] <= i) r++;
    if (r < ranges.length && ranges[r]![0] <= i) {
      i = ranges[r]![1] - 1;
      continue;
    }
    const c = source[i];
    if (c === '\\') {
      if ('$`\\'.includes(source[i + 1] ?? '')) i++;
    } else if (c === '$' && '({['.includes(source[i + 1] ?? '')) {
      ctx.parts.push(writePart([], false, SHELL_REASONS['heredoc-unparsed'](raw)));
      return;
    } else if (c === '`') {
      let close = i + 1;
      while (close < to && source[close] !== '`') close += source[close] === '\\' ? 2 : 1;
      if (close >= to) {
        ctx.parts.push(writePart([], false, SHELL_REASONS['heredoc-unparsed'](raw)));
        return;
      }
      ctx.steps.script(source.slice(i + 1, close).replace(/\\([\\`$])/g, '$1'), cwds, ctx, depth + 1);
      i = close;
    }
  }
}

/**
 * Checks a here-document against bash's reading of it (DESIGN.md §5.5),
 * pushing a write when the tree's reading may differ, and judges what bash
 * runs in an unquoted body that the tree shows as text (backticks). The
 * expansions the tree did parse in the body are judged by the caller's walk.
 */
export function checkHeredoc(node: SyntaxNode, cwds: Cwds, ctx: JudgeContext, depth: number): void {
  const parts = heredocNodes(node);
  const source = ctx.source;
  const delimiter = parts.start === null ? null : heredocDelimiter(source.slice(parts.start.startIndex, parts.start.endIndex));
  const problem = heredocProblem(node, parts, delimiter, source);
  if (problem !== null) {
    ctx.parts.push(writePart([], false, problem));
    return;
  }
  if (delimiter!.quoted) return;
  const from = source.indexOf('\n', parts.start!.endIndex) + 1;
  judgeUnquotedBody({ from, to: parts.end!.startIndex, parts }, cwds, ctx, depth);
}
