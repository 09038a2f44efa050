/**
 * Code bash runs from text the parser sees as inert (DESIGN.md §5.5): array
 * subscripts evaluated arithmetically or as names, indirect and prompt
 * expansion, `let`, integer declarations, arithmetic `for` loops. The judge
 * cannot follow what such text runs, so a tree holding one is a write.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';
import { POWERSHELL_PROGRAMS } from '../powershell/cli.js';
import { testOperandProblem } from './names.js';
import { SHELL_REASONS } from './reasons.js';

/**
 * Whether a single-quoted string is an argument of a command named
 * `pwsh`/`powershell` (or a path ending in one): bash hands it over as it
 * is and never evaluates it, and the PowerShell classifier judges it (a
 * function of that name is a write in the judge).
 */
function handedToPowerShell(node: SyntaxNode, source: string): boolean {
  const command = node.parent;
  if (command?.type !== 'command') return false;
  const name = command.childForFieldName('name');
  if (name === null) return false;
  const text = source.slice(name.startIndex, name.endIndex);
  return POWERSHELL_PROGRAMS.has((text.split('/').pop() ?? '').toLowerCase());
}

/**
 * Leaves whose backticks are not a substitution the tree failed to show:
 * the backtick token itself, comments, here-document text (an unquoted body
 * is read by heredoc.ts), single-quoted and ANSI-C strings (judged above).
 */
export const INERT_LEAVES: ReadonlySet<string> = new Set([
  '`',
  'comment',
  'heredoc_body',
  'heredoc_content',
  'raw_string',
  'ansi_c_string',
]);

/**
 * The scripts of the backtick substitutions in a leaf's text, as bash reads
 * them (inside backticks `\``, `\\` and `\$` lose their backslash; a
 * backslash outside quotes the next character), or null when a backtick is
 * not closed. Best effort: the leaf's write (`unparsed-backtick`) stands
 * whatever this finds; it only adds the targets of what runs.
 */
export function backtickScripts(text: string): string[] | null {
  const scripts: string[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (text[i] !== '`') continue;
    let close = i + 1;
    while (close < text.length && text[close] !== '`') close += text[close] === '\\' ? 2 : 1;
    if (close >= text.length) return null;
    scripts.push(text.slice(i + 1, close).replace(/\\([\\`$])/g, '$1'));
    i = close;
  }
  return scripts;
}

/**
 * Where bash runs code hidden in text: it evaluates array subscripts (and so
 * `$(...)` in them) when a value is used arithmetically (`$((x))`, `((x))`,
 * `[[ x -eq 0 ]]`, `let`), as a name (`declare`, `read`, `test -v`), through
 * indirection (`${!x}`) and prompt expansion (`${x@P}`), and a backtick
 * substitution the parser read as text (inside `${x:-...}`). A single-quoted
 * string is inert to the parser but not to these. Fail closed: why the tree
 * holds such a place, or null. Iterative and bounded by the tree's size.
 */
export function evaluatedCode(root: SyntaxNode, source: string): string | null {
  const stack: SyntaxNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const text = () => source.slice(node.startIndex, node.endIndex);
    switch (node.type) {
      case 'raw_string':
        if (handedToPowerShell(node, source)) continue;
        if (/\$\(|`|\$\{/.test(text())) return SHELL_REASONS['quoted-substitution'];
        continue;
      case 'ansi_c_string':
        // $'...' can spell `$(` with escapes (\x24, \044, \u0024).
        if (/\$\(|`|\$\{|\\[xuU0-7]/.test(text().slice(1))) return SHELL_REASONS['ansi-c-substitution'];
        continue;
      case 'string':
      case 'word':
        // An escaped `\$(` (or `\${`, `\``) is a literal `$(` in the value: inert here, run where bash evaluates the value.
        if (/\\\$\\?[({]|\$\\[({]|\\`/.test(text())) return SHELL_REASONS['escaped-substitution'];
        break;
      case 'c_style_for_statement': {
        // The loop's own counters (assigned in its first part) are numbers; any other name, or a `$`, may hold a subscript.
        const header = /^for\s*\(\(([\s\S]*?)\)\)/.exec(text())?.[1] ?? text();
        const counters = new Set([...(header.split(';')[0] ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*=/g)].map((m) => m[1]!));
        const names = [...header.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)].map((m) => m[0]);
        if (header.includes('$') || names.some((name) => !counters.has(name))) {
          return SHELL_REASONS['arithmetic-for'];
        }
        break;
      }
      case 'subscript': {
        const index = node.childForFieldName('index');
        if (index !== null && !/^\s*(\d+|@|\*)\s*$/.test(source.slice(index.startIndex, index.endIndex))) {
          return SHELL_REASONS['array-subscript'];
        }
        break;
      }
      case 'declaration_command':
        if (/\s-[A-Za-z]*i/.test(text()) && /=[^\s]*[A-Za-z_$`]/.test(text())) return SHELL_REASONS['integer-declaration'];
        break;
      case 'expansion': {
        const t = text();
        if (t.startsWith('${!') || /@P\}$/.test(t)) return SHELL_REASONS['indirect-expansion'];
        // A substring `${x:offset:length}` evaluates its offset and length arithmetically (not `${x:-...}` and the like).
        const substring = /^\$\{#?[A-Za-z_][A-Za-z0-9_]*:(?![-=?+])([\s\S]*)\}$/.exec(t);
        if (substring !== null && /[$A-Za-z_]/.test(substring[1]!)) return SHELL_REASONS['substring-expansion'];
        break;
      }
      case 'arithmetic_expansion':
      case 'compound_statement':
      case 'test_command': {
        const named = node.type === 'test_command' ? testOperandProblem(node, source) : null;
        if (named !== null) return named;
        const t = text();
        const arithmetic =
          node.type === 'arithmetic_expansion' ||
          (node.type === 'compound_statement' && t.startsWith('((')) ||
          (node.type === 'test_command' && /\s-(eq|ne|lt|le|gt|ge)\s/.test(t));
        if (arithmetic && /\$|[A-Za-z_]/.test(t.replace(/^\$?\(\(|\)\)$|^\[\[|\]\]$|\s-(eq|ne|lt|le|gt|ge)\s/g, ' '))) {
          return SHELL_REASONS['arithmetic-context'];
        }
        break;
      }
      case 'command': {
        const name = node.childForFieldName('name');
        if (
          name !== null &&
          source.slice(name.startIndex, name.endIndex) === 'let' &&
          /\$|[A-Za-z_]\s*[-+*/%]?=?\s*[A-Za-z_]/.test(text().slice(3))
        ) {
          return SHELL_REASONS.let;
        }
        break;
      }
    }
    // A backtick the parser left in a leaf's text (`${x:-`cmd`}`: tree-sitter-bash reads it as a word) is a substitution bash runs.
    if (node.childCount === 0 && !INERT_LEAVES.has(node.type) && text().includes('`')) return SHELL_REASONS['unparsed-backtick'];
    for (let i = node.childCount - 1; i >= 0; i--) {
      const child = node.child(i);
      if (child !== null) stack.push(child);
    }
  }
  return null;
}
