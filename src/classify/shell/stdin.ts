/**
 * What a simple command reads on its input, when its own redirections say
 * so before it runs (DESIGN.md §5.5): the text of a here-document or
 * here-string. Database clients (`psql <<'SQL'`) judge that text as SQL; any
 * other input (a pipe, a file, the caller's input) is not known here.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { textOf, type JudgeContext } from './words.js';

/** A here-document delimiter bash and the tree read alike: a plain name, quoted whole (`'SQL'`, `"SQL"`, `\SQL`) or not. */
const PLAIN_DELIMITER = /^(?:'([A-Za-z_][A-Za-z0-9_]*)'|"([A-Za-z_][A-Za-z0-9_]*)"|\\([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_]*))$/;

/** A here-document's body as the command reads it, or null when it is not known before it runs (expansions, a delimiter out of the plain forms). */
function heredocText(node: SyntaxNode, ctx: JudgeContext): string | null {
  const text = textOf(node, ctx);
  if (!text.startsWith('<<')) return null; // a descriptor number: not the command's input
  const start = node.namedChildren.find((c) => c?.type === 'heredoc_start');
  const end = node.namedChildren.find((c) => c?.type === 'heredoc_end');
  const body = node.namedChildren.find((c) => c?.type === 'heredoc_body');
  if (start == null || end == null || end.isMissing) return null;
  // Redirections the tree hangs on the here-document (`<<'SQL' < file`) may replace the input: not followed.
  if (node.namedChildren.some((c) => c !== null && /redirect$/.test(c.type))) return null;
  const match = PLAIN_DELIMITER.exec(textOf(start, ctx));
  if (match === null) return null;
  const delimiter = match[1] ?? match[2] ?? match[3] ?? match[4]!;
  if (textOf(end, ctx).trim() !== delimiter) return null;
  let content = body == null ? '' : textOf(body, ctx);
  // Unquoted: the body is expanded as a double-quoted string; known only without `$`, backquotes or backslashes.
  if (match[4] !== undefined && /[$`\\]/.test(content)) return null;
  if (text.startsWith('<<-')) content = content.replace(/^\t+/gm, '');
  return content;
}

/** A here-string's word as the command reads it (with the newline bash adds), or null when it is not a plain quoted or bare word. */
function herestringText(node: SyntaxNode, ctx: JudgeContext): string | null {
  const text = textOf(node, ctx);
  if (!text.startsWith('<<<')) return null;
  const word = node.namedChildren.find((c) => c !== null);
  if (word == null || node.namedChildren.length !== 1) return null;
  const raw = textOf(word, ctx);
  if (word.type === 'raw_string') return `${raw.slice(1, -1)}\n`;
  if (word.type === 'string' && word.namedChildren.every((c) => c?.type === 'string_content') && !/[$`\\]/.test(raw)) {
    return `${raw.slice(1, -1)}\n`;
  }
  if (word.type === 'word' && /^[A-Za-z0-9_.,=*]+$/.test(raw)) return `${raw}\n`;
  return null;
}

/**
 * The text a command reads on its input, from its redirections in the order
 * written (`redirects`: the redirection nodes of the command and of the
 * statement around it; the last that sets the input wins, as in bash): a
 * here-document's or here-string's text, or null when its input is not known
 * (none of them, a file, a descriptor, a text with expansions).
 */
export function stdinText(redirects: readonly SyntaxNode[], ctx: JudgeContext): string | null {
  let input: string | null = null;
  for (const node of redirects) {
    if (node.type === 'heredoc_redirect') input = heredocText(node, ctx);
    else if (node.type === 'herestring_redirect') input = herestringText(node, ctx);
    else if (/^(0?<|<&|<>)/.test(textOf(node, ctx))) input = null;
  }
  return input;
}
