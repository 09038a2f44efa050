/**
 * No tree with an ERROR or MISSING node is ever a read (DESIGN.md §5.5):
 * malformed commands, checked against the tree tree-sitter-bash gives them,
 * and a property over random shell-like text.
 */
import { createRequire } from 'node:module';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Language, Parser, type Node as SyntaxNode } from 'web-tree-sitter';
import { classifyShellCommand } from '../../../src/classify/shell/index.js';

await Parser.init();
const parser = new Parser();
parser.setLanguage(await Language.load(createRequire(import.meta.url).resolve('tree-sitter-bash/tree-sitter-bash.wasm')));

/** Whether tree-sitter-bash's tree of a script holds an ERROR or MISSING node anywhere. */
function hasErrorOrMissing(script: string): boolean {
  const tree = parser.parse(script);
  if (tree === null) return true;
  try {
    const stack: SyntaxNode[] = [tree.rootNode];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.isError || node.isMissing || node.type === 'ERROR') return true;
      for (const child of node.children) if (child !== null) stack.push(child);
    }
    return false;
  } finally {
    tree.delete();
  }
}

const MALFORMED = [
  'if true; then echo',
  'echo $(ls',
  '(ls',
  'ls &&',
  'for x in a; do echo',
  'case x in a) ls',
  '[[ -f x',
  'echo "a',
  'echo ${x',
  '{ ls',
  'cat <<EOF',
  'f() {',
  'echo `ls',
  'x=( a b',
  'ls ) ; rm -rf /',
  'cat <<A <<B\na\nA\nb\nB',
  '[ "$a" "$b" ]',
];

describe('no ERROR or MISSING node is a read', () => {
  it.each(MALFORMED)('%j: the tree has an ERROR or MISSING node, and it is a write', (script) => {
    expect(hasErrorOrMissing(script)).toBe(true);
    const result = classifyShellCommand(script);
    expect({ kind: result.kind, reason: result.reason }).toEqual({ kind: 'write', reason: 'shell: the command does not parse' });
  });

  it('inside bash -c too', () => {
    expect(classifyShellCommand(['bash', '-c', 'echo "a']).kind).toBe('write');
    expect(classifyShellCommand(`bash -c 'ls &&'`).kind).toBe('write');
  });

  it('a read never comes from a tree with an ERROR or MISSING node (random shell-like text)', () => {
    const token = fc.constantFrom(
      'ls',
      'cat',
      'echo',
      'x',
      '"',
      "'",
      '`',
      '$(',
      ')',
      '(',
      '{',
      '}',
      '${',
      '[[',
      ']]',
      '[',
      ']',
      ';',
      '&&',
      '||',
      '|',
      '<<EOF',
      '<<-E',
      '\nEOF',
      '\n',
      '\t',
      ' ',
      'if',
      'then',
      'fi',
      'do',
      'done',
      'case',
      'esac',
      '$x',
      '=',
      '\\',
      '#',
      '>',
      '<',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 14 }), (tokens) => {
        const script = tokens.join(' ');
        if (classifyShellCommand(script).kind === 'read') expect(hasErrorOrMissing(script)).toBe(false);
      }),
      { numRuns: 600 },
    );
  });
});
