/**
 * What the judge knows of tree-sitter-bash's syntax tree: the node types
 * that are statements and redirections, and a node's children read with
 * their field names in one pass. Shared by the files that walk the tree.
 */
import type { Node as SyntaxNode } from 'web-tree-sitter';

/** Node types judged as statements (`judgeStatement`); anything else is walked for the commands inside it. */
export const STATEMENT_TYPES = new Set([
  'c_style_for_statement',
  'case_statement',
  'command',
  'compound_statement',
  'declaration_command',
  'for_statement',
  'function_definition',
  'if_statement',
  'list',
  'negated_command',
  'pipeline',
  'redirected_statement',
  'subshell',
  'test_command',
  'unset_command',
  'variable_assignment',
  'variable_assignments',
  'while_statement',
]);

/** Node types of redirections (`judgeRedirect`). */
export const REDIRECT_TYPES = new Set(['file_redirect', 'heredoc_redirect', 'herestring_redirect']);

/**
 * A node's children with their field names, in one pass (`child(i)` and
 * `fieldNameForChild(i)` each walk the children from the first).
 */
export function fieldedChildren(node: SyntaxNode): { child: SyntaxNode; field: string | null }[] {
  const out: { child: SyntaxNode; field: string | null }[] = [];
  if (node.childCount <= 32) {
    // few children: indexing is cheaper than a cursor
    const children = node.children;
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child != null) out.push({ child, field: node.fieldNameForChild(i) });
    }
    return out;
  }
  const cursor = node.walk();
  try {
    if (cursor.gotoFirstChild()) {
      do out.push({ child: cursor.currentNode, field: cursor.currentFieldName });
      while (cursor.gotoNextSibling());
    }
  } finally {
    cursor.delete();
  }
  return out;
}
